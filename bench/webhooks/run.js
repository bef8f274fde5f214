'use strict';
// Webhook deliveries from the domain event's append (in a producer's event store) to a receiver
// that verifies each signature: relay -> bus -> notifications consumer -> scheduler -> signed
// POST, with the product's defaults. Two phases: events at a fixed rate (open loop: latency)
// and a burst appended at once (how fast it drains). Prints one JSON object; see README.md.
const { createInfrastructure, runService } = require('@billing/runtime');
const { CHECKOUT_PUBLIC_EVENTS, CheckoutSessionCompletedData, newId } = require('@billing/contracts');
const { signInternalCall } = require('@billing/signing');
const { notificationsService } = require('@billing/notifications');
const { positiveSetting } = require('../settings');
const { startReceiver } = require('../webhook-receiver');
const {
  benchTopicPrefix,
  internalSecret,
  machine,
  percentiles,
  pollUntil,
  randomName: random,
  runBenchmark,
  serviceLogger: logger,
} = require('../platform');

const readParameters = () => ({
  endpoints: positiveSetting('endpoints', 'BENCH_ENDPOINTS', 2),
  rate_per_s: positiveSetting('rate', 'BENCH_RATE', 100),
  rate_s: positiveSetting('rate-duration', 'BENCH_RATE_DURATION', 10),
  burst_events: positiveSetting('events', 'BENCH_EVENTS', 2000),
  burst_concurrency: positiveSetting('concurrency', 'BENCH_CONCURRENCY', 16),
  backlog_events: positiveSetting('backlog', 'BENCH_BACKLOG_EVENTS', 2000),
  warmup_events: positiveSetting('warmup', 'BENCH_WARMUP', 5),
});

const round = (n, digits = 3) => Number(n.toFixed(digits));

/** A stand-in for checkout: its event store and relay publish `checkout.completed` on the bus. */
const producer = { name: 'checkout', defaultPort: 0, publicEvents: CHECKOUT_PUBLIC_EVENTS };

/** A completed payment as checkout records it, checked against the event's contract schema. */
function completedPayment(organization) {
  const now = new Date().toISOString();
  const ids = {
    session: newId('checkoutSession'),
    order: newId('order'),
    customer: newId('customer'),
    paymentIntent: newId('paymentIntent'),
  };
  const email = `${ids.session}@bench.example`;
  const object = {
    object: 'checkout.session',
    id: ids.session,
    status: 'COMPLETE',
    mode: 'PAYMENT',
    customer_id: ids.customer,
    customer_email: email,
    customer_name: 'Bench Buyer',
    external_customer_id: null,
    order_id: ids.order,
    subscription_id: null,
    payment_intent_id: ids.paymentIntent,
    setup_intent_id: null,
    amount_subtotal: 299,
    amount_total: 299,
    currency: 'TWD',
    discount: null,
    product: { id: 'prod_bench', name: 'Bench' },
    metadata: { ref: 'bench' },
    expires_at: now,
    created_at: now,
    completed_at: now,
    livemode: false,
  };
  return CheckoutSessionCompletedData.parse({
    session_id: ids.session,
    order_id: ids.order,
    customer_id: ids.customer,
    customer_email: email,
    external_customer_id: null,
    product_id: 'prod_bench',
    amount_subtotal: 299,
    amount_total: 299,
    promotion_code_id: null,
    redemption_id: null,
    discount_amount: 0,
    metadata: { ref: 'bench' },
    completed_at: now,
    organization,
    environment: 'SANDBOX',
    customer_name: 'Bench Buyer',
    mode: 'PAYMENT',
    currency: 'TWD',
    payment_intent_id: ids.paymentIntent,
    setup_intent_id: null,
    object,
    payment_method: { id: 'pm_bench', brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2034 },
  });
}

/** Appends one completed payment; `dueAt` is when it was meant to be appended (default now). */
async function appendCompleted(store, organization, dueAt = performance.now()) {
  const data = completedPayment(organization);
  await store.append(`checkout_session-${data.session_id}`, [{ type: 'CheckoutSessionCompleted', data }], {
    expectedVersion: 0,
    organization,
    environment: 'SANDBOX',
    occurredAt: new Date(),
  });
  return { id: data.session_id, dueAt };
}

/** Receiver arrival minus the event's due time, for every (event, endpoint). */
function latencies(receiver, appended, endpoints) {
  const values = [];
  for (const { id, dueAt } of appended) {
    for (let i = 0; i < endpoints; i++) values.push(receiver.arrivals.get(`/hook-${i} ${id}`) - dueAt);
  }
  return values;
}

/** `rate` appends a second for `seconds`, each started when due whether or not earlier ones finished. */
function appendAtRate(store, organization, rate, seconds) {
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const pending = [];
  const lags = [];
  return new Promise((resolve, reject) => {
    let next = 0;
    const tick = () => {
      const now = performance.now();
      while (next < total && started + (next * 1000) / rate <= now) {
        const dueAt = started + (next++ * 1000) / rate;
        lags.push(now - dueAt);
        pending.push(appendCompleted(store, organization, dueAt));
      }
      if (next < total) setTimeout(tick, Math.max(0, started + (next * 1000) / rate - performance.now()));
      else Promise.all(pending).then((appended) => resolve({ appended, lags }), reject);
    };
    tick();
  });
}

async function createEndpoints(notifications, receiver, organization, count) {
  for (let i = 0; i < count; i++) {
    const path = '/admin/webhook_endpoints';
    const body = JSON.stringify({
      environment: 'SANDBOX',
      url: receiver.url(`/hook-${i}`),
      events: ['checkout.completed'],
    });
    const response = await fetch(`${notifications.url}${path}`, {
      method: 'POST',
      // As the gateway's admin API sends it: the organization and the body, signed with the internal secret.
      headers: {
        'content-type': 'application/json',
        ...signInternalCall(internalSecret, { scope: 'admin', method: 'POST', path, identity: { organization }, body }),
      },
      body,
    });
    if (response.status !== 201) throw new Error(`endpoint not created: ${await response.text()}`);
    receiver.secrets.set(`/hook-${i}`, (await response.json()).secret);
  }
}

/** Open loop at the fixed rate, then wait for every delivery. */
async function fixedRatePhase(ctx) {
  const { store, organization, receiver, parameters: p } = ctx;
  receiver.arrivals.clear();
  const { appended, lags } = await appendAtRate(store, organization, p.rate_per_s, p.rate_s);
  await receiver.waitFor(appended.length * p.endpoints, 300_000);
  return {
    events: appended.length,
    deliveries: appended.length * p.endpoints,
    latency_ms: percentiles(latencies(receiver, appended, p.endpoints)),
    append_lag_ms: percentiles(lags),
    // Every append started within one interval (or 50 ms) of its due time: the rate was offered.
    rate_kept: percentiles(lags).p99 <= Math.max(50, 1000 / p.rate_per_s),
  };
}

/** `count` events appended as fast as the store takes them (`burst_concurrency` appends in flight). */
async function appendBurst(store, organization, count, concurrency) {
  const appended = [];
  let next = 0;
  const workers = Array.from({ length: concurrency }, async () => {
    while (next < count) {
      next++;
      appended.push(await appendCompleted(store, organization));
    }
  });
  await Promise.all(workers);
  return appended;
}

/** Every event appended at once, then wait for every delivery. */
async function burstPhase(ctx) {
  const { store, organization, receiver, parameters: p } = ctx;
  receiver.arrivals.clear();
  const started = performance.now();
  const appended = await appendBurst(store, organization, p.burst_events, p.burst_concurrency);
  const appendedAfter = performance.now() - started;
  const expected = p.burst_events * p.endpoints;
  await receiver.waitFor(expected, 600_000);
  const seconds = (Math.max(...receiver.arrivals.values()) - started) / 1000;
  return {
    events: p.burst_events,
    deliveries: expected,
    appended_in_s: round(appendedAfter / 1000),
    drained_in_s: round(seconds),
    deliveries_per_s: round(expected / seconds, 1),
    latency_ms: percentiles(latencies(receiver, appended, p.endpoints)),
  };
}

/** Resolves once the producer's relay has published every event its store holds. */
async function relayed(infrastructure, schema) {
  const behind = async () =>
    (
      await infrastructure.database.query(
        `SELECT count(*)::int AS n FROM "${schema}".events e, "${schema}".checkpoints c
         WHERE c.name LIKE 'relay:%' AND (e.transaction_id, e.global_position) > (c.transaction_id, c.global_position)`,
      )
    ).rows[0].n;
  await pollUntil(async () => (await behind()) === 0, 'the relay did not publish the backlog', { everyMs: 50 });
}

/**
 * The scheduler's own ceiling, which the burst cannot show (the producer's appends share the
 * process and the pool): notifications is stopped, `backlog_events` are appended and published,
 * and notifications starts again on the same schema and consumer group. The rate runs from the
 * first delivery to the last, so the consumer group's join is reported, not counted.
 */
async function backlogPhase(ctx) {
  const { store, organization, receiver, parameters: p } = ctx;
  await ctx.notifications.stop();
  receiver.arrivals.clear();
  const appendStarted = performance.now();
  await appendBurst(store, organization, p.backlog_events, p.burst_concurrency);
  await relayed(ctx.infrastructure, ctx.producerSchema);
  const published = performance.now();
  const expected = p.backlog_events * p.endpoints;
  const scheduled = deliveriesScheduled(ctx.infrastructure, ctx.notificationsSchema, expected);
  const cpuBefore = process.cpuUsage();
  await ctx.notifications.start();
  const restarted = performance.now();
  await receiver.waitFor(expected, 600_000);
  const cpu = process.cpuUsage(cpuBefore);
  const allScheduledAt = await scheduled;

  const arrivals = [...receiver.arrivals.values()];
  const first = Math.min(...arrivals);
  const last = Math.max(...arrivals);
  const afterScheduled = arrivals.filter((at) => at > allScheduledAt).length;
  return {
    events: p.backlog_events,
    deliveries: expected,
    appended_and_published_in_s: round((published - appendStarted) / 1000),
    restart_in_s: round((restarted - published) / 1000),
    first_delivery_after_restart_s: round((first - restarted) / 1000),
    drained_in_s: round((last - first) / 1000),
    // This process's CPU from the restart to the last delivery (notifications and the receiver).
    process_cpu_s: round((cpu.user + cpu.system) / 1e6),
    deliveries_per_s: round(expected / ((last - first) / 1000), 1),
    // The consumer turning the events into deliveries, and the scheduler alone once it is done.
    all_scheduled_after_s: round((allScheduledAt - first) / 1000),
    after_all_scheduled: {
      deliveries: afterScheduled,
      deliveries_per_s: last > allScheduledAt ? round(afterScheduled / ((last - allScheduledAt) / 1000), 1) : null,
    },
  };
}

/** When (performance.now()) the notifications schema first holds `count` more deliveries than now. */
async function deliveriesScheduled(infrastructure, schema, count) {
  const total = async () =>
    (await infrastructure.database.query(`SELECT count(*)::int AS n FROM "${schema}".webhook_deliveries`)).rows[0].n;
  const target = (await total()) + count;
  return pollUntil(async () => (await total()) >= target, `notifications did not schedule ${count} deliveries`);
}

async function main() {
  const startedAt = new Date().toISOString();
  const parameters = readParameters();
  const env = {
    DATABASE_URL: process.env.DATABASE_URL,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS,
    KAFKA_TOPIC_PREFIX: benchTopicPrefix(),
    DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE,
  };
  const infrastructure = await createInfrastructure({ clientId: 'bench-webhooks', dataDir: 'memory', env });
  const receiver = await startReceiver();
  interrupt = (signal) => receiver.abort(signal);
  const schemas = [random('bench_checkout'), random('bench_notifications')];
  const services = [];
  try {
    const source = await runService(producer, infrastructure, {
      port: 0,
      schema: schemas[0],
      internalSecret,
      logger: logger('checkout'),
    });
    services.push(source);
    const notifications = {
      running: null,
      start: async () => {
        notifications.running = await runService(notificationsService, infrastructure, {
          port: 0,
          schema: schemas[1],
          internalSecret,
          logger: logger('notifications'),
          // The product's defaults (poll, concurrency), except that the receiver is on 127.0.0.1.
          config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
        });
      },
      stop: async () => {
        const running = notifications.running;
        notifications.running = null;
        await running?.shutdown();
      },
    };
    await notifications.start();
    services.unshift({ shutdown: () => notifications.stop() });

    const organization = newId('organization');
    await createEndpoints(notifications.running, receiver, organization, parameters.endpoints);
    const ctx = {
      store: source.context.store,
      organization,
      receiver,
      parameters,
      infrastructure,
      producerSchema: schemas[0],
      notificationsSchema: schemas[1],
      notifications,
    };

    const warmupStarted = performance.now();
    for (let i = 0; i < parameters.warmup_events; i++) await appendCompleted(ctx.store, organization);
    await receiver.waitFor(parameters.warmup_events * parameters.endpoints, 120_000);
    const warmup = { events: parameters.warmup_events, seconds: round((performance.now() - warmupStarted) / 1000) };

    const fixedRate = await fixedRatePhase(ctx);
    const burst = await burstPhase(ctx);
    const backlog = await backlogPhase(ctx);
    const badSignatures = receiver.rejected.bad_signature;
    return {
      benchmark: 'webhooks',
      started_at: startedAt,
      valid: badSignatures === 0,
      invalid_because:
        badSignatures > 0
          ? `${badSignatures} deliveries failed signature verification (${receiver.rejected.first})`
          : null,
      mode: infrastructure.mode,
      database: infrastructure.database.kind,
      bus: env.KAFKA_BROKERS ? 'kafka' : 'database',
      parameters,
      warmup,
      signatures_verified: receiver.verified(),
      fixed_rate: fixedRate,
      burst,
      backlog,
      machine: machine(),
    };
  } finally {
    for (const service of services) await service.shutdown().catch((e) => console.error('shutdown failed:', e));
    for (const schema of schemas) {
      await infrastructure.database.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    }
    await receiver.close();
    await infrastructure.close();
  }
}

let interrupt = () => undefined;
runBenchmark('webhooks', main, (signal) => interrupt(signal));
