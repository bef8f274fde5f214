'use strict';
// Webhook deliveries per second to a local receiver, and the latency from the domain event's
// append (in a producer's event store) to the receiver's 2xx: relay -> bus -> notifications
// consumer -> scheduler -> signed POST. Prints one JSON object to stdout; see README.md.
const os = require('node:os');
const http = require('node:http');
const { createInfrastructure, runService } = require('@billing/runtime');
const { CHECKOUT_PUBLIC_EVENTS, newId, signInternalCall } = require('@billing/contracts');
const { notificationsService } = require('@billing/notifications');
const { positiveSetting } = require('../settings');
const { internalSecret, randomName: random, serviceLogger: logger } = require('../platform');

const readParameters = () => ({
  events: positiveSetting('events', 'BENCH_EVENTS', 2000),
  endpoints: positiveSetting('endpoints', 'BENCH_ENDPOINTS', 2),
  append_concurrency: positiveSetting('concurrency', 'BENCH_CONCURRENCY', 16),
});

const round = (n, digits = 3) => Number(n.toFixed(digits));

/** Answers 200 and notes when each event (by its session id) arrived at each endpoint. */
async function startReceiver() {
  const arrivals = new Map();
  let onArrival = () => undefined;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const sessionId = JSON.parse(Buffer.concat(chunks).toString('utf8')).data.object.id;
      arrivals.set(`${req.url} ${sessionId}`, at);
      res.writeHead(200).end();
      onArrival();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (path) => `http://127.0.0.1:${server.address().port}${path}`,
    arrivals,
    waitFor: (count, timeoutMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${arrivals.size} of ${count} deliveries arrived`)), timeoutMs);
        onArrival = () => {
          if (arrivals.size >= count) {
            clearTimeout(timer);
            resolve();
          }
        };
        onArrival();
      }),
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

/** A stand-in for checkout: its event store and relay publish `checkout.completed` on the bus. */
const producer = { name: 'checkout', defaultPort: 0, publicEvents: CHECKOUT_PUBLIC_EVENTS };

function session(organization) {
  const now = new Date().toISOString();
  return {
    object: 'checkout.session',
    id: newId('checkoutSession'),
    status: 'COMPLETE',
    mode: 'PAYMENT',
    customer_email: 'buyer@example.com',
    customer_name: null,
    external_customer_id: null,
    order_id: newId('order'),
    subscription_id: null,
    payment_intent_id: newId('paymentIntent'),
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
    organization,
  };
}

async function appendCompleted(store, organization) {
  const object = session(organization);
  delete object.organization;
  const appendedAt = performance.now();
  await store.append(
    `checkout_session-${object.id}`,
    [{ type: 'CheckoutSessionCompleted', data: { session_id: object.id, object } }],
    { expectedVersion: 0, organization, environment: 'SANDBOX', occurredAt: new Date() },
  );
  return { id: object.id, appendedAt };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  const parameters = readParameters();
  const env = {
    DATABASE_URL: process.env.DATABASE_URL,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS,
    DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE ?? '20',
  };
  const infrastructure = await createInfrastructure({ clientId: 'bench-webhooks', dataDir: 'memory', env });
  const receiver = await startReceiver();
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
    const notifications = await runService(notificationsService, infrastructure, {
      port: 0,
      schema: schemas[1],
      internalSecret,
      logger: logger('notifications'),
      // The receiver is on 127.0.0.1: the embedded default's setting, made explicit.
      config: { WEBHOOK_POLL_MS: '100', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
    });
    services.unshift(notifications);

    const organization = newId('organization');
    for (let i = 0; i < parameters.endpoints; i++) {
      const response = await fetch(`${notifications.url}/admin/webhook_endpoints`, {
        method: 'POST',
        // As the gateway's admin API sends it: the organization, signed with the internal secret.
        headers: {
          'content-type': 'application/json',
          ...signInternalCall(internalSecret, {
            scope: 'admin',
            method: 'POST',
            path: '/admin/webhook_endpoints',
            identity: { organization },
          }),
        },
        body: JSON.stringify({
          environment: 'SANDBOX',
          url: receiver.url(`/hook-${i}`),
          events: ['checkout.completed'],
        }),
      });
      if (response.status !== 201) throw new Error(`endpoint not created: ${await response.text()}`);
    }

    // Warm-up: one event end to end (the consumer may first skip the topic's older messages).
    await appendCompleted(source.context.store, organization);
    await receiver.waitFor(parameters.endpoints, 120_000);
    receiver.arrivals.clear();

    const appended = [];
    const started = performance.now();
    let next = 0;
    const workers = Array.from({ length: parameters.append_concurrency }, async () => {
      while (next < parameters.events) {
        next++;
        appended.push(await appendCompleted(source.context.store, organization));
      }
    });
    await Promise.all(workers);
    const expected = parameters.events * parameters.endpoints;
    await receiver.waitFor(expected, 300_000);
    const finished = Math.max(...receiver.arrivals.values());

    const latencies = [];
    for (const { id, appendedAt } of appended) {
      for (let i = 0; i < parameters.endpoints; i++)
        latencies.push(receiver.arrivals.get(`/hook-${i} ${id}`) - appendedAt);
    }
    latencies.sort((a, b) => a - b);
    const seconds = (finished - started) / 1000;
    const result = {
      benchmark: 'webhooks',
      mode: infrastructure.mode,
      database: infrastructure.database.kind,
      bus: env.KAFKA_BROKERS ? 'kafka' : 'database',
      parameters,
      deliveries: latencies.length,
      duration_s: round(seconds),
      deliveries_per_s: round(latencies.length / seconds, 1),
      latency_ms: {
        p50: round(percentile(latencies, 50), 1),
        p99: round(percentile(latencies, 99), 1),
        max: round(latencies[latencies.length - 1], 1),
      },
      machine: { node: process.version, cpu_count: os.cpus().length, cpu_model: os.cpus()[0]?.model },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    for (const service of services) await service.shutdown().catch((e) => console.error('shutdown failed:', e));
    for (const schema of schemas) {
      await infrastructure.database.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    }
    await receiver.close();
    await infrastructure.close();
  }
}

main().catch((error) => {
  console.error('webhooks benchmark failed:', error);
  process.exitCode = 1;
});
