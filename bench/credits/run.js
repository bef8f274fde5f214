'use strict';
// Credit spends per second through the gateway (issue 34: 1,000 spends/s, p99 < 50 ms): many
// customers, each with a grant, and `POST /v1/customers/{id}/credits/spend` with the Secret Key,
// closed loop (a fixed number of spenders) then open loop (spends at a fixed rate). Reports
// spends/s, p50/p99, SQL statements per spend and CPU by process. Prints one JSON object to
// stdout; see README.md.
const { fork } = require('node:child_process');
const { join } = require('node:path');
const { startFullPlatform } = require('../full-platform');
const { countSetting, positiveSetting, setting } = require('../settings');
const { countStatements, statementsByText } = require('../statements');
const { serverCpuMs, serverCpuSpent } = require('../process-cpu');
const { seedCustomers } = require('../customers');
const { loadGenerator, machine, percentiles, randomName: random, runBenchmark, stopPlatform } = require('../platform');

const readParameters = () => ({
  customers: positiveSetting('customers', 'BENCH_CUSTOMERS', 100),
  spends: positiveSetting('spends', 'BENCH_SPENDS', 5000),
  concurrency: positiveSetting('concurrency', 'BENCH_CONCURRENCY', 16),
  rate_per_s: positiveSetting('rate', 'BENCH_RATE', 1000),
  rate_s: positiveSetting('rate-duration', 'BENCH_RATE_DURATION', 5),
  // Seconds at the rate before the timed ones: the open loop's connections and the platform at the rate.
  rate_ramp_s: countSetting('rate-ramp', 'BENCH_RATE_RAMP', 3),
  warmup_spends: positiveSetting('warmup', 'BENCH_WARMUP', 200),
  // one-process: every service in this process; billing-process: billing in a process of its own.
  topology: topologySetting(),
});

function topologySetting() {
  const topology = setting('topology', 'BENCH_TOPOLOGY', 'one-process');
  if (!['one-process', 'billing-process'].includes(topology)) throw new Error(`unknown topology ${topology}`);
  if (topology === 'billing-process' && !process.env.DATABASE_URL) {
    throw new Error('BENCH_TOPOLOGY=billing-process needs DATABASE_URL: an embedded database lives in one process');
  }
  return topology;
}

/**
 * Billing forked (billing-process.js) once it listens: its URL, `report()` (its CPU time and
 * the statements it sent so far) and `shutdown()`.
 */
function forkBilling(settings) {
  const child = fork(join(__dirname, 'billing-process.js'), [], {
    env: { ...process.env, BENCH_BILLING: JSON.stringify(settings) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const next = (key) =>
    new Promise((resolve, reject) => {
      const onMessage = (message) => {
        if (message?.[key] === undefined) return;
        child.off('exit', onExit);
        child.off('message', onMessage);
        resolve(message[key]);
      };
      const onExit = (code) => {
        child.off('message', onMessage);
        reject(new Error(`billing-process.js exited (${code})`));
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  return next('url').then(
    (url) => ({
      url,
      report: () => {
        const answer = next('report');
        child.send('report');
        return answer;
      },
      shutdown: async () => {
        if (child.connected) child.send('stop');
        await exited;
      },
    }),
    (error) => {
      child.kill();
      throw error;
    },
  );
}

const round = (n, digits = 1) => Number(n.toFixed(digits));

const spenders = loadGenerator(join(__dirname, 'spenders.js'));

/** Milliseconds of CPU per spend of each process, and their sum (`all`). */
function cpuByProcess(spentMs, count) {
  const per = Object.fromEntries(
    Object.entries(spentMs)
      .filter(([, ms]) => ms !== null)
      .map(([name, ms]) => [name, round(ms / Math.max(1, count), 2)]),
  );
  return {
    ...per,
    all: round(
      Object.values(per).reduce((sum, ms) => sum + ms, 0),
      2,
    ),
  };
}

async function phase(platform, settings) {
  const counts = platform.statements;
  const before = { ...counts, byText: counts.byText && new Map(counts.byText) };
  const billingBefore = await platform.billingProcess?.report();
  const cpuBefore = process.cpuUsage();
  const serversBefore = serverCpuMs();
  const timings = await spenders.run({ ...settings, prefix: random('spend') });
  const cpu = process.cpuUsage(cpuBefore);
  const servers = serverCpuSpent(serversBefore, serverCpuMs());
  const billingAfter = await platform.billingProcess?.report();
  const n = timings.spend.length;
  // CPU and statements are counted over every spend of the phase, its ramp's too.
  const sent = n + timings.ramp_spend.length;
  // With billing in its own process, its statements count as the others' do.
  const billingSent = (field) => (billingAfter ? billingAfter[field] - billingBefore[field] : 0);
  const per = (field) => round((counts[field] - before[field] + billingSent(field)) / Math.max(1, sent), 2);
  const billingCpu = billingAfter && {
    billing_process:
      (billingAfter.cpu.user + billingAfter.cpu.system - billingBefore.cpu.user - billingBefore.cpu.system) / 1000,
  };
  const sendLag = settings.rate ? percentiles(timings.send_lag) : null;
  return {
    spends: n,
    errors: timings.errors.length,
    first_error: timings.errors[0] ?? null,
    duration_s: round(timings.duration_ms / 1000, 3),
    spends_per_s: round(sent / (timings.duration_ms / 1000)),
    spend_ms: percentiles(timings.spend),
    ...(settings.rampSpends && { ramp_spend_ms: percentiles(timings.ramp_spend) }),
    ...(sendLag && { send_lag_ms: sendLag, rate_kept: sendLag.p99 <= Math.max(50, 1000 / settings.rate) }),
    per_spend: {
      sql_statements: per('statements'),
      sql_round_trips: per('roundTrips'),
      sql_transactions: per('transactions'),
      cpu_ms_by_process: cpuByProcess(
        { services: (cpu.user + cpu.system) / 1000, ...billingCpu, ...servers, load_generator: timings.cpu_ms },
        sent,
      ),
      ...(before.byText && { by_text: statementsByText(before.byText, counts.byText, sent) }),
    },
  };
}

async function main() {
  const startedAt = new Date().toISOString();
  const params = readParameters();
  let billingProcess;
  const outside =
    params.topology === 'billing-process'
      ? { billing: async (settings) => (billingProcess = await forkBilling(settings)) }
      : {};
  const platform = await startFullPlatform('credits', {
    observe: (started) => {
      started.statements = countStatements(started.infrastructure.database);
    },
    outside,
  });
  platform.billingProcess = billingProcess;
  try {
    const seedStarted = performance.now();
    const { secretKey, customers } = await seedCustomers(platform, params.customers, {
      grant: 1_000_000_000,
      prefix: 'spender',
    });
    const seedSeconds = round((performance.now() - seedStarted) / 1000, 3);
    const settings = { gateway: platform.gateway.url, secretKey, customers };
    const warmup = await spenders.run({ ...settings, spends: params.warmup_spends, concurrency: 4, prefix: 'warmup' });
    if (warmup.errors.length > 0) throw new Error(`warm-up failed: ${warmup.errors[0]}`);
    const closedLoop = await phase(platform, { ...settings, spends: params.spends, concurrency: params.concurrency });
    const openLoop = await phase(platform, {
      ...settings,
      spends: Math.round(params.rate_per_s * params.rate_s),
      rampSpends: Math.round(params.rate_per_s * params.rate_ramp_s),
      rate: params.rate_per_s,
    });
    const failed = closedLoop.errors + openLoop.errors;
    return {
      benchmark: 'credits',
      started_at: startedAt,
      valid: failed === 0,
      invalid_because: failed > 0 ? `${failed} spends failed` : null,
      mode: process.env.DATABASE_URL || process.env.KAFKA_BROKERS ? 'distributed' : 'embedded',
      database: platform.infrastructure.database.kind,
      bus: process.env.KAFKA_BROKERS ? 'kafka' : 'database',
      parameters: params,
      seed: { customers: customers.length, seconds: seedSeconds },
      closed_loop: closedLoop,
      open_loop: openLoop,
      machine: machine(),
    };
  } finally {
    await stopPlatform(platform, 'credits');
  }
}

// The pending run fails, and main's finally shuts everything down.
runBenchmark('credits', main, spenders.interrupt);
