'use strict';
// What the benchmarks that run services share: names, quiet loggers, the admin API, cleanup.
const { randomBytes } = require('node:crypto');
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

module.exports = { randomName, internalSecret, serviceLogger, adminPost, stopPlatform, runBenchmark };
