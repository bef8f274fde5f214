'use strict';
// The load generator of bench/usage, in a process of its own: `POST /v1/usage_events` through
// the gateway with the Secret Key, `batch` events a request, on customers taken in turn; every
// `creditsEvery`-th event is on the meter that spends credits, the others on one that does not.
// Closed loop (`concurrency` reporters) or, with `rate` (requests a second), open loop. Prints
// one JSON object of timings to stdout, with the epoch time each request was due (`due_at`), by
// which the run measures how long an event took to reach the balance.

const { keptAlivePoster, runAndReport } = require('../load-loop');

const { gateway, secretKey, customers, requests, batch, creditsEvery, concurrency, rate, prefix } = JSON.parse(
  process.argv[2],
);

const { post, destroy } = keptAlivePoster(rate ? 64 : Math.max(8, concurrency * 2));
const headers = { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' };
const epochAt = (performanceNow) => performance.timeOrigin + performanceNow;

function eventsOf(request) {
  const events = [];
  for (let j = 0; j < batch; j++) {
    const n = request * batch + j;
    events.push({
      id: `${prefix}-${request}-${j}`,
      customer_id: customers[n % customers.length],
      meter: n % creditsEvery === 0 ? 'tokens' : 'api_calls',
      quantity: 1 + (n % 7),
    });
  }
  return JSON.stringify({ events });
}

async function report(i, timings, dueAt) {
  timings.due_at[i] = epochAt(dueAt);
  const response = await post(`${gateway}/v1/usage_events`, headers, eventsOf(i));
  if (response.status !== 202) throw new Error(`report: ${response.status} ${response.text.slice(0, 200)}`);
  const answer = JSON.parse(response.text);
  if (answer.stored !== batch) throw new Error(`report ${i}: ${answer.stored} of ${batch} stored`);
  timings.report.push(performance.now() - dueAt);
}

async function main() {
  const atStart = process.cpuUsage();
  const timings = { report: [], errors: [], send_lag: [], due_at: [] };
  const loop = { count: requests, concurrency, rate };
  await runAndReport(loop, timings, (i, dueAt) => report(i, timings, dueAt), atStart);
  destroy();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
