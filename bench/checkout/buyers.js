'use strict';
// The load generator of bench/checkout, in a process of its own so that it does not share the
// services' event loop. Each buyer creates a session through the gateway with the Secret Key,
// then pays it on the hosted page with the success card, as a browser posts the form. Reads
// its settings from argv as JSON and prints one JSON object of timings to stdout.

const { gateway, secretKey, productId, checkouts, concurrency, prefix } = JSON.parse(process.argv[2]);

async function createSession(i) {
  const response = await fetch(`${gateway}/v1/checkout/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      product_id: productId,
      success_url: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
      cancel_url: 'https://shop.example/cancel',
      customer_email: `${prefix}-${i}@bench.example`,
    }),
  });
  const body = await response.json();
  if (response.status !== 201) throw new Error(`create: ${response.status} ${JSON.stringify(body)}`);
  return body.url;
}

async function pay(url) {
  const form = new URLSearchParams({ name: 'Bench Buyer', card_number: '4242424242424242', exp: '12/34', cvc: '123' });
  const response = await fetch(url, { method: 'POST', body: form, redirect: 'manual' });
  await response.arrayBuffer();
  if (response.status !== 303) throw new Error(`pay: ${response.status}`);
}

async function buyer(i, timings) {
  const started = performance.now();
  const url = await createSession(i);
  const created = performance.now();
  await pay(url);
  const paid = performance.now();
  timings.create.push(created - started);
  timings.pay.push(paid - created);
}

async function main() {
  const timings = { create: [], pay: [], errors: [] };
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < checkouts) {
      const i = next++;
      await buyer(i, timings).catch((error) => timings.errors.push(String(error.message ?? error)));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  timings.duration_ms = performance.now() - started;
  process.stdout.write(JSON.stringify(timings));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
