'use strict';
// Renewals per second when N subscriptions fall due at one instant: a Sandbox test clock is
// advanced past their period end, billing opens each next invoice, charges the saved card
// through checkout and records it; the delay of each is measured from the advance (the due
// instant) to its `invoice.paid` on the bus, as webhooks and other consumers see it. Prints
// one JSON object to stdout; see README.md.
const os = require('node:os');
const http = require('node:http');
const { createInfrastructure, runService } = require('@billing/runtime');
const { CHECKOUT_TOPIC, identityHeaders, newId } = require('@billing/contracts');
const { signInternalCall } = require('@billing/signing');
const { checkoutService } = require('@billing/checkout');
const { billingService } = require('@billing/billing');
const { positiveSetting } = require('../settings');
const { paidCheckout } = require('../paid-checkout');
const {
  internalSecret,
  randomName: random,
  runBenchmark,
  serviceLogger: logger,
  stopPlatform,
} = require('../platform');

const readParameters = () => ({
  subscriptions: positiveSetting('subscriptions', 'BENCH_SUBSCRIPTIONS', 1000),
});

const round = (n, digits = 1) => Number(n.toFixed(digits));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Checkout (which charges saved cards) and billing, on loopback port 0, each in a fresh schema. */
async function startPlatform() {
  const env = {
    DATABASE_URL: process.env.DATABASE_URL,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS,
    DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE,
    // Topics of this run only: the new consumer groups read nothing older runs left.
    KAFKA_TOPIC_PREFIX: `${random('bench-renewals')}.`,
  };
  const infrastructure = await createInfrastructure({ clientId: 'bench-renewals', dataDir: 'memory', env });
  const platform = { infrastructure, services: [], schemas: [], schema: {} };
  const config = { BILLING_TRIAL_SWEEP_INTERVAL_MS: '3600000' };
  const start = async (definition) => {
    const schema = random(`bench_${definition.name}`);
    platform.schemas.push(schema);
    platform.schema[definition.name] = schema;
    const service = await runService(definition, infrastructure, {
      port: 0,
      schema,
      config,
      internalSecret,
      logger: logger(definition.name),
    });
    platform.services.unshift(service);
    config[`${definition.name.toUpperCase()}_SERVICE_URL`] = service.url;
    return service;
  };
  try {
    await start(checkoutService);
    platform.billing = await start(billingService);
  } catch (error) {
    await stopPlatform(platform, 'renewals');
    throw error;
  }
  return platform;
}

/**
 * A call to billing signed as the gateway signs a Sandbox Secret Key's request, on a connection
 * of its own (a kept-alive one may have been closed by the server during a long provisioning).
 */
function callBilling(platform, organization, method, path, body) {
  const identity = { organization, environment: 'SANDBOX', keyKind: 'secret', keyId: 'key_bench' };
  const payload = body === undefined ? undefined : JSON.stringify(body);
  // The signature covers the exact bytes sent.
  const signed = signInternalCall(internalSecret, { scope: 'key', method, path, identity, body: payload });
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${platform.billing.url}${path}`,
      {
        method,
        agent: false,
        headers: { ...identityHeaders(identity), ...signed, 'content-type': 'application/json' },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode >= 300) reject(new Error(`${method} ${path}: ${response.statusCode} ${text}`));
          else resolve(JSON.parse(text));
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

async function count(platform, sql, params) {
  const { rows } = await platform.infrastructure.database.query(sql, params);
  return rows[0].n;
}

/** Waits until `sql` counts `expected`, polled every 20 ms; returns the milliseconds waited. */
async function until(
  platform,
  what,
  sql,
  params,
  expected,
  timeoutMs = Number(process.env.BENCH_TIMEOUT_MS ?? 600_000),
) {
  const started = performance.now();
  while ((await count(platform, sql, params)) < expected) {
    if (interrupted) throw new Error(`interrupted by ${interrupted}`);
    if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
  return performance.now() - started;
}

/** Notes when each renewal's `invoice.paid` (an invoice no checkout paid) reaches the bus. */
async function watchInvoicePaid(platform, organization) {
  const arrivals = new Map();
  const subscription = await platform.infrastructure.bus.subscribe({
    groupId: random('bench-renewals-watch'),
    topics: ['billing.events'],
    handler: async ({ value }) => {
      if (value.type !== 'invoice.paid' || value.organization !== organization) return;
      const invoice = value.data.object;
      if (invoice.checkout_session_id === null && !arrivals.has(invoice.id))
        arrivals.set(invoice.id, performance.now());
    },
  });
  return { arrivals, stop: () => subscription.stop() };
}

function percentiles(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted.at(-1) ?? 0) };
}

let interrupted;
async function main() {
  const startedAt = new Date().toISOString();
  const params = readParameters();
  const n = params.subscriptions;
  const platform = await startPlatform();
  const billing = platform.schema.billing;
  let watcher;
  try {
    const organization = newId('organization');
    const clock = await callBilling(platform, organization, 'POST', '/v1/test_clocks', {
      frozen_time: '2026-01-31T10:00:00Z',
    });
    // N subscriptions bought at the clock's time, so that all their periods end on 28 February.
    for (let i = 0; i < n; i += 500) {
      const batch = Array.from({ length: Math.min(500, n - i) }, (_, j) => paidCheckout(organization, i + j, clock.id));
      await platform.infrastructure.bus.publish(
        CHECKOUT_TOPIC,
        batch.map((event) => ({ key: event.stream, value: event })),
      );
    }
    const provisionMs = await until(
      platform,
      'subscriptions',
      `SELECT count(*)::int AS n FROM "${billing}".subscriptions WHERE organization = $1`,
      [organization],
      n,
    );
    watcher = await watchInvoicePaid(platform, organization);
    if (interrupted) throw new Error(`interrupted by ${interrupted}`);

    // The due instant: the clock passes every period end at once.
    const cpuBefore = process.cpuUsage();
    const dueAt = performance.now();
    await callBilling(platform, organization, 'POST', `/v1/test_clocks/${clock.id}/advance`, {
      frozen_time: '2026-03-01T00:00:00Z',
    });
    let readyMs;
    while (!readyMs || watcher.arrivals.size < n) {
      if (interrupted) throw new Error(`interrupted by ${interrupted}`);
      if (performance.now() - dueAt > 600_000) throw new Error(`${watcher.arrivals.size} of ${n} renewals paid`);
      if (!readyMs) {
        const read = await callBilling(platform, organization, 'GET', `/v1/test_clocks/${clock.id}`);
        if (read.status === 'ready') readyMs = performance.now() - dueAt;
      }
      await sleep(20);
    }
    const cpu = process.cpuUsage(cpuBefore);
    const delays = [...watcher.arrivals.values()].map((at) => at - dueAt);
    const lastPaidMs = Math.max(...delays);

    // Exactly once: one renewal, one paid renewal invoice and one charge per subscription.
    const renewed = await count(
      platform,
      `SELECT count(DISTINCT data->>'subscription_id')::int AS n FROM "${billing}".events
       WHERE type = 'SubscriptionRenewed' AND organization = $1`,
      [organization],
    );
    const renewedEvents = await count(
      platform,
      `SELECT count(*)::int AS n FROM "${billing}".events WHERE type = 'SubscriptionRenewed' AND organization = $1`,
      [organization],
    );
    const charges = await count(
      platform,
      `SELECT count(*)::int AS n FROM "${platform.schema.checkout}".sandbox_charges WHERE idempotency_key LIKE 'in\\_%'`,
      [],
    );
    const valid = renewed === n && renewedEvents === n && charges === n && watcher.arrivals.size === n;
    return {
      benchmark: 'renewals',
      started_at: startedAt,
      valid,
      mode: process.env.DATABASE_URL || process.env.KAFKA_BROKERS ? 'distributed' : 'embedded',
      database: platform.infrastructure.database.kind,
      bus: platform.infrastructure.bus.constructor.name,
      parameters: params,
      renewals: watcher.arrivals.size,
      renewals_per_s: round(n / (lastPaidMs / 1000)),
      due_to_invoice_paid_ms: percentiles(delays),
      clock_ready_after_ms: round(readyMs),
      // CPU of this process (billing, checkout, their bus clients and the watcher) per renewal.
      node_cpu_ms_per_renewal: round((cpu.user + cpu.system) / 1000 / n, 2),
      last_invoice_paid_after_ms: round(lastPaidMs),
      checks: { subscriptions_renewed: renewed, renewed_events: renewedEvents, ledger_charges: charges },
      provisioning_ms: round(provisionMs),
      machine: { node: process.version, cpu_count: os.cpus().length, cpu_model: os.cpus()[0]?.model },
    };
  } finally {
    await watcher?.stop();
    await stopPlatform(platform, 'renewals');
  }
}

runBenchmark('renewals', main, (signal) => {
  interrupted = signal;
});
