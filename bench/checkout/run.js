'use strict';
// Checkouts per second through the gateway, the way buyers pay: create a session with the
// Secret Key, then pay it on the hosted page. Reports p50/p99 of both steps, and how long
// billing takes after the last payment to hold every subscription. Prints one JSON object to
// stdout; see README.md.
const os = require('node:os');
const { execFile } = require('node:child_process');
const { join } = require('node:path');
const { createInfrastructure, runService } = require('@billing/runtime');
const { catalogService } = require('@billing/catalog');
const { promotionsService } = require('@billing/promotions');
const { checkoutService } = require('@billing/checkout');
const { billingService } = require('@billing/billing');
const { createGatewayService } = require('@billing/gateway');
const { positiveSetting } = require('../settings');
const {
  adminPost,
  internalSecret,
  randomName: random,
  runBenchmark,
  serviceLogger: logger,
  stopPlatform,
} = require('../platform');

const readParameters = () => ({
  checkouts: positiveSetting('checkouts', 'BENCH_CHECKOUTS', 500),
  concurrency: positiveSetting('concurrency', 'BENCH_CONCURRENCY', 8),
});

const round = (n, digits = 1) => Number(n.toFixed(digits));

/** Every service a paid checkout passes through, on loopback port 0, each in a schema of its own. */
async function startPlatform() {
  const env = {
    DATABASE_URL: process.env.DATABASE_URL,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS,
    DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE,
  };
  const infrastructure = await createInfrastructure({ clientId: 'bench-checkout', dataDir: 'memory', env });
  const platform = { infrastructure, services: [], schemas: [], billingSchema: null, adminToken: random('adm') };
  // One config object, filled in as services start: checkout reads the others' addresses at first use.
  const config = { ADMIN_TOKEN: platform.adminToken, RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000000' };
  const start = async (definition) => {
    const schema = random(`bench_${definition.name}`);
    platform.schemas.push(schema);
    if (definition.name === 'billing') platform.billingSchema = schema;
    const service = await runService(definition, infrastructure, {
      port: 0,
      schema,
      config,
      internalSecret,
      logger: logger(definition.name),
    });
    platform.services.unshift(service); // stopped in reverse order: gateway first
    config[`${definition.name.toUpperCase()}_SERVICE_URL`] = service.url;
    return service;
  };
  try {
    for (const definition of [catalogService, promotionsService, checkoutService, billingService])
      await start(definition);
    platform.gateway = await start(createGatewayService());
    config.CHECKOUT_URL = `${platform.gateway.url}/checkout`;
  } catch (error) {
    await stopPlatform(platform, 'checkout');
    throw error;
  }
  return platform;
}

/** An organization with one monthly Sandbox plan. */
async function seed(platform) {
  const organization = await adminPost(platform, '/organizations', { name: 'Bench' });
  const plan = { environment: 'SANDBOX', name: 'Pro', type: 'SUBSCRIPTION', interval: 'month', price: 299 };
  const product = await adminPost(platform, `/organizations/${organization.id}/products`, plan);
  return { secretKey: organization.api_keys.sandbox.secret_key, productId: product.id };
}

let child;
let interrupted;
function runBuyers(settings) {
  if (interrupted) return Promise.reject(new Error(`interrupted by ${interrupted}`));
  const script = join(__dirname, 'buyers.js');
  return new Promise((resolve, reject) => {
    child = execFile(process.execPath, [script, JSON.stringify(settings)], { maxBuffer: 64 << 20 }, (error, stdout) => {
      child = undefined;
      if (error) reject(interrupted ? new Error(`interrupted by ${interrupted}`) : error);
      else resolve(JSON.parse(stdout));
    });
  });
}

async function subscriptionsOf(platform) {
  const { rows } = await platform.infrastructure.database.query(
    `SELECT count(*)::int AS n FROM "${platform.billingSchema}".subscriptions`,
  );
  return rows[0].n;
}

/** Milliseconds until billing holds `count` subscriptions, polled every 20 ms. */
async function provisioned(platform, count, timeoutMs = 300_000) {
  const started = performance.now();
  while ((await subscriptionsOf(platform)) < count) {
    if (performance.now() - started > timeoutMs) throw new Error(`billing did not provision ${count} subscriptions`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now() - started;
}

function percentiles(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted.at(-1) ?? 0) };
}

async function main() {
  const startedAt = new Date().toISOString();
  const params = readParameters();
  const platform = await startPlatform();
  try {
    const { secretKey, productId } = await seed(platform);
    const settings = { gateway: platform.gateway.url, secretKey, productId, concurrency: params.concurrency };
    // Warm-up: a few buyers end to end (with Kafka, the consumer groups join and catch up).
    const warmup = await runBuyers({ ...settings, checkouts: 5, prefix: random('warmup') });
    if (warmup.errors.length > 0) throw new Error(`warm-up failed: ${warmup.errors[0]}`);
    await provisioned(platform, 5);

    const timings = await runBuyers({ ...settings, checkouts: params.checkouts, prefix: random('buyer') });
    const paidCount = timings.pay.length;
    const lagMs = await provisioned(platform, 5 + paidCount);
    const valid = timings.errors.length === 0;
    return {
      benchmark: 'checkout',
      started_at: startedAt,
      valid,
      mode: process.env.DATABASE_URL || process.env.KAFKA_BROKERS ? 'distributed' : 'embedded',
      database: platform.infrastructure.database.kind,
      bus: process.env.KAFKA_BROKERS ? 'kafka' : 'database',
      parameters: params,
      checkouts_paid: paidCount,
      errors: timings.errors.length,
      first_error: timings.errors[0] ?? null,
      duration_s: round(timings.duration_ms / 1000, 3),
      checkouts_per_s: round(paidCount / (timings.duration_ms / 1000)),
      create_session_ms: percentiles(timings.create),
      pay_ms: percentiles(timings.pay),
      subscriptions_complete_after_last_payment_ms: round(lagMs),
      machine: { node: process.version, cpu_count: os.cpus().length, cpu_model: os.cpus()[0]?.model },
    };
  } finally {
    await stopPlatform(platform, 'checkout');
  }
}

runBenchmark('checkout', main, (signal) => {
  interrupted = signal;
  child?.kill(); // the pending run fails, and main's finally shuts everything down
});
