'use strict';
// Usage events accepted and stored per second through the gateway (issue 34: 10,000 a second
// through the batch API, event-to-balance p99 under 2 s): `POST /v1/usage_events` with batches
// of events on many customers, closed loop (throughput) then open loop (a fixed rate, latency).
// One event in `BENCH_CREDITS_EVERY` is on a meter that spends credits; the time from its
// report's due time to its spend being recorded is its event-to-balance time. Prints one JSON
// object to stdout; see README.md.
const { join } = require('node:path');
const { startFullPlatform } = require('../full-platform');
const { positiveSetting } = require('../settings');
const { countStatements } = require('../statements');
const { serverCpuMs, serverCpuSpent } = require('../process-cpu');
const { call, seedCustomers } = require('../customers');
const {
  loadGenerator,
  machine,
  percentiles,
  pollUntil,
  randomName: random,
  runBenchmark,
  stopPlatform,
} = require('../platform');

const readParameters = () => ({
  customers: positiveSetting('customers', 'BENCH_CUSTOMERS', 100),
  batch: positiveSetting('batch', 'BENCH_BATCH', 1000),
  requests: positiveSetting('requests', 'BENCH_REQUESTS', 100),
  concurrency: positiveSetting('concurrency', 'BENCH_CONCURRENCY', 4),
  rate_events_per_s: positiveSetting('rate', 'BENCH_RATE', 10_000),
  rate_s: positiveSetting('rate-duration', 'BENCH_RATE_DURATION', 10),
  credits_every: positiveSetting('credits-every', 'BENCH_CREDITS_EVERY', 10),
});

const round = (n, digits = 1) => Number(n.toFixed(digits));

const reporters = loadGenerator(join(__dirname, 'reporters.js'));

async function meters(platform, secretKey) {
  for (const meter of [
    { key: 'api_calls', name: 'API calls', aggregation: 'sum' },
    { key: 'tokens', name: 'Tokens', aggregation: 'sum', credits_per_unit: 1 },
  ]) {
    const created = await call(platform, 'POST', '/v1/meters', secretKey, meter);
    if (created.status !== 201) throw new Error(`meter: ${created.status} ${JSON.stringify(created.body)}`);
  }
}

/** The events of the phase (ids `<prefix>-<request>-<n>`) stored, and those whose credits are not yet spent. */
async function stored(platform, organization, prefix) {
  const { rows } = await platform.infrastructure.database.query(
    `SELECT count(*)::int AS stored,
            count(*) FILTER (WHERE credits_state IN ('pending', 'spending', 'single'))::int AS to_spend
     FROM "${platform.schema.billing}".usage_events WHERE organization = $1 AND id LIKE $2`,
    [organization, `${prefix}-%`],
  );
  return rows[0];
}

/**
 * Each spending event's time from its report's due time to its spend's record (epoch ms in
 * both: the spend's time is the service clock's, which is the wall clock here).
 */
async function eventToBalance(platform, organization, prefix, dueAt) {
  const schema = platform.schema.billing;
  const { rows } = await platform.infrastructure.database.query(
    `SELECT e.id, extract(epoch FROM k.spent_at) * 1000 AS spent_ms
     FROM "${schema}".usage_events e
     JOIN "${schema}".credit_spend_keys k ON k.customer_id = e.customer_id AND k.idempotency_key = e.spend_key
     WHERE e.organization = $1 AND e.id LIKE $2 AND e.credits_state = 'spent'`,
    [organization, `${prefix}-%`],
  );
  return rows.map((row) => Number(row.spent_ms) - dueAt[Number(row.id.split('-')[1])]);
}

async function phase(platform, seeded, settings) {
  const prefix = random('u').replace('_', '');
  const counts = platform.statements;
  const before = { ...counts };
  const cpuBefore = process.cpuUsage();
  const serversBefore = serverCpuMs();
  const timings = await reporters.run({ ...settings, prefix });
  const cpu = process.cpuUsage(cpuBefore);
  const servers = serverCpuSpent(serversBefore, serverCpuMs());
  const sent = timings.report.length * settings.batch;
  await pollUntil(async () => (await stored(platform, seeded.organization, prefix)).to_spend === 0, 'credits unspent', {
    everyMs: 200,
  });
  const { stored: inDatabase } = await stored(platform, seeded.organization, prefix);
  const balanceMs = await eventToBalance(platform, seeded.organization, prefix, timings.due_at);
  const perThousand = (ms) => round((ms * 1000) / Math.max(1, sent), 2);
  const sendLag = settings.rate ? percentiles(timings.send_lag) : null;
  return {
    requests: timings.report.length,
    events: sent,
    errors: timings.errors.length,
    first_error: timings.errors[0] ?? null,
    events_stored: inDatabase,
    duration_s: round(timings.duration_ms / 1000, 3),
    events_per_s: round(sent / (timings.duration_ms / 1000)),
    report_ms: percentiles(timings.report),
    event_to_balance_ms: percentiles(balanceMs),
    ...(sendLag && { send_lag_ms: sendLag, rate_kept: sendLag.p99 <= 50 }),
    per_1000_events: {
      sql_statements: perThousand(counts.statements - before.statements),
      cpu_ms_by_process: {
        services: perThousand((cpu.user + cpu.system) / 1000),
        ...Object.fromEntries(
          Object.entries(servers)
            .filter(([, ms]) => ms !== null)
            .map(([name, ms]) => [name, perThousand(ms)]),
        ),
        load_generator: perThousand(timings.cpu_ms),
      },
    },
  };
}

async function main() {
  const startedAt = new Date().toISOString();
  const params = readParameters();
  const platform = await startFullPlatform('usage', {
    observe: (started) => {
      started.statements = countStatements(started.infrastructure.database);
    },
  });
  try {
    const seedStarted = performance.now();
    const seeded = await seedCustomers(platform, params.customers, { grant: 1_000_000_000, prefix: 'user' });
    await meters(platform, seeded.secretKey);
    const seedSeconds = round((performance.now() - seedStarted) / 1000, 3);
    const settings = {
      gateway: platform.gateway.url,
      secretKey: seeded.secretKey,
      customers: seeded.customers,
      batch: params.batch,
      creditsEvery: params.credits_every,
    };
    const warmup = await reporters.run({ ...settings, requests: 10, concurrency: 2, prefix: 'warmup' });
    if (warmup.errors.length > 0) throw new Error(`warm-up failed: ${warmup.errors[0]}`);
    const closedLoop = await phase(platform, seeded, {
      ...settings,
      requests: params.requests,
      concurrency: params.concurrency,
    });
    const requestsPerS = params.rate_events_per_s / params.batch;
    const openLoop = await phase(platform, seeded, {
      ...settings,
      requests: Math.max(1, Math.round(requestsPerS * params.rate_s)),
      rate: requestsPerS,
    });
    const lost = [closedLoop, openLoop].reduce((n, p) => n + (p.events - p.events_stored), 0);
    const failed = closedLoop.errors + openLoop.errors;
    const problems = [failed > 0 && `${failed} reports failed`, lost !== 0 && `${lost} accepted events not stored`];
    return {
      benchmark: 'usage',
      started_at: startedAt,
      valid: failed === 0 && lost === 0,
      invalid_because: problems.filter(Boolean).join('; ') || null,
      mode: process.env.DATABASE_URL || process.env.KAFKA_BROKERS ? 'distributed' : 'embedded',
      database: platform.infrastructure.database.kind,
      bus: process.env.KAFKA_BROKERS ? 'kafka' : 'database',
      parameters: params,
      seed: { customers: seeded.customers.length, seconds: seedSeconds },
      closed_loop: closedLoop,
      open_loop: openLoop,
      machine: machine(),
    };
  } finally {
    await stopPlatform(platform, 'usage');
  }
}

// The pending run fails, and main's finally shuts everything down.
runBenchmark('usage', main, reporters.interrupt);
