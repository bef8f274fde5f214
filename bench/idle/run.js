'use strict';
// What the whole platform costs when nothing happens: every service in this process on
// PostgreSQL + Kafka (bench/full-platform.js), left alone after it started, then the CPU its
// services, PostgreSQL, the Kafka broker and Redis spend a second over `--seconds` (and, before the
// platform starts, what PostgreSQL and the broker spend without it). Prints JSON.
//
//   DATABASE_URL=postgres://... KAFKA_BROKERS=127.0.0.1:9092 node bench/idle/run.js [--settle=10] [--seconds=30] [--rounds=3]
const { parseArgs } = require('node:util');
const { startFullPlatform } = require('../full-platform');
const { machine, runBenchmark, stopPlatform } = require('../platform');
const { serverCpuMs, serverCpuSpent } = require('../process-cpu');
const { countStatements } = require('../statements');

const { values } = parseArgs({
  options: {
    settle: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '30' },
    rounds: { type: 'string', default: '3' },
  },
});
const settleS = Number(values.settle);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

let interrupted;
const sleep = (ms) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    interrupted = (signal) => {
      clearTimeout(timer);
      reject(new Error(`interrupted by ${signal}`));
    };
  });
const perSecond = (ms) => (ms === null ? null : Number((ms / seconds).toFixed(1)));

/** One round: the CPU each part spends a second while the platform sits idle, and its SQL. */
async function measureRound(statements) {
  const services = process.cpuUsage();
  const servers = serverCpuMs();
  const sent = statements.statements;
  statements.byText?.clear();
  await sleep(seconds * 1000);
  const used = process.cpuUsage(services);
  const spent = serverCpuSpent(servers, serverCpuMs());
  return {
    statements_per_s: perSecond(statements.statements - sent),
    // With BENCH_STATEMENTS_BY_TEXT set: the five statements sent most, a second each.
    ...(statements.byText && {
      most_sent: [...statements.byText]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([text, n]) => ({ per_s: perSecond(n), text: text.slice(0, 160) })),
    }),
    services_ms_per_s: perSecond((used.user + used.system) / 1000),
    postgresql_ms_per_s: perSecond(spent.postgresql),
    kafka_ms_per_s: perSecond(spent.kafka),
    redis_ms_per_s: perSecond(spent.redis),
  };
}

async function main() {
  if (!process.env.DATABASE_URL || !process.env.KAFKA_BROKERS) {
    throw new Error(
      'the idle benchmark measures the platform on PostgreSQL + Kafka: set DATABASE_URL and KAFKA_BROKERS',
    );
  }
  // The servers alone first: most of what the broker spends while the platform idles is its own.
  const before = serverCpuMs();
  await sleep(seconds * 1000);
  const alone = serverCpuSpent(before, serverCpuMs());
  const platform = await startFullPlatform('idle', {
    observe: (started) => {
      started.statements = countStatements(started.infrastructure.database);
    },
  });
  try {
    await sleep(settleS * 1000); // consumer groups joined, relays backed off
    const measured = [];
    for (let round = 0; round < rounds; round++) measured.push(await measureRound(platform.statements));
    const range = (key) => {
      const all = measured.map((m) => m[key]).filter((n) => n !== null);
      return all.length ? [Math.min(...all), Math.max(...all)] : null;
    };
    return {
      benchmark: 'idle',
      machine: machine(),
      settle_s: settleS,
      seconds_per_round: seconds,
      without_platform: {
        postgresql_ms_per_s: perSecond(alone.postgresql),
        kafka_ms_per_s: perSecond(alone.kafka),
      },
      rounds: measured,
      statements_per_s: range('statements_per_s'),
      services_ms_per_s: range('services_ms_per_s'),
      postgresql_ms_per_s: range('postgresql_ms_per_s'),
      kafka_ms_per_s: range('kafka_ms_per_s'),
      valid: true,
    };
  } finally {
    await stopPlatform(platform, 'idle');
  }
}

runBenchmark('idle', main, (signal) => interrupted?.(signal));
