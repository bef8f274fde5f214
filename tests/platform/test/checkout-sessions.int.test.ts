import { callService as call, ebook, monthly, urls } from '@billing/testing';
import { type CreatedOrganization, type Platform, clientOf, startPlatform } from '../src/platform';

jest.setTimeout(120_000);

/**
 * Every rule of `POST /v1/checkout/sessions` (issue 5), through the gateway with real API keys:
 * checkout behind it asks the catalog and promotions, as in production.
 */
let platform: Platform;
let client: ReturnType<typeof clientOf>;
let clock = new Date();
const CHECKOUT_URL = () => `${platform.gatewayUrl}/checkout`;
const organizations = new Map<string, CreatedOrganization>();

beforeAll(async () => {
  platform = await startPlatform({ checkout: true, now: () => clock });
  client = clientOf(platform.gatewayUrl);
});
afterAll(() => platform?.stop());

const gatewayUrl = () => platform.gatewayUrl;

async function newOrg() {
  const created = await client.createOrganization();
  organizations.set(created.id, created);
  return created.id;
}

/** The key a merchant would use: Secret or Publishable, Sandbox or Production. */
function caller(
  org: string,
  environment: 'SANDBOX' | 'PRODUCTION' = 'SANDBOX',
  kind: 'secret' | 'publishable' = 'secret',
) {
  const keys = organizations.get(org)!.api_keys[environment === 'SANDBOX' ? 'sandbox' : 'production'];
  return { authorization: `Bearer ${kind === 'secret' ? keys.secret_key : keys.publishable_key}` };
}

const create = (org: string, body: Record<string, unknown>, headers = caller(org)) =>
  call(gatewayUrl(), 'POST', '/v1/checkout/sessions', headers, body);
const read = (org: string, id: string, headers = caller(org)) =>
  call(gatewayUrl(), 'GET', `/v1/checkout/sessions/${id}`, headers);
const pay = (id: string, body: Record<string, unknown>) => call(gatewayUrl(), 'POST', `/checkout/${id}/pay`, {}, body);

async function product(org: string, fields: Record<string, unknown>) {
  const res = await client.createProduct(org, fields);
  expect(res.status).toBe(201);
  return res.body as { id: string; slug: string | null; price: number; name: string };
}
async function archive(org: string, productId: string) {
  const res = await client.admin('PATCH', `/organizations/${org}/products/${productId}`, { active: false });
  expect(res.status).toBe(200);
}
async function promotionCode(
  org: string,
  code: string,
  coupon: Record<string, unknown>,
  fields: Record<string, unknown> = {},
) {
  const c = await call(gatewayUrl(), 'POST', '/v1/coupons', caller(org), { name: 'Sale', ...coupon });
  expect(c.status).toBe(201);
  const p = await call(gatewayUrl(), 'POST', '/v1/promotion-codes', caller(org), {
    code,
    coupon_id: c.body.id,
    ...fields,
  });
  expect(p.status).toBe(201);
  return p.body.data as { id: string };
}
const detailsOf = (res: { body: any }) => res.body.error.details.map((d: any) => `${d.path}: ${d.code}`);

describe('POST /v1/checkout/sessions', () => {
  it('creates an order and a payment intent and answers the spec create response, expiring in 30 minutes', async () => {
    const org = await newOrg();
    const p = await product(org, ebook());
    const res = await create(org, { product_id: p.id, ...urls });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      object: 'checkout.session',
      id: expect.stringMatching(/^cs_[0-9A-Za-z]{24}$/),
      url: `${CHECKOUT_URL()}/${res.body.id}`,
      expires_at: new Date(clock.getTime() + 30 * 60_000).toISOString(),
      amount: 300,
      requires_payment_method: true,
      client_secret: expect.stringMatching(/^pi_[0-9A-Za-z]{24}_secret_[0-9A-Za-z]{24}$/),
      discount: null,
      einvoice_enabled: false,
      livemode: false,
    });
    const got = await read(org, res.body.id);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      object: 'checkout.session',
      id: res.body.id,
      status: 'OPEN',
      mode: 'PAYMENT',
      customer_id: null,
      customer_email: null,
      customer_name: null,
      external_customer_id: null,
      order_id: expect.stringMatching(/^ord_/),
      subscription_id: null,
      payment_intent_id: res.body.client_secret.split('_secret_')[0],
      setup_intent_id: null,
      amount_subtotal: 300,
      amount_total: 300,
      currency: 'TWD',
      discount: null,
      allow_promotion_codes: false,
      product: { id: p.id, name: 'E-book' },
      metadata: null,
      expires_at: res.body.expires_at,
      created_at: clock.toISOString(),
      completed_at: null,
      livemode: false,
    });
  });

  it('finds the product by slug, takes the legacy camelCase names, and refuses both names with different values', async () => {
    const org = await newOrg();
    const p = await product(org, ebook({ slug: 'ebook' }));
    const camel = await create(org, {
      productSlug: 'ebook',
      successUrl: urls.success_url,
      cancelUrl: urls.cancel_url,
      customerEmail: 'mei@example.com',
      customerName: 'Mei',
      externalCustomerId: 'user_42',
      collectPaymentMethod: 'always',
    });
    expect(camel.status).toBe(201);
    expect((await read(org, camel.body.id)).body).toMatchObject({
      product: { id: p.id },
      customer_email: 'mei@example.com',
      customer_name: 'Mei',
      external_customer_id: 'user_42',
    });
    const same = await create(org, { product_slug: 'ebook', productSlug: 'ebook', ...urls });
    expect(same.status).toBe(201);
    const different = await create(org, { product_id: p.id, productId: 'prod_other', ...urls });
    expect(different.status).toBe(422);
    expect(detailsOf(different)).toEqual(['product_id: conflicting_values']);
  });

  it('needs exactly one of product_id and product_slug, both URLs, and valid fields', async () => {
    const org = await newOrg();
    const p = await product(org, ebook());
    const none = await create(org, { ...urls });
    expect(none.status).toBe(422);
    expect(detailsOf(none)).toEqual(['product_id: custom']);
    const missing = await create(org, { product_id: p.id });
    expect(detailsOf(missing)).toEqual(['success_url: invalid_type', 'cancel_url: invalid_type']);
    const bad = await create(org, {
      product_id: p.id,
      ...urls,
      customer_email: 'not-an-email',
      external_customer_id: 'user 1',
      collect_payment_method: 'sometimes',
      mode: 'RENTAL',
      unknown_field: 1,
    });
    expect(bad.status).toBe(422);
    expect(detailsOf(bad).sort()).toEqual(
      [
        ': unrecognized_keys',
        'collect_payment_method: invalid_value',
        'customer_email: invalid_format',
        'external_customer_id: invalid_format',
        'mode: invalid_value',
      ].sort(),
    );
    const malformed = await call(
      gatewayUrl(),
      'POST',
      '/v1/checkout/sessions',
      { ...caller(org), 'content-type': 'application/json' },
      '{',
    );
    expect(malformed.status).toBe(400);
  });

  it('takes HTTPS URLs, and in Sandbox also http://localhost and http://127.0.0.1 on any port', async () => {
    const org = await newOrg();
    const p = await product(org, ebook());
    const local = await create(org, {
      product_id: p.id,
      success_url: 'http://localhost:3000/ok/{CHECKOUT_SESSION_ID}',
      cancel_url: 'http://127.0.0.1/cancel',
    });
    expect(local.status).toBe(201);
    const plain = await create(org, {
      product_id: p.id,
      success_url: 'http://shop.example/ok',
      cancel_url: 'not a url',
    });
    expect(plain.status).toBe(422);
    expect(detailsOf(plain)).toEqual(['success_url: invalid_url', 'cancel_url: invalid_url']);
    const liveOrg = await newOrg();
    const live = await product(liveOrg, ebook({ environment: 'PRODUCTION' }));
    const liveLocal = await create(
      liveOrg,
      { product_id: live.id, success_url: 'http://localhost:3000/ok', cancel_url: urls.cancel_url },
      caller(liveOrg, 'PRODUCTION'),
    );
    expect(liveLocal.status).toBe(422);
    expect(detailsOf(liveLocal)).toEqual(['success_url: invalid_url']);
  });

  it('derives the mode from the product type and checks a given one against it', async () => {
    const org = await newOrg();
    const plan = await product(org, monthly());
    const book = await product(org, ebook());
    const sub = await create(org, { product_id: plan.id, ...urls });
    expect((await read(org, sub.body.id)).body).toMatchObject({ mode: 'SUBSCRIPTION', amount_total: 299 });
    const setup = await create(org, { product_id: plan.id, ...urls, mode: 'SETUP' });
    expect(setup.status).toBe(201);
    expect(setup.body).toMatchObject({
      amount: 0,
      requires_payment_method: true,
      client_secret: expect.stringMatching(/^seti_/),
    });
    expect((await read(org, setup.body.id)).body).toMatchObject({
      mode: 'SETUP',
      payment_intent_id: null,
      setup_intent_id: expect.stringMatching(/^seti_/),
    });
    for (const [id, mode] of [
      [book.id, 'SUBSCRIPTION'],
      [book.id, 'SETUP'],
      [plan.id, 'PAYMENT'],
    ]) {
      const res = await create(org, { product_id: id, ...urls, mode });
      expect(res.status).toBe(422);
      expect(detailsOf(res)).toEqual(['mode: mode_mismatch']);
    }
  });

  it('is 404 for an absent, archived, other organization or other environment product', async () => {
    const org = await newOrg();
    const archived = await product(org, ebook({ slug: 'old' }));
    await archive(org, archived.id);
    const foreign = await product(await newOrg(), ebook({ slug: 'foreign' }));
    const live = await product(org, ebook({ environment: 'PRODUCTION' }));
    for (const ref of [
      { product_id: 'prod_doesnotexist' },
      { product_slug: 'nope' },
      { product_id: archived.id },
      { product_slug: 'old' },
      { product_id: foreign.id },
      { product_slug: 'foreign' },
      { product_id: live.id },
    ]) {
      const res = await create(org, { ...ref, ...urls });
      expect([ref, res.status, res.body.error.code]).toEqual([ref, 404, 'not_found']);
    }
  });

  it('refuses metadata from a Publishable Key with 400, keeps it from a Secret Key', async () => {
    const org = await newOrg();
    const p = await product(org, ebook());
    const publishable = await create(
      org,
      { product_id: p.id, ...urls, metadata: { ref: 'x' } },
      caller(org, 'SANDBOX', 'publishable'),
    );
    expect(publishable.status).toBe(400);
    expect(publishable.body.error.code).toBe('bad_request');
    const withoutMetadata = await create(org, { product_id: p.id, ...urls }, caller(org, 'SANDBOX', 'publishable'));
    expect(withoutMetadata.status).toBe(201);
    const secret = await create(org, { product_id: p.id, ...urls, metadata: { ref: 'friend', utm_source: 'mail' } });
    expect(secret.status).toBe(201);
    expect((await read(org, secret.body.id)).body.metadata).toEqual({ ref: 'friend', utm_source: 'mail' });
    const bad = await create(org, { product_id: p.id, ...urls, metadata: { n: 1 } });
    expect(detailsOf(bad)).toEqual(['metadata.n: invalid_type']);
  });

  it('checks the e-invoice choice, also from a Publishable Key', async () => {
    const org = await newOrg();
    const p = await product(org, ebook());
    const pk = caller(org, 'SANDBOX', 'publishable');
    for (const einvoice of [
      { type: 'B2B', tax_id: '04595257' },
      { type: 'B2B', tax_id: '10458574' },
      { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
      { type: 'CITIZEN_CERTIFICATE', carrier: 'AB12345678901234' },
      { type: 'DONATION', donation_code: '8585' },
    ]) {
      expect((await create(org, { product_id: p.id, ...urls, einvoice }, pk)).status).toBe(201);
    }
    for (const [einvoice, detail] of [
      [{ type: 'B2B', tax_id: '04595258' }, 'einvoice.tax_id: invalid_tax_id'],
      [{ type: 'MOBILE_BARCODE', carrier: '/abc+123' }, 'einvoice.carrier: invalid_mobile_barcode'],
      [{ type: 'CITIZEN_CERTIFICATE', carrier: 'A123456789' }, 'einvoice.carrier: invalid_citizen_certificate'],
      [{ type: 'DONATION', donation_code: '12' }, 'einvoice.donation_code: invalid_donation_code'],
      [{ type: 'PAPER' }, 'einvoice.type: invalid_union'],
    ] as const) {
      const res = await create(org, { product_id: p.id, ...urls, einvoice }, pk);
      expect([res.status, ...detailsOf(res)]).toEqual([422, detail]);
    }
  });

  it('applies and reserves a promotion code: amount after discount and the discount object', async () => {
    const org = await newOrg();
    const p = await product(org, ebook({ price: 299 }));
    await promotionCode(org, 'SPRING20', { discount_type: 'PERCENTAGE', discount_amount: 20 });
    const res = await create(org, {
      product_id: p.id,
      ...urls,
      promotion_code: 'spring20',
      external_customer_id: 'u1',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      amount: 240,
      discount: { type: 'PERCENTAGE', amount: 59, discounted_amount: 240, label: '20% off' },
    });
    expect((await read(org, res.body.id)).body).toMatchObject({ amount_subtotal: 299, amount_total: 240 });
  });

  it('answers a refused promotion code with 422 at promotion_code, masked for a Publishable Key', async () => {
    const org = await newOrg();
    const p = await product(org, ebook());
    await promotionCode(org, 'ONCE', { discount_type: 'FIXED_AMOUNT', discount_amount: 50 }, { max_redemptions: 1 });
    const missing = await create(org, { product_id: p.id, ...urls, promotion_code: 'NOPE' });
    expect(missing.status).toBe(422);
    expect(missing.body.error.details).toEqual([
      { path: 'promotion_code', code: 'PROMO_CODE_NOT_FOUND', message: expect.any(String) },
    ]);
    const masked = await create(
      org,
      { product_id: p.id, ...urls, promotion_code: 'NOPE' },
      caller(org, 'SANDBOX', 'publishable'),
    );
    expect(detailsOf(masked)).toEqual(['promotion_code: PROMO_CODE_INVALID']);
    expect((await create(org, { product_id: p.id, ...urls, promotion_code: 'ONCE' })).status).toBe(201);
    const exhausted = await create(org, { product_id: p.id, ...urls, promotion_code: 'ONCE' });
    expect(detailsOf(exhausted)).toEqual(['promotion_code: PROMO_CODE_EXHAUSTED']);
    const plan = await product(org, monthly());
    const setup = await create(org, { product_id: plan.id, ...urls, mode: 'SETUP', promotion_code: 'ONCE' });
    expect(detailsOf(setup)).toEqual(['promotion_code: not_allowed']);
  });

  it('needs no payment method for a zero amount with if_required, and pays it without a card', async () => {
    const org = await newOrg();
    const p = await product(org, ebook());
    await promotionCode(
      org,
      'FREE',
      { discount_type: 'PERCENTAGE', discount_amount: 100 },
      { max_redemptions_per_customer: 5 },
    );
    const always = await create(org, { product_id: p.id, ...urls, promotion_code: 'FREE' });
    expect(always.body).toMatchObject({ amount: 0, requires_payment_method: true });
    const free = await create(org, {
      product_id: p.id,
      ...urls,
      promotion_code: 'FREE',
      collect_payment_method: 'if_required',
    });
    expect(free.body).toMatchObject({ amount: 0, requires_payment_method: false });
    const paid = await pay(free.body.id, { email: 'free@example.com' });
    expect(paid).toEqual({
      status: 200,
      body: { status: 'complete', redirect_url: `https://shop.example/thanks?session=${free.body.id}` },
    });
    const priced = await create(org, { product_id: p.id, ...urls, collect_payment_method: 'if_required' });
    expect(priced.body).toMatchObject({ amount: 300, requires_payment_method: true });
  });
});
