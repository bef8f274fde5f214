'use strict';
// Customers made as merchants' customers are, for the benches that act on customers (credits,
// usage): an organization, a one-time product, and a paid checkout per customer's email.
const { adminPost, pollUntil, randomName: random } = require('./platform');

/** A call to the gateway's public API with the Secret Key: `{ status, body }`. */
async function call(platform, method, path, secretKey, body) {
  const response = await fetch(`${platform.gateway.url}${path}`, {
    method,
    redirect: 'manual',
    headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

/** One customer: a paid one-time checkout with their email; then `grant` credits, if any. */
async function newCustomer(platform, secretKey, productId, email, grant) {
  const session = await call(platform, 'POST', '/v1/checkout/sessions', secretKey, {
    product_id: productId,
    mode: 'PAYMENT',
    success_url: 'https://shop.example/thanks',
    cancel_url: 'https://shop.example/cancel',
    customer_email: email,
  });
  if (session.status !== 201) throw new Error(`session: ${session.status} ${JSON.stringify(session.body)}`);
  const form = new URLSearchParams({ name: 'Bench Buyer', card_number: '4242424242424242', exp: '12/34', cvc: '123' });
  const paid = await fetch(session.body.url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  if (paid.status !== 303) throw new Error(`pay: ${paid.status}`);
  let id;
  await pollUntil(async () => {
    const found = await call(platform, 'GET', `/v1/customers?email=${encodeURIComponent(email)}`, secretKey);
    id = found.body.data?.[0]?.id;
    return Boolean(id);
  }, `billing never held the customer ${email}`);
  if (grant) {
    const granted = await call(platform, 'POST', `/v1/customers/${id}/credits/grants`, secretKey, {
      amount: grant,
      reason: 'bench',
    });
    if (granted.status !== 201) throw new Error(`grant: ${granted.status} ${JSON.stringify(granted.body)}`);
  }
  return id;
}

/** A new organization (its id and Sandbox Secret Key) and `count` customers, 8 made at a time, each granted `grant` credits. */
async function seedCustomers(platform, count, { grant = 0, prefix = 'customer' } = {}) {
  const organization = await adminPost(platform, '/organizations', { name: 'Bench' });
  const secretKey = organization.api_keys.sandbox.secret_key;
  const product = await adminPost(platform, `/organizations/${organization.id}/products`, {
    environment: 'SANDBOX',
    name: 'Top-up',
    type: 'ONE_TIME',
    price: 100,
  });
  const emails = random(prefix);
  const customers = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      customers.push(await newCustomer(platform, secretKey, product.id, `${emails}-${i}@bench.example`, grant));
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, count) }, worker));
  return { organization: organization.id, secretKey, customers };
}

module.exports = { call, seedCustomers };
