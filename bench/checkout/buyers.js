'use strict';
// The load generator of bench/checkout, in a process of its own so that it does not share the
// services' event loop. Each buyer creates a session through the gateway with the Secret Key,
// then pays it on the hosted page with the success card, as a browser posts the form. Reads
// its settings from argv as JSON and prints one JSON object of timings to stdout.
//
// Closed loop (`concurrency` buyers, each starting the next checkout when its last one is paid)
// or, with `rate`, open loop: a buyer arrives every 1/rate s whether or not the earlier ones are
// done, and each latency of the first step runs from the moment the buyer was due.

const { keptAlivePoster, runAndReport } = require('../load-loop');

const { gateway, secretKey, productId, checkouts, concurrency, rate, prefix } = JSON.parse(process.argv[2]);

const { post, destroy } = keptAlivePoster(Math.max(16, (concurrency ?? 8) * 2));

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

async function buyer(i, timings, dueAt) {
  const session = await createSession(i);
  const created = performance.now();
  await pay(session.url);
  const paid = performance.now();
  timings.create.push(created - dueAt);
  timings.pay.push(paid - created);
  timings.paid_at[session.id] = performance.timeOrigin + paid;
}

async function main() {
  // What starting the process took is not the checkouts' work.
  const atStart = process.cpuUsage();
  const timings = { create: [], pay: [], errors: [], send_lag: [], paid_at: {} };
  await runAndReport({ count: checkouts, concurrency, rate }, timings, (i, dueAt) => buyer(i, timings, dueAt), atStart);
  destroy();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
