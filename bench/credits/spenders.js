'use strict';
// The load generator of bench/credits, in a process of its own so that it does not share the
// services' event loop: `POST /v1/customers/{id}/credits/spend` through the gateway with the
// Secret Key, 1 credit each, a fresh idempotency key each, on customers taken in turn. Reads its
// settings from argv as JSON and prints one JSON object of timings to stdout.
//
// Closed loop (`concurrency` spenders, each sending its next spend when the last answered) or,
// with `rate`, open loop: a spend every 1/rate s whether or not the earlier ones answered, each
// latency counted from the moment it was due. The open loop's first `rampSpends` are sent at
// the rate too but timed apart (`ramp_spend`): its connections opened and the platform brought
// to the rate before the measured spends.

const { keptAlivePoster, runAndReport } = require('../load-loop');

const {
  gateway,
  secretKey,
  customers,
  spends,
  concurrency,
  rate,
  rampSpends = 0,
  prefix,
} = JSON.parse(process.argv[2]);

const { post, destroy } = keptAlivePoster(rate ? 256 : Math.max(16, concurrency * 2));

const headers = { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' };

async function spend(i, timings, dueAt) {
  const customer = customers[i % customers.length];
  const body = JSON.stringify({ amount: 1, idempotency_key: `${prefix}-${i}`, metadata: { n: String(i) } });
  const response = await post(`${gateway}/v1/customers/${customer}/credits/spend`, headers, body);
  if (response.status !== 200) throw new Error(`spend: ${response.status} ${response.text.slice(0, 200)}`);
  (i < rampSpends ? timings.ramp_spend : timings.spend).push(performance.now() - dueAt);
}

async function main() {
  const atStart = process.cpuUsage();
  const timings = { spend: [], ramp_spend: [], errors: [], send_lag: [] };
  const count = spends + rampSpends;
  await runAndReport({ count, concurrency, rate }, timings, (i, dueAt) => spend(i, timings, dueAt), atStart);
  destroy();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
