import { createServer } from 'node:http';
import { catalogService } from '@billing/catalog';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { checkoutService, expireDueSessions } from '../src';
import { admin, call, caller, card, ebook, newOrg, urls } from './helpers';

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
    // An hour: a product change reaches these sessions only by the catalog's events.
    PRODUCT_CACHE_TTL_MS: '3600000',
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

describe('the product as the catalog has it (docs/decisions/0015-checkout-catalog-reads.md)', () => {
  const patchProduct = (org: string, id: string, changes: Record<string, unknown>) =>
    call(catalog.service.url, 'PATCH', `/admin/products/${id}`, admin(org), changes);

  it('sells the new price once the catalog changed it, and nothing once archived, within two seconds', async () => {
    const org = newOrg();
    const p = await product(org, ebook({ slug: 'the-ebook' }));
    const first = await create(org, { product_id: p.id, ...urls });
    expect(first.body.amount).toBe(p.price);
    expect((await create(org, { product_slug: p.slug, ...urls })).body.amount).toBe(p.price);

    // By id and by slug in one check: either may be asked again without the change having arrived
    // (an answer that raced an earlier change is not kept), so only both at once show the cache was dropped.
    const amounts = async () =>
      [await create(org, { product_id: p.id, ...urls }), await create(org, { product_slug: p.slug, ...urls })].map(
        (res) => (res.status === 201 ? res.body.amount : res.status),
      );
    expect((await patchProduct(org, p.id, { price: p.price + 100 })).status).toBe(200);
    await eventually(async () => expect(await amounts()).toEqual([p.price + 100, p.price + 100]), 2000, 20);

    expect((await patchProduct(org, p.id, { active: false })).status).toBe(200);
    await eventually(async () => expect(await amounts()).toEqual([404, 404]), 2000, 20);
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

  it('refuses to charge in Production without a processor, unless the simulator is configured for a demo', async () => {
    const org = newOrg();
    const p = await product(org, ebook({ environment: 'PRODUCTION' }));
    const live = caller(org, 'PRODUCTION');
    const res = await create(org, { product_id: p.id, ...urls, customer_email: 'l@example.com' }, live);
    expect(res.body.livemode).toBe(true);
    const refused = await pay(res.body.id, card());
    expect([refused.status, refused.body.error.code]).toEqual([402, 'payment_required']);
    expect(refused.body.error.message).toMatch(/until the organization sets a payment processor/);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ code: 'processor_not_configured' })]);
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
    // A call that arrives once the charge is recorded answers with that same completion (a
    // double click is told the session is paid); one arriving while the charge is under way is
    // told to wait (409). Which of the two a call meets depends on timing; the charge is one.
    const completed = answers.filter((a) => a.status === 200);
    expect(completed.length).toBeGreaterThanOrEqual(1);
    expect(answers.filter((a) => a.status !== 200).map((a) => a.status)).toEqual(Array(3 - completed.length).fill(409));
    for (const answer of completed) expect(answer.body).toEqual(completed[0]!.body);
    expect(completed[0]!.body).toMatchObject({ status: 'complete' });
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

describe('a catalog that does not answer', () => {
  it('is waited for INTERNAL_CALL_TIMEOUT_MS, then the session is refused with 503', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const patient = await startServiceForTest(checkoutService, {
      infrastructure,
      config: { CATALOG_SERVICE_URL: `http://127.0.0.1:${port}`, INTERNAL_CALL_TIMEOUT_MS: '2500' },
    });
    try {
      const org = newOrg();
      const started = Date.now();
      const res = await call(patient.service.url, 'POST', '/v1/checkout/sessions', caller(org), {
        product_slug: 'pro',
        ...urls,
      });
      // Past the 1.5 s default: only the setting makes it wait this long.
      expect(Date.now() - started).toBeGreaterThanOrEqual(2400);
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ code: 'service_unavailable', message: 'catalog is unavailable' });
    } finally {
      await patient.stop();
      silent.closeAllConnections();
      silent.close();
    }
  });
});
