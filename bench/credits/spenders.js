'use strict';
// The load generator of bench/credits, in a process of its own so that it does not share the
// services' event loop: `POST /v1/customers/{id}/credits/spend` through the gateway with the
// Secret Key, 1 credit each, a fresh idempotency key each, on customers taken in turn. Reads its
// settings from argv as JSON and prints one JSON object of timings to stdout.
//
// Closed loop (`concurrency` spenders, each sending its next spend when the last answered) or,
// with `rate`, open loop: a spend every 1/rate s whether or not the earlier ones answered, each
// latency counted from the moment it was due.

const http = require('node:http');

const { gateway, secretKey, customers, spends, concurrency, rate, prefix } = JSON.parse(process.argv[2]);

const agent = new http.Agent({ keepAlive: true, maxSockets: rate ? 256 : Math.max(16, concurrency * 2) });

function post(url, headers, body) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode, text: Buffer.concat(chunks).toString() }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const headers = { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' };

async function spend(i, timings, dueAt = performance.now()) {
  const customer = customers[i % customers.length];
  const body = JSON.stringify({ amount: 1, idempotency_key: `${prefix}-${i}`, metadata: { n: String(i) } });
  const response = await post(`${gateway}/v1/customers/${customer}/credits/spend`, headers, body);
  if (response.status !== 200) throw new Error(`spend: ${response.status} ${response.text.slice(0, 200)}`);
  timings.spend.push(performance.now() - dueAt);
}

const record = (timings) => (error) => timings.errors.push(String(error.message ?? error));

async function closedLoop(timings) {
  let next = 0;
  const worker = async () => {
    while (next < spends) await spend(next++, timings).catch(record(timings));
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function openLoop(timings) {
  const started = performance.now();
  const pending = [];
  let next = 0;
  await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < spends && started + (next * 1000) / rate <= now) {
        const dueAt = started + (next * 1000) / rate;
        timings.send_lag.push(now - dueAt);
        pending.push(spend(next++, timings, dueAt).catch(record(timings)));
      }
      if (next < spends) setTimeout(tick, Math.max(0, started + (next * 1000) / rate - performance.now()));
      else resolve();
    };
    tick();
  });
  await Promise.all(pending);
}

async function main() {
  const atStart = process.cpuUsage();
  const timings = { spend: [], errors: [], send_lag: [] };
  const started = performance.now();
  await (rate ? openLoop(timings) : closedLoop(timings));
  timings.duration_ms = performance.now() - started;
  const cpu = process.cpuUsage(atStart);
  timings.cpu_ms = (cpu.user + cpu.system) / 1000;
  process.stdout.write(JSON.stringify(timings));
  agent.destroy();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
