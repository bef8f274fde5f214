'use strict';
// Checkouts per second through the gateway, the way buyers pay: create a session with the
// Secret Key, then pay it on the hosted page; closed loop (a fixed number of buyers) and open
// loop (buyers arriving at a fixed rate). Reports p50/p99 of both steps, each payment's signed
// `checkout.completed` webhook after it, and how long billing takes after the last payment to
// hold every subscription. Prints one JSON object to stdout; see README.md.
const { join } = require('node:path');
const { startFullPlatform } = require('../full-platform');
const { countSetting, positiveSetting } = require('../settings');
const { runFloor } = require('./floor');
const { countStatements, statementsByText } = require('../statements');
const { startReceiver } = require('../webhook-receiver');
const { serverCpuMs, serverCpuSpent } = require('../process-cpu');
const {
  adminPost,
  machine,
  percentiles,
  pollUntil,
  randomName: random,
  loadGenerator,
  runBenchmark,
  stopPlatform,
} = require('../platform');

const readParameters = () => ({
  checkouts: positiveSetting('checkouts', 'BENCH_CHECKOUTS', 500),
  concurrency: positiveSetting('concurrency', 'BENCH_CONCURRENCY', 8),
  rate_per_s: positiveSetting('rate', 'BENCH_RATE', 100),
  rate_s: positiveSetting('rate-duration', 'BENCH_RATE_DURATION', 10),
  warmup_checkouts: positiveSetting('warmup', 'BENCH_WARMUP', 5),
  // Seconds of the pgbench floor (floor.js) before and after the closed loop; 0: none.
  floor_s: countSetting('floor', 'BENCH_FLOOR', 0),
});

const round = (n, digits = 1) => Number(n.toFixed(digits));

/** The whole platform, every statement its services send counted. */
async function startPlatform() {
  const platform = await startFullPlatform('checkout', {
    observe: (started) => {
      started.statements = countStatements(started.infrastructure.database);
    },
  });
  platform.billingSchema = platform.schema.billing;
  return platform;
}

/** An organization with one monthly Sandbox plan, and a webhook endpoint for `checkout.completed`. */
async function seed(platform, receiver) {
  const organization = await adminPost(platform, '/organizations', { name: 'Bench' });
  const plan = { environment: 'SANDBOX', name: 'Pro', type: 'SUBSCRIPTION', interval: 'month', price: 299 };
  const product = await adminPost(platform, `/organizations/${organization.id}/products`, plan);
  const endpoint = await adminPost(platform, `/organizations/${organization.id}/webhook_endpoints`, {
    environment: 'SANDBOX',
    url: receiver.url('/hook'),
    events: ['checkout.completed'],
  });
  receiver.secrets.set('/hook', endpoint.secret);
  return { secretKey: organization.api_keys.sandbox.secret_key, productId: product.id };
}

const buyers = loadGenerator(join(__dirname, 'buyers.js'));

async function subscriptionsOf(platform) {
  const { rows } = await platform.statements.uncounted(
    `SELECT count(*)::int AS n FROM "${platform.billingSchema}".subscriptions`,
  );
  return rows[0].n;
}

/** Milliseconds until billing holds `count` subscriptions, polled every 20 ms. */
async function provisioned(platform, count) {
  const started = performance.now();
  const done = async () => (await subscriptionsOf(platform)) >= count;
  return (await pollUntil(done, `billing did not provision ${count} subscriptions`)) - started;
}

/** Waits for every paid session's webhook; the time from each payment's answer to its webhook. */
async function webhookLatencies(receiver, paidAt) {
  const sessions = Object.keys(paidAt);
  await pollUntil(
    () => sessions.every((id) => receiver.epochArrivals.has(id)),
    'some checkout.completed webhooks never came',
  );
  return percentiles(sessions.map((id) => receiver.epochArrivals.get(id) - paidAt[id]));
}

/**
 * Whether the open-loop generator offered the rate: every buyer started within one interval (or
 * 50 ms) of its due time. Latencies count from the due time either way; a generator that fell
 * behind offered less load than asked.
 */
function rateKept(lags, rate) {
  const sendLag = percentiles(lags);
  return { send_lag_ms: sendLag, rate_kept: sendLag.p99 <= Math.max(50, 1000 / rate) };
}

/** Milliseconds of CPU per paid checkout of each process, and their sum (`all`). */
function cpuByProcess(spentMs, paidCount) {
  const per = Object.fromEntries(
    Object.entries(spentMs)
      .filter(([, ms]) => ms !== null)
      .map(([name, ms]) => [name, round(ms / Math.max(1, paidCount))]),
  );
  return { ...per, all: round(Object.values(per).reduce((sum, ms) => sum + ms, 0)) };
}

/**
 * The floor's runs (before and after the closed loop) beside the closed loop: the project's
 * throughput over the floor's, and the floor's CPU per paid checkout over the project's.
 */
function floorSideBySide(runs, closedLoop) {
  const mean = (f) => round(runs.reduce((sum, run) => sum + f(run), 0) / runs.length, 2);
  const checkoutsPerS = mean((run) => run.checkouts_per_s);
  const cpuMs = mean((run) => run.cpu_ms_per_checkout.all);
  return {
    runs,
    checkouts_per_s: checkoutsPerS,
    cpu_ms_per_checkout: cpuMs,
    project_throughput_over_floor: round(closedLoop.checkouts_per_s / checkoutsPerS, 3),
    floor_cpu_over_project_cpu: round(cpuMs / closedLoop.per_paid_checkout.cpu_ms_by_process.all, 3),
  };
}

/** One phase of buyers; then billing's lag and the webhooks. */
async function phase(platform, receiver, settings, provisionedBefore) {
  const before = { ...platform.statements, byText: platform.statements.byText && new Map(platform.statements.byText) };
  const cpuBefore = process.cpuUsage();
  const serversBefore = serverCpuMs();
  const timings = await buyers.run({ ...settings, prefix: random('buyer') });
  const paidCount = timings.pay.length;
  const lagMs = await provisioned(platform, provisionedBefore + paidCount);
  const cpu = process.cpuUsage(cpuBefore);
  const servers = serverCpuSpent(serversBefore, serverCpuMs());
  return {
    checkouts_paid: paidCount,
    errors: timings.errors.length,
    first_error: timings.errors[0] ?? null,
    duration_s: round(timings.duration_ms / 1000, 3),
    checkouts_per_s: round(paidCount / (timings.duration_ms / 1000)),
    create_session_ms: percentiles(timings.create),
    pay_ms: percentiles(timings.pay),
    // Both steps are writes: at --rate=50 this is issue 17's "100 writes/s sustained" row.
    write_ms: percentiles([...timings.create, ...timings.pay]),
    ...(settings.rate ? rateKept(timings.send_lag, settings.rate) : {}),
    paid_to_webhook_ms: await webhookLatencies(receiver, timings.paid_at),
    subscriptions_complete_after_last_payment_ms: round(lagMs),
    // From the first buyer until billing and the webhook endpoint had every payment; background
    // work (relays, consumers, projections, polls) included, as it is part of what a checkout costs.
    per_paid_checkout: {
      sql_statements: round((platform.statements.statements - before.statements) / Math.max(1, paidCount)),
      sql_round_trips: round((platform.statements.roundTrips - before.roundTrips) / Math.max(1, paidCount)),
      sql_transactions: round((platform.statements.transactions - before.transactions) / Math.max(1, paidCount)),
      // CPU of the services' process (user + system), refusals included: comparable across runs
      // on a shared machine, where throughput is not.
      cpu_ms: round((cpu.user + cpu.system) / 1000 / Math.max(1, paidCount)),
      // Every process a paid checkout costs: PostgreSQL's and Kafka's whole servers (so a quiet
      // machine only), and the buyers' process.
      cpu_ms_by_process: cpuByProcess(
        { services: (cpu.user + cpu.system) / 1000, ...servers, load_generator: timings.cpu_ms },
        paidCount,
      ),
      ...(before.byText && { by_text: statementsByText(before.byText, platform.statements.byText, paidCount) }),
    },
  };
}

async function main() {
  const startedAt = new Date().toISOString();
  const params = readParameters();
  const receiver = await startReceiver();
  const platform = await startPlatform();
  try {
    const { secretKey, productId } = await seed(platform, receiver);
    const settings = { gateway: platform.gateway.url, secretKey, productId };
    // Warm-up: a few buyers end to end, reported and not counted.
    const warmupStarted = performance.now();
    const warmup = await buyers.run({
      ...settings,
      checkouts: params.warmup_checkouts,
      concurrency: 1,
      prefix: random('warmup'),
    });
    if (warmup.errors.length > 0) throw new Error(`warm-up failed: ${warmup.errors[0]}`);
    await provisioned(platform, params.warmup_checkouts);
    await webhookLatencies(receiver, warmup.paid_at);
    const warmupSeconds = round((performance.now() - warmupStarted) / 1000, 3);

    const floorRun = () =>
      runFloor(platform.infrastructure.database, { clients: params.concurrency, seconds: params.floor_s });
    const floorBefore = params.floor_s > 0 ? await floorRun() : null;
    const closedLoop = await phase(
      platform,
      receiver,
      { ...settings, checkouts: params.checkouts, concurrency: params.concurrency },
      params.warmup_checkouts,
    );
    const floor = floorBefore && floorSideBySide([floorBefore, await floorRun()], closedLoop);
    const openLoop = await phase(
      platform,
      receiver,
      { ...settings, checkouts: Math.round(params.rate_per_s * params.rate_s), rate: params.rate_per_s },
      params.warmup_checkouts + closedLoop.checkouts_paid,
    );
    const failed = closedLoop.errors + openLoop.errors;
    const badSignatures = receiver.rejected.bad_signature;
    return {
      benchmark: 'checkout',
      started_at: startedAt,
      valid: failed === 0 && badSignatures === 0,
      invalid_because:
        failed > 0
          ? `${failed} checkouts failed`
          : badSignatures > 0
            ? `${badSignatures} webhooks failed signature verification`
            : null,
      mode: process.env.DATABASE_URL || process.env.KAFKA_BROKERS ? 'distributed' : 'embedded',
      database: platform.infrastructure.database.kind,
      bus: process.env.KAFKA_BROKERS ? 'kafka' : 'database',
      parameters: params,
      warmup: { checkouts: params.warmup_checkouts, seconds: warmupSeconds },
      closed_loop: closedLoop,
      ...(floor && { floor }),
      open_loop: openLoop,
      webhook_signatures_verified: receiver.verified(),
      machine: machine(),
    };
  } finally {
    await stopPlatform(platform, 'checkout');
    await receiver.close();
  }
}

// The pending run fails, and main's finally shuts everything down.
runBenchmark('checkout', main, buyers.interrupt);
