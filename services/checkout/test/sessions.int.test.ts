import { catalogService } from '@billing/catalog';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { checkoutService, expireDueSessions } from '../src';
import { admin, call, caller, card, ebook, monthly, newOrg, urls } from './helpers';

jest.setTimeout(120_000);

let infrastructure: Infrastructure;
let catalog: ServiceUnderTest;
let promotions: ServiceUnderTest;
let checkout: ServiceUnderTest;
let demo: ServiceUnderTest;
let clock = new Date();
const advance = (ms: number) => (clock = new Date(clock.getTime() + ms));
const CHECKOUT_URL = 'https://pay.example/checkout';

beforeAll(async () => {
  infrastructure = await testInfrastructure('checkout-test');
  catalog = await startServiceForTest(catalogService, { infrastructure });
  promotions = await startServiceForTest(promotionsService, { infrastructure });
  const config = {
    CATALOG_SERVICE_URL: catalog.service.url,
    PROMOTIONS_SERVICE_URL: promotions.service.url,
    CHECKOUT_URL,
    CHECKOUT_SWEEP_INTERVAL_MS: '3600000',
  };
  checkout = await startServiceForTest(checkoutService, { infrastructure, config, now: () => clock });
  demo = await startServiceForTest(checkoutService, {
    infrastructure,
    config: { ...config, SANDBOX_PROCESSOR_IN_PRODUCTION: 'demo' },
    now: () => clock,
  });
});
afterAll(async () => {
  await demo?.stop();
  await checkout?.stop();
  await promotions?.stop();
  await catalog?.stop();
  await infrastructure?.close();
});

const url = () => checkout.service.url;
const create = (org: string, body: Record<string, unknown>, headers = caller(org)) =>
  call(url(), 'POST', '/v1/checkout/sessions', headers, body);
const read = (org: string, id: string, headers = caller(org)) =>
  call(url(), 'GET', `/v1/checkout/sessions/${id}`, headers);
const pay = (id: string, body: Record<string, unknown>, base = url()) =>
  call(base, 'POST', `/checkout/${id}/pay`, {}, body);

async function product(org: string, fields: Record<string, unknown>) {
  const res = await call(catalog.service.url, 'POST', '/admin/products', admin(org), fields);
  expect(res.status).toBe(201);
  return res.body as { id: string; slug: string | null; price: number; name: string };
}
async function promotionCode(
  org: string,
  code: string,
  coupon: Record<string, unknown>,
  fields: Record<string, unknown> = {},
) {
  const c = await call(promotions.service.url, 'POST', '/v1/coupons', caller(org), { name: 'Sale', ...coupon });
  expect(c.status).toBe(201);
  const p = await call(promotions.service.url, 'POST', '/v1/promotion-codes', caller(org), {
    code,
    coupon_id: c.body.id,
    ...fields,
  });
  expect(p.status).toBe(201);
  return p.body.data as { id: string };
}
async function session(org: string, body: Record<string, unknown> = {}) {
  const p = await product(org, ebook());
  const res = await create(org, { product_id: p.id, ...urls, ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string; amount: number };
}
const streamOf = (id: string, service = checkout) => service.service.context.store.readStream(`checkout_session-${id}`);
const typesOf = async (id: string, service = checkout) => (await streamOf(id, service)).map((e) => e.type);
const detailsOf = (res: { body: any }) => res.body.error.details.map((d: any) => `${d.path}: ${d.code}`);

describe('POST /v1/checkout/sessions', () => {
  it('creates an order and a payment intent and answers the spec create response, expiring in 30 minutes', async () => {
    const org = newOrg();
    const p = await product(org, ebook());
    const res = await create(org, { product_id: p.id, ...urls });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      object: 'checkout.session',
      id: expect.stringMatching(/^cs_[0-9A-Za-z]{24}$/),
      url: `${CHECKOUT_URL}/${res.body.id}`,
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
      product: { id: p.id, name: 'E-book' },
      metadata: null,
      expires_at: res.body.expires_at,
      created_at: clock.toISOString(),
      completed_at: null,
      livemode: false,
    });
  });

  it('finds the product by slug, takes the legacy camelCase names, and refuses both names with different values', async () => {
    const org = newOrg();
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
    const org = newOrg();
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
      url(),
      'POST',
      '/v1/checkout/sessions',
      { ...caller(org), 'content-type': 'application/json' },
      '{',
    );
    expect(malformed.status).toBe(400);
  });

  it('takes HTTPS URLs, and in Sandbox also http://localhost and http://127.0.0.1 on any port', async () => {
    const org = newOrg();
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
    const liveOrg = newOrg();
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
    const org = newOrg();
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
    const org = newOrg();
    const archived = await product(org, ebook({ slug: 'old' }));
    await call(catalog.service.url, 'PATCH', `/admin/products/${archived.id}`, admin(org), { active: false });
    const foreign = await product(newOrg(), ebook({ slug: 'foreign' }));
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
    const org = newOrg();
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
    const org = newOrg();
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
    const org = newOrg();
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
    const org = newOrg();
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
    const org = newOrg();
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

describe('GET /v1/checkout/sessions/:id', () => {
  it('is 404 when absent, or of another organization or environment; a Publishable Key reads it', async () => {
    const org = newOrg();
    const { id } = await session(org);
    expect((await read(org, 'cs_missing')).status).toBe(404);
    expect((await read(newOrg(), id)).status).toBe(404);
    expect((await read(org, id, caller(org, 'PRODUCTION'))).status).toBe(404);
    expect((await read(org, id, caller(org, 'SANDBOX', 'publishable'))).status).toBe(200);
    expect((await call(url(), 'GET', `/v1/checkout/sessions/${id}`)).status).toBe(401);
  });

  it('reads EXPIRED once past expires_at; the sweep records it, emits the event and releases the promotion code', async () => {
    const org = newOrg();
    const p = await product(org, ebook());
    await promotionCode(org, 'LAST', { discount_type: 'FIXED_AMOUNT', discount_amount: 10 }, { max_redemptions: 1 });
    const first = await create(org, { product_id: p.id, ...urls, promotion_code: 'LAST' });
    expect(first.status).toBe(201);
    advance(30 * 60_000 - 1);
    expect((await read(org, first.body.id)).body.status).toBe('OPEN');
    expect(await expireDueSessions(checkout.service.context)).not.toContain(first.body.id);
    advance(1);
    expect((await read(org, first.body.id)).body.status).toBe('EXPIRED');
    expect((await pay(first.body.id, card(undefined, { email: 'late@example.com' }))).status).toBe(409);
    expect(await expireDueSessions(checkout.service.context)).toContain(first.body.id);
    expect(await expireDueSessions(checkout.service.context)).not.toContain(first.body.id);
    expect(await typesOf(first.body.id)).toEqual(['CheckoutSessionCreated', 'CheckoutSessionExpired']);
    expect((await streamOf(first.body.id))[1]!.data).toMatchObject({
      session_id: first.body.id,
      redemption_id: expect.stringMatching(/^red_/),
    });
    expect((await read(org, first.body.id)).body.status).toBe('EXPIRED');
    // The only place of the code is free again.
    const second = await create(org, { product_id: p.id, ...urls, promotion_code: 'LAST' });
    expect(second.status).toBe(201);
  });
});

describe('the background sweep', () => {
  it('expires due sessions on its interval, on the injected clock', async () => {
    const swept = await startServiceForTest(checkoutService, {
      infrastructure,
      config: { CATALOG_SERVICE_URL: catalog.service.url, CHECKOUT_SWEEP_INTERVAL_MS: '50' },
      now: () => clock,
    });
    try {
      const org = newOrg();
      const p = await product(org, ebook());
      const res = await call(swept.service.url, 'POST', '/v1/checkout/sessions', caller(org), {
        product_id: p.id,
        ...urls,
      });
      expect(res.status).toBe(201);
      advance(30 * 60_000);
      await eventually(async () => expect(await typesOf(res.body.id, swept)).toContain('CheckoutSessionExpired'));
    } finally {
      await swept.stop();
    }
  });
});

describe('POST /checkout/:id/pay', () => {
  it('pays with the success card: COMPLETE, order paid, event on checkout.events, redirect with the session id', async () => {
    const org = newOrg();
    const { id } = await session(org, {
      customer_email: 'pre@example.com',
      external_customer_id: 'u7',
      metadata: { ref: 'blog', utm_campaign: 'spring' },
    });
    const res = await pay(id, card(undefined, { email: 'typed@example.com', name: 'Mei Lin' }));
    expect(res).toEqual({
      status: 200,
      body: { status: 'complete', redirect_url: `https://shop.example/thanks?session=${id}` },
    });
    const got = (await read(org, id)).body;
    expect(got).toMatchObject({
      status: 'COMPLETE',
      customer_email: 'pre@example.com',
      customer_name: 'Mei Lin',
      completed_at: clock.toISOString(),
    });
    const completed = (await streamOf(id)).find((e) => e.type === 'CheckoutSessionCompleted')!;
    expect(completed.data).toMatchObject({
      organization: org,
      environment: 'SANDBOX',
      session_id: id,
      order_id: got.order_id,
      customer_id: null,
      customer_email: 'pre@example.com',
      customer_name: 'Mei Lin',
      external_customer_id: 'u7',
      product_id: got.product.id,
      mode: 'PAYMENT',
      amount_subtotal: 300,
      amount_total: 300,
      currency: 'TWD',
      promotion_code_id: null,
      redemption_id: null,
      discount_amount: 0,
      payment_intent_id: got.payment_intent_id,
      metadata: { ref: 'blog', utm_campaign: 'spring' },
      payment_method: { brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2034 },
    });
    expect((await pay(id, card())).status).toBe(409);
  });

  it('answers a declined card with 402 and its reason; the session stays OPEN and can be paid after', async () => {
    const org = newOrg();
    const { id } = await session(org);
    for (const [number, code] of [
      ['4000000000000002', 'card_declined'],
      ['4000000000009995', 'insufficient_funds'],
      ['4000000000000069', 'expired_card'],
    ]) {
      const res = await pay(id, card(number, { email: 'b@example.com' }));
      expect([res.status, res.body.error.code, res.body.error.details[0].code]).toEqual([
        402,
        'payment_required',
        code,
      ]);
      expect((await read(org, id)).body.status).toBe('OPEN');
    }
    const expired = await pay(id, card(undefined, { email: 'b@example.com', exp: '01/20' }));
    expect([expired.status, expired.body.error.details[0].code]).toEqual([402, 'invalid_expiry']);
    expect((await pay(id, card(undefined, { email: 'b@example.com', name: 'B' }))).status).toBe(200);
    expect((await read(org, id)).body).toMatchObject({
      status: 'COMPLETE',
      customer_email: 'b@example.com',
      customer_name: 'B',
    });
  });

  it('asks for the challenge step on 4000000000003220, then completes when it passes', async () => {
    const org = newOrg();
    const { id } = await session(org, { customer_email: 'c@example.com' });
    const first = await pay(id, card('4000000000003220'));
    expect(first).toEqual({ status: 200, body: { status: 'requires_action', next_action: { type: 'challenge' } } });
    const failed = await pay(id, card('4000000000003220', { challenge: 'fail' }));
    expect([failed.status, failed.body.error.details[0].code]).toEqual([402, 'authentication_failed']);
    expect((await pay(id, card('4000000000003220', { challenge: 'pass' }))).body.status).toBe('complete');
  });

  it('validates the form: card fields, email unless prefilled; 404 for an unknown session', async () => {
    const org = newOrg();
    const { id } = await session(org);
    const empty = await pay(id, {});
    expect(empty.status).toBe(422);
    expect(detailsOf(empty)).toEqual(['email: required', 'card_number: required', 'exp: required', 'cvc: required']);
    const bad = await pay(id, { email: 'x', card_number: 'abc', exp: '13/30', cvc: '12' });
    expect(detailsOf(bad).sort()).toEqual(
      ['card_number: invalid_format', 'cvc: invalid_format', 'email: invalid_format', 'exp: invalid_format'].sort(),
    );
    expect((await pay('cs_unknown', card())).status).toBe(404);
  });

  it('refuses to charge through the sandbox in Production unless configured for a demo', async () => {
    const org = newOrg();
    const p = await product(org, ebook({ environment: 'PRODUCTION' }));
    const live = caller(org, 'PRODUCTION');
    const res = await create(org, { product_id: p.id, ...urls, customer_email: 'l@example.com' }, live);
    expect(res.body.livemode).toBe(true);
    const refused = await pay(res.body.id, card());
    expect([refused.status, refused.body.error.code]).toEqual([402, 'payment_required']);
    expect(refused.body.error.message).toMatch(/real payment processor/);
    expect(await typesOf(res.body.id)).toEqual(['CheckoutSessionCreated']);
    // The demo instance shares the database but has its own schema: create there.
    const demoSession = await call(demo.service.url, 'POST', '/v1/checkout/sessions', live, {
      product_id: p.id,
      ...urls,
      customer_email: 'l@example.com',
    });
    expect((await pay(demoSession.body.id, card(), demo.service.url)).body.status).toBe('complete');
  });

  it('charges exactly once when the same session is paid twice at the same time', async () => {
    const org = newOrg();
    const { id } = await session(org, { customer_email: 'race@example.com' });
    const answers = await Promise.all([pay(id, card()), pay(id, card()), pay(id, card())]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const types = await typesOf(id);
    expect(types.filter((t) => t === 'PaymentAttemptStarted')).toHaveLength(1);
    expect(types.filter((t) => t === 'CheckoutSessionCompleted')).toHaveLength(1);
  });

  it('lets promotions confirm the redemption once the session completes', async () => {
    const org = newOrg();
    const p = await product(org, ebook());
    const code = await promotionCode(org, 'PAID10', { discount_type: 'FIXED_AMOUNT', discount_amount: 10 });
    const res = await create(org, {
      product_id: p.id,
      ...urls,
      promotion_code: 'PAID10',
      customer_email: 'p@example.com',
    });
    expect(res.body.amount).toBe(290);
    expect((await pay(res.body.id, card())).status).toBe(200);
    await eventually(async () => {
      const list = await call(promotions.service.url, 'GET', `/v1/promotion-codes/${code.id}/redemptions`, caller(org));
      expect(list.body.data.active_count).toBe(1);
    }, 30_000);
  });
});
