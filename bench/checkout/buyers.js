'use strict';
// The load generator of bench/checkout, in a process of its own so that it does not share the
// services' event loop. Each buyer creates a session through the gateway with the Secret Key,
// then pays it on the hosted page with the success card, as a browser posts the form. Reads
// its settings from argv as JSON and prints one JSON object of timings to stdout.
//
// Closed loop (`concurrency` buyers, each starting the next checkout when its last one is paid)
// or, with `rate`, open loop: a buyer arrives every 1/rate s whether or not the earlier ones are
// done, and each latency of the first step runs from the moment the buyer was due.

const http = require('node:http');

const { gateway, secretKey, productId, checkouts, concurrency, rate, prefix } = JSON.parse(process.argv[2]);

// node:http on kept-alive connections, as a lean load tool would: fetch (undici) spent about
// twice the CPU per request, which the bench counts as the load generator's.
const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(16, (concurrency ?? 8) * 2) });

/** POSTs `body`; answers the status and the body as text. */
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

async function createSession(i) {
  const response = await post(
    `${gateway}/v1/checkout/sessions`,
    { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
    JSON.stringify({
      product_id: productId,
      success_url: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
      cancel_url: 'https://shop.example/cancel',
      customer_email: `${prefix}-${i}@bench.example`,
    }),
  );
  if (response.status !== 201) throw new Error(`create: ${response.status} ${response.text}`);
  return JSON.parse(response.text);
}

async function pay(url) {
  const form = new URLSearchParams({ name: 'Bench Buyer', card_number: '4242424242424242', exp: '12/34', cvc: '123' });
  const response = await post(url, { 'content-type': 'application/x-www-form-urlencoded' }, form.toString());
  if (response.status !== 303) throw new Error(`pay: ${response.status}`);
}

async function buyer(i, timings, dueAt = performance.now()) {
  const session = await createSession(i);
  const created = performance.now();
  await pay(session.url);
  const paid = performance.now();
  timings.create.push(created - dueAt);
  timings.pay.push(paid - created);
  timings.paid_at[session.id] = performance.timeOrigin + paid;
}

const record = (timings) => (error) => timings.errors.push(String(error.message ?? error));

async function closedLoop(timings) {
  let next = 0;
  const worker = async () => {
    while (next < checkouts) await buyer(next++, timings).catch(record(timings));
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
      while (next < checkouts && started + (next * 1000) / rate <= now) {
        const dueAt = started + (next * 1000) / rate;
        timings.send_lag.push(now - dueAt);
        pending.push(buyer(next++, timings, dueAt).catch(record(timings)));
      }
      if (next < checkouts) setTimeout(tick, Math.max(0, started + (next * 1000) / rate - performance.now()));
      else resolve();
    };
    tick();
  });
  await Promise.all(pending);
}

async function main() {
  // What starting the process took is not the checkouts' work.
  const atStart = process.cpuUsage();
  const timings = { create: [], pay: [], errors: [], send_lag: [], paid_at: {} };
  const started = performance.now();
  await (rate ? openLoop(timings) : closedLoop(timings));
  timings.duration_ms = performance.now() - started;
  // The load generator's own CPU, for the bench's CPU by process.
  const cpu = process.cpuUsage(atStart);
  timings.cpu_ms = (cpu.user + cpu.system) / 1000;
  process.stdout.write(JSON.stringify(timings));
  agent.destroy();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
