'use strict';
// What the benchmarks that run services share: names, quiet loggers, the admin API, cleanup.
const os = require('node:os');
const { randomBytes } = require('node:crypto');
const { execFile } = require('node:child_process');
const { createLogger } = require('@billing/service');

const randomName = (prefix) => `${prefix}_${randomBytes(8).toString('hex')}`;

/** The INTERNAL_SECRET every service of this benchmark run signs and checks calls with. */
const internalSecret = randomBytes(32).toString('base64url');

/** Service logs go to stderr, so that stdout holds only the benchmark's JSON. */
const serviceLogger = (name) =>
  createLogger(name, { level: process.env.LOG_LEVEL ?? 'error', destination: process.stderr });

/** POST to the gateway's admin API; anything but 201 stops the benchmark. */
async function adminPost(platform, path, body) {
  const response = await fetch(`${platform.gateway.url}/admin/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${platform.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/**
 * Shuts the services down (in `services` order), drops their schemas, closes the
 * infrastructure. Every step runs even when an earlier one fails; a failure is reported, not hidden.
 */
async function stopPlatform({ infrastructure, services, schemas }, benchmark) {
  const steps = [
    ...services.map((service) => () => service.shutdown()),
    ...schemas.map((schema) => () => infrastructure.database.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)),
    () => infrastructure.close(),
  ];
  for (const step of steps) {
    await step().catch((error) => {
      console.error(`${benchmark} benchmark: cleanup failed:`, error);
      process.exitCode = 1;
    });
  }
}

/**
 * Runs `main` and prints its result as JSON on stdout. SIGINT/SIGTERM call `interrupt` (which
 * should make the pending run fail, so that main's cleanup runs) and set a failing exit code;
 * a result with `valid: false` also fails.
 */
function runBenchmark(benchmark, main, interrupt) {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      console.error(`${benchmark} benchmark: interrupted by ${signal}`);
      process.exitCode = 1;
      interrupt(signal);
    });
  }
  main().then(
    (result) => {
      if (result.valid === false) {
        console.error(`${benchmark} benchmark: some requests failed; the numbers are not valid`);
        process.exitCode = 1;
      }
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    },
    (error) => {
      console.error(`${benchmark} benchmark failed:`, error);
      process.exitCode = 1;
    },
  );
}

/** The machine the numbers came from. */
const machine = () => ({
  node: process.version,
  cpu_count: os.cpus().length,
  cpu_model: os.cpus()[0]?.model,
  load_average: os.loadavg().map((n) => Number(n.toFixed(2))),
});

/** p50, p90, p99 and max of `values` (milliseconds), one decimal; zeros when empty. */
function percentiles(values) {
  const sorted = Float64Array.from(values).sort();
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  const one = (n) => Number(n.toFixed(1));
  return { count: sorted.length, p50: one(at(0.5)), p90: one(at(0.9)), p99: one(at(0.99)), max: one(at(1)) };
}

/**
 * With Kafka, topics of this run alone (`bench-<random>.checkout.events`), so that new consumer
 * groups do not first read what earlier runs and tests left on the shared topics.
 */
const benchTopicPrefix = () => `bench-${randomBytes(4).toString('hex')}.`;

/** Milliseconds since the epoch with sub-millisecond resolution, comparable across processes. */
const epochMs = () => performance.timeOrigin + performance.now();

/**
 * Resolves with performance.now() once `done()` (sync or async) is true, asked every `everyMs`;
 * past `timeoutMs` it fails with `what`, so that a stuck pipeline stops the bench instead of
 * hanging it.
 */
async function pollUntil(done, what, { everyMs = 20, timeoutMs = 300_000 } = {}) {
  const started = performance.now();
  while (!(await done())) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what} (waited ${timeoutMs / 1000} s)`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return performance.now();
}

/**
 * A load generator in a child process of its own (so that it does not share the services' event
 * loop): `run(settings)` starts `script` with its settings as JSON and answers the JSON it prints;
 * `interrupt(signal)` (runBenchmark's) kills the one running and fails every later run, so that
 * the benchmark's cleanup runs.
 */
function loadGenerator(script) {
  let child;
  let interrupted;
  const stopped = () => new Error(`interrupted by ${interrupted}`);
  const run = (settings) => {
    if (interrupted) return Promise.reject(stopped());
    return new Promise((resolve, reject) => {
      child = execFile(
        process.execPath,
        [script, JSON.stringify(settings)],
        { maxBuffer: 64 << 20 },
        (error, stdout) => {
          child = undefined;
          if (error) reject(interrupted ? stopped() : error);
          else resolve(JSON.parse(stdout));
        },
      );
    });
  };
  const interrupt = (signal) => {
    interrupted = signal;
    child?.kill();
  };
  return { run, interrupt };
}

module.exports = {
  loadGenerator,
  pollUntil,
  randomName,
  internalSecret,
  serviceLogger,
  adminPost,
  stopPlatform,
  runBenchmark,
  machine,
  percentiles,
  benchTopicPrefix,
  epochMs,
};
