'use strict';
// `npm run bench`: every benchmark at a small size, one after another, each in its own process
// (their logs go to stderr). Prints one JSON object: per benchmark its headline figures, its
// `valid` flag and seconds, then every benchmark's full result. A small size says whether the
// numbers are in the right range and whether a benchmark still runs, not what the system
// can do: see each bench/*/README.md for full runs. Exit status 1 when a benchmark failed or
// was not valid; CI prints the result and ignores the status (.ci/run).
const { execFile } = require('node:child_process');
const { join } = require('node:path');
const { machine } = require('./platform');

/** Benchmarks and their small sizes; the event-store ones need PostgreSQL (DATABASE_URL). */
const BENCHMARKS = [
  {
    name: 'eventstore',
    script: 'eventstore/run.js',
    args: ['--ops=1000', '--rounds=2', '--warmup=100', '--batch-rounds=4', '--batches=5'],
    needs: 'DATABASE_URL',
    headline: (r) => ({ append_over_raw: r.ratios }),
  },
  {
    name: 'eventstore_command',
    script: 'eventstore/command.js',
    args: ['--stream-events=2000', '--rounds=4', '--commands=3', '--warmup=2'],
    needs: 'DATABASE_URL',
    headline: (r) => ({
      p50_ms: { full_replay: r.full_replay.p50_ms, snapshot: r.snapshot.p50_ms },
      ratio_p50_full_over_snapshot: r.ratio_p50_full_over_snapshot,
    }),
  },
  {
    name: 'eventstore_transaction',
    script: 'eventstore/transaction.js',
    args: ['--rounds=2', '--transactions=200'],
    needs: 'DATABASE_URL',
    headline: (r) => ({ write_over_query: r.write_over_query }),
  },
  {
    name: 'eventstore_read_log',
    script: 'eventstore/read-log.js',
    args: ['--log-events=2000', '--rounds=2'],
    needs: 'DATABASE_URL',
    headline: (r) => ({ growth_for_10x_events: r.growth_for_10x_events, linear: r.linear }),
  },
  {
    name: 'gateway',
    script: 'gateway/run.js',
    args: ['--rounds=2', '--duration=2', '--warmup=1', '--half-load=2'],
    headline: (r) => ({
      throughput_over_direct: r.saturation.ratios,
      half_load: Object.fromEntries(
        Object.entries(r.half_load).map(([name, h]) => [
          name,
          { rate_per_s: h.rate_per_s, p50_added_ms: h.p50_added_ms, p99_added_ms: h.p99_added_ms },
        ]),
      ),
    }),
  },
  {
    name: 'webhooks',
    script: 'webhooks/run.js',
    args: ['--rate=50', '--rate-duration=3', '--events=300', '--backlog=300', '--warmup=3'],
    headline: (r) => ({
      fixed_rate: { events_per_s: r.parameters.rate_per_s, latency_ms: r.fixed_rate.latency_ms },
      burst: { deliveries_per_s: r.burst.deliveries_per_s, latency_ms: r.burst.latency_ms },
      backlog: { deliveries_per_s: r.backlog.deliveries_per_s, after_all_scheduled: r.backlog.after_all_scheduled },
    }),
  },
  {
    name: 'checkout',
    script: 'checkout/run.js',
    args: ['--checkouts=60', '--concurrency=8', '--rate=20', '--rate-duration=3', '--warmup=3'],
    headline: (r) => ({
      closed_loop_per_s: r.closed_loop.checkouts_per_s,
      sql_per_paid_checkout: r.closed_loop.per_paid_checkout,
      open_loop: {
        rate_per_s: r.parameters.rate_per_s,
        create_p99_ms: r.open_loop.create_session_ms.p99,
        pay_p99_ms: r.open_loop.pay_ms.p99,
        paid_to_webhook_p99_ms: r.open_loop.paid_to_webhook_ms.p99,
      },
    }),
  },
  {
    name: 'idle',
    script: 'idle/run.js',
    args: ['--settle=5', '--seconds=5', '--rounds=1'],
    needs: 'KAFKA_BROKERS',
    headline: (r) => ({
      services_ms_per_s: r.services_ms_per_s,
      postgresql_ms_per_s: r.postgresql_ms_per_s,
      kafka_ms_per_s: r.kafka_ms_per_s,
    }),
  },
  {
    name: 'credits',
    script: 'credits/run.js',
    args: [
      '--customers=10',
      '--spends=500',
      '--concurrency=8',
      '--rate=100',
      '--rate-duration=2',
      '--rate-ramp=1',
      '--warmup=50',
    ],
    headline: (r) => ({
      closed_loop_per_s: r.closed_loop.spends_per_s,
      closed_loop_p99_ms: r.closed_loop.spend_ms.p99,
      per_spend: r.closed_loop.per_spend,
      open_loop: { rate_per_s: r.parameters.rate_per_s, p99_ms: r.open_loop.spend_ms.p99 },
    }),
  },
  {
    name: 'usage',
    script: 'usage/run.js',
    args: ['--customers=10', '--requests=10', '--rate=2000', '--rate-duration=2'],
    headline: (r) => ({
      closed_loop_events_per_s: r.closed_loop.events_per_s,
      open_loop: {
        rate_events_per_s: r.parameters.rate_events_per_s,
        report_p99_ms: r.open_loop.report_ms.p99,
        event_to_balance_p99_ms: r.open_loop.event_to_balance_ms.p99,
      },
    }),
  },
  {
    name: 'renewals',
    script: 'renewals/run.js',
    args: ['--subscriptions=100'],
    headline: (r) => ({ renewals_per_s: r.renewals_per_s, due_to_invoice_paid_ms: r.due_to_invoice_paid_ms }),
  },
  {
    name: 'sweep',
    script: 'sweep/run.js',
    args: ['--subscriptions=2000', '--rounds=5'],
    needs: 'DATABASE_URL',
    headline: (r) => ({
      final_invoices_p50_ms: r.find_due_final_invoices.p50_ms,
      retries_p50_ms: r.find_due_retries.p50_ms,
    }),
  },
];

function run({ script, args }) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [join(__dirname, script), ...args],
      { maxBuffer: 64 << 20 },
      (error, stdout) => {
        const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
        let result = null;
        try {
          result = JSON.parse(stdout);
        } catch {
          // no JSON: the benchmark failed before it could print one
        }
        resolve({ seconds, result, error: error ? String(error.message).split('\n')[0] : null });
      },
    );
    child.stderr.pipe(process.stderr);
  });
}

async function main() {
  const started = performance.now();
  const summary = {};
  const results = {};
  for (const bench of BENCHMARKS) {
    if (bench.needs && !process.env[bench.needs]) {
      summary[bench.name] = { skipped: `needs ${bench.needs}` };
      continue;
    }
    console.error(`bench: ${bench.name} ${bench.args.join(' ')}`);
    const { seconds, result, error } = await run(bench);
    results[bench.name] = result;
    let headline = null;
    try {
      headline = result ? bench.headline(result) : null;
    } catch {
      // a result without the expected fields: shown in full below
    }
    summary[bench.name] = { valid: result?.valid ?? false, seconds, error, ...headline };
  }
  const failed = Object.values(summary).some((s) => !s.skipped && !s.valid);
  process.stdout.write(
    `${JSON.stringify(
      {
        benchmark: 'all (small size)',
        valid: !failed,
        seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
        mode: {
          database: process.env.DATABASE_URL ? 'postgres' : 'embedded',
          bus: process.env.KAFKA_BROKERS ? 'kafka' : 'database',
          redis: Boolean(process.env.REDIS_URL),
        },
        machine: machine(),
        summary,
        results,
      },
      null,
      2,
    )}\n`,
  );
  if (failed) process.exitCode = 1;
}

main();
