import { catalogService } from '@billing/catalog';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { checkoutService } from '../src';
import { admin, call, caller, card, ebook, newOrg, signedFetch } from './helpers';

jest.setTimeout(120_000);

let infrastructure: Infrastructure;
let catalog: ServiceUnderTest;
let promotions: ServiceUnderTest;
let checkout: ServiceUnderTest;
const CHECKOUT_URL = 'https://pay.example/checkout';
const PAYMENT_LINK_URL = 'https://pay.example/pay';

beforeAll(async () => {
  infrastructure = await testInfrastructure('payment-links-test');
  catalog = await startServiceForTest(catalogService, { infrastructure });
  promotions = await startServiceForTest(promotionsService, { infrastructure });
  checkout = await startServiceForTest(checkoutService, {
    infrastructure,
    config: {
      CATALOG_SERVICE_URL: catalog.service.url,
      PROMOTIONS_SERVICE_URL: promotions.service.url,
      CHECKOUT_URL,
      PAYMENT_LINK_URL,
      CHECKOUT_SWEEP_INTERVAL_MS: '3600000',
    },
  });
});
afterAll(async () => {
  await checkout?.stop();
  await promotions?.stop();
  await catalog?.stop();
  await infrastructure?.close();
});

const url = () => checkout.service.url;
const create = (org: string, body: Record<string, unknown>, headers = caller(org)) =>
  call(url(), 'POST', '/v1/payment-links', headers, body);
const read = (org: string, id: string, headers = caller(org)) => call(url(), 'GET', `/v1/payment-links/${id}`, headers);
const streamOf = (stream: string) => checkout.service.context.store.readStream(stream);

async function product(org: string, fields: Record<string, unknown> = {}) {
  const res = await call(catalog.service.url, 'POST', '/admin/products', admin(org), ebook(fields));
  expect(res.status).toBe(201);
  return res.body as { id: string; slug: string | null; price: number; name: string };
}
async function link(org: string, body: Record<string, unknown> = {}) {
  const p = await product(org);
  const res = await create(org, { productId: p.id, ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string; url_id: string; url: string };
}
async function visit(urlId: string, query = '') {
  const res = await signedFetch(`${url()}/pay/${urlId}${query}`, { redirect: 'manual' });
  return {
    status: res.status,
    location: res.headers.get('location'),
    text: await res.text(),
    type: res.headers.get('content-type'),
  };
}
const sessionIdOf = (location: string | null) => location!.slice(`${CHECKOUT_URL}/`.length);
const sessionCreated = async (sessionId: string) =>
  (await streamOf(`checkout_session-${sessionId}`)).find((e) => e.type === 'CheckoutSessionCreated')!.data as Record<
    string,
    any
  >;

describe('POST /v1/payment-links', () => {
  it('creates a link from camelCase fields with the spec response', async () => {
    const org = newOrg();
    const p = await product(org, { slug: 'guide' });
    const res = await create(org, {
      productSlug: 'guide',
      promotionCode: 'SPRING',
      collectPaymentMethod: 'if_required',
      successUrl: 'https://shop.example/thanks',
      maxCompletions: 3,
      metadata: { campaign: 'spring' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      object: 'payment_link',
      id: expect.stringMatching(/^plink_/),
      url: `${PAYMENT_LINK_URL}/${res.body.url_id}`,
      url_id: expect.stringMatching(/^[0-9A-Za-z]{10}$/),
      active: true,
      product_id: p.id,
      product: { id: p.id, name: 'E-book', slug: 'guide', price: 300, currency: 'TWD', type: 'ONE_TIME' },
      promotion_code: 'SPRING',
      collect_payment_method: 'if_required',
      success_url: 'https://shop.example/thanks',
      max_completions: 3,
      metadata: { campaign: 'spring' },
      locale: null,
      environment: 'SANDBOX',
      view_count: 0,
      session_count: 0,
      completed_count: 0,
      created_at: expect.any(String),
      livemode: false,
    });
  });

  it('defaults: collect always, no success URL, unlimited, no metadata', async () => {
    const body = (await link(newOrg())) as any;
    expect(body).toMatchObject({
      collect_payment_method: 'always',
      success_url: null,
      max_completions: null,
      metadata: null,
      promotion_code: null,
    });
  });

  it('refuses bad bodies with 422', async () => {
    const org = newOrg();
    const p = await product(org);
    expect((await create(org, {})).body.error.details[0].path).toBe('productId');
    expect((await create(org, { productId: p.id, maxCompletions: 0 })).status).toBe(422);
    expect((await create(org, { productId: p.id, collectPaymentMethod: 'never' })).status).toBe(422);
    expect((await create(org, { productId: p.id, metadata: { a: 1 } })).status).toBe(422);
    expect((await create(org, { product_id: p.id })).status).toBe(422);
    const http = await create(org, { productId: p.id, successUrl: 'http://shop.example/ok' });
    expect(http.status).toBe(422);
    expect(http.body.error.details[0]).toMatchObject({ path: 'successUrl', code: 'invalid_url' });
    expect((await create(org, { productId: p.id, successUrl: 'http://localhost:3000/ok' })).status).toBe(201);
    const prod = await create(
      org,
      { productId: p.id, successUrl: 'http://localhost:3000/ok' },
      caller(org, 'PRODUCTION'),
    );
    expect(prod.status).toBe(422);
  });

  it('404 for an absent, archived or other organization product; 401 with a Publishable Key', async () => {
    const org = newOrg();
    const other = await product(newOrg());
    expect((await create(org, { productId: other.id })).status).toBe(404);
    expect((await create(org, { productSlug: 'nope' })).status).toBe(404);
    const p = await product(org);
    await call(catalog.service.url, 'PATCH', `/admin/products/${p.id}`, admin(org), { active: false });
    expect((await create(org, { productId: p.id })).status).toBe(404);
    expect((await create(org, { productId: p.id }, caller(org, 'PRODUCTION'))).status).toBe(404);
    expect((await create(org, { productId: other.id }, caller(org, 'SANDBOX', 'publishable'))).status).toBe(401);
  });
});

describe('GET, PATCH, DELETE /v1/payment-links', () => {
  it('reads a link of the caller only', async () => {
    const org = newOrg();
    const l = await link(org);
    expect((await read(org, l.id)).body.id).toBe(l.id);
    expect((await read(newOrg(), l.id)).status).toBe(404);
    expect((await read(org, l.id, caller(org, 'PRODUCTION'))).status).toBe(404);
    expect((await read(org, 'plink_missing')).status).toBe(404);
  });

  it('lists newest first with limit, starting_after, has_more and active', async () => {
    const org = newOrg();
    const a = await link(org);
    const b = await link(org);
    const c = await link(org);
    await call(url(), 'DELETE', `/v1/payment-links/${b.id}`, caller(org));
    await link(newOrg());
    const all = await call(url(), 'GET', '/v1/payment-links', caller(org));
    expect(all.body).toMatchObject({ object: 'list', has_more: false, livemode: false });
    expect(all.body.data.map((l: any) => l.id)).toEqual([c.id, b.id, a.id]);
    const page = await call(url(), 'GET', '/v1/payment-links?limit=1', caller(org));
    expect(page.body.data.map((l: any) => l.id)).toEqual([c.id]);
    expect(page.body.has_more).toBe(true);
    const next = await call(url(), 'GET', `/v1/payment-links?limit=2&starting_after=${c.id}`, caller(org));
    expect(next.body.data.map((l: any) => l.id)).toEqual([b.id, a.id]);
    expect(next.body.has_more).toBe(false);
    const active = await call(url(), 'GET', '/v1/payment-links?active=true', caller(org));
    expect(active.body.data.map((l: any) => l.id)).toEqual([c.id, a.id]);
    const inactive = await call(url(), 'GET', '/v1/payment-links?active=false', caller(org));
    expect(inactive.body.data.map((l: any) => l.id)).toEqual([b.id]);
    expect((await call(url(), 'GET', '/v1/payment-links?limit=101', caller(org))).status).toBe(400);
    expect((await call(url(), 'GET', '/v1/payment-links?limit=0', caller(org))).status).toBe(400);
    const unknown = await call(url(), 'GET', '/v1/payment-links?starting_after=plink_unknown', caller(org));
    expect([unknown.status, unknown.body.error.details[0].path]).toEqual([400, 'starting_after']);
  });

  it('updates from camelCase fields, null clears', async () => {
    const org = newOrg();
    const l = await link(org, { promotionCode: 'A', successUrl: 'https://shop.example/a', metadata: { k: 'v' } });
    const res = await call(url(), 'PATCH', `/v1/payment-links/${l.id}`, caller(org), {
      active: false,
      promotionCode: null,
      collectPaymentMethod: 'if_required',
      successUrl: null,
      maxCompletions: 5,
      metadata: null,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      active: false,
      promotion_code: null,
      collect_payment_method: 'if_required',
      success_url: null,
      max_completions: 5,
      metadata: null,
    });
    expect((await read(org, l.id)).body.active).toBe(false);
    const back = await call(url(), 'PATCH', `/v1/payment-links/${l.id}`, caller(org), { active: true });
    expect(back.body.active).toBe(true);
    const bad = await call(url(), 'PATCH', `/v1/payment-links/${l.id}`, caller(org), { successUrl: 'ftp://x' });
    expect(bad.status).toBe(422);
    expect((await call(url(), 'PATCH', `/v1/payment-links/${l.id}`, caller(org), { nope: 1 })).status).toBe(422);
    expect((await call(url(), 'PATCH', `/v1/payment-links/${l.id}`, caller(newOrg()), { active: false })).status).toBe(
      404,
    );
  });

  it('DELETE deactivates', async () => {
    const org = newOrg();
    const l = await link(org);
    const res = await call(url(), 'DELETE', `/v1/payment-links/${l.id}`, caller(org));
    expect(res).toEqual({ status: 200, body: { id: l.id, deleted: true } });
    expect((await read(org, l.id)).body.active).toBe(false);
    expect((await call(url(), 'DELETE', `/v1/payment-links/${l.id}`, caller(newOrg()))).status).toBe(404);
  });
});

describe('GET /pay/:url_id', () => {
  it('counts the visit, opens a session with link metadata, ref and utm_*, and redirects to its page', async () => {
    const org = newOrg();
    const l = await link(org, { metadata: { campaign: 'spring' }, successUrl: 'https://shop.example/ok' });
    const v = await visit(
      l.url_id,
      '?email=buyer@example.com&ref=friend&utm_source=news&utm_medium=email&utm_campaign=c1&utm_term=t&utm_content=x&other=1',
    );
    expect(v.status).toBe(303);
    expect(v.location).toMatch(new RegExp(`^${CHECKOUT_URL}/cs_`));
    const created = await sessionCreated(sessionIdOf(v.location));
    expect(created).toMatchObject({
      organization: org,
      environment: 'SANDBOX',
      customer_email: 'buyer@example.com',
      success_url: 'https://shop.example/ok',
      // "Cancel and return" leaves for a page that opens nothing and counts nothing.
      cancel_url: `${l.url}/canceled`,
      metadata: {
        campaign: 'spring',
        ref: 'friend',
        utm_source: 'news',
        utm_medium: 'email',
        utm_campaign: 'c1',
        utm_term: 't',
        utm_content: 'x',
      },
    });
    expect(Object.keys(created.metadata)).not.toContain('other');
    expect((await read(org, l.id)).body).toMatchObject({ view_count: 1, session_count: 1, completed_count: 0 });
    const page = await signedFetch(v.location!.replace(CHECKOUT_URL, `${url()}/checkout`));
    expect(page.status).toBe(200);
  });

  it('without parameters: no metadata, no email, a default thank-you success URL', async () => {
    const org = newOrg();
    const l = await link(org);
    const v = await visit(l.url_id);
    const created = await sessionCreated(sessionIdOf(v.location));
    expect(created).toMatchObject({ metadata: null, customer_email: null });
    expect(created.success_url).toBe(`${l.url}/thanks?session_id={CHECKOUT_SESSION_ID}`);
    const thanks = await signedFetch(`${url()}/pay/${l.url_id}/thanks?session_id=x`);
    expect(thanks.status).toBe(200);
    expect(await thanks.text()).toContain('Thank you');
  });

  it('applies the default code, `promo` overrides it, and a refused code opens the session at full price', async () => {
    const org = newOrg();
    for (const [code, amount] of [
      ['TEN', 10],
      ['FIFTY', 50],
    ] as const) {
      const c = await call(promotions.service.url, 'POST', '/v1/coupons', caller(org), {
        name: code,
        discount_type: 'FIXED_AMOUNT',
        discount_amount: amount,
      });
      expect(c.status).toBe(201);
      const pc = await call(promotions.service.url, 'POST', '/v1/promotion-codes', caller(org), {
        code,
        coupon_id: c.body.id,
        max_redemptions_per_customer: 100,
      });
      expect(pc.status).toBe(201);
    }
    const l = await link(org, { promotionCode: 'TEN' });
    const byDefault = await sessionCreated(sessionIdOf((await visit(l.url_id)).location));
    expect(byDefault.order.amount_total).toBe(290);
    const overridden = await sessionCreated(sessionIdOf((await visit(l.url_id, '?promo=FIFTY')).location));
    expect(overridden.order.amount_total).toBe(250);
    const refused = await visit(l.url_id, '?promo=NOSUCHCODE');
    expect(refused.status).toBe(303);
    const full = await sessionCreated(sessionIdOf(refused.location));
    expect(full.order.amount_total).toBe(300);
    expect(full.promotion_code).toBeNull();
  });

  it('an ignored malformed email; 404 page for an unknown link; 410 page for an inactive one', async () => {
    const org = newOrg();
    const l = await link(org);
    const v = await visit(l.url_id, '?email=not-an-email');
    expect((await sessionCreated(sessionIdOf(v.location))).customer_email).toBeNull();
    const unknown = await visit('zzzzzzzzzz');
    expect(unknown.status).toBe(404);
    expect(unknown.type).toMatch(/html/);
    await call(url(), 'DELETE', `/v1/payment-links/${l.id}`, caller(org));
    const inactive = await visit(l.url_id);
    expect(inactive.status).toBe(410);
    expect(inactive.type).toMatch(/html/);
    expect(inactive.text).toContain('no longer active');
    // A closed link's visit is not counted and opens nothing.
    const gone = await link(org);
    const goneProduct = (await read(org, gone.id)).body.product_id;
    await call(catalog.service.url, 'PATCH', `/admin/products/${goneProduct}`, admin(org), { active: false });
    // Checkout learns of the archive from the catalog's events (docs/decisions/0015-checkout-catalog-reads.md).
    const archived = await eventually(
      async () => {
        const visited = await visit(gone.url_id);
        expect(visited.status).toBe(410);
        return visited;
      },
      2000,
      20,
    );
    expect(archived.type).toMatch(/html/);
    expect((await read(org, l.id)).body).toMatchObject({ view_count: 1, session_count: 1 });
  });

  it('counts completed payments and closes at max_completions', async () => {
    const org = newOrg();
    const l = await link(org, { maxCompletions: 1 });
    const first = sessionIdOf((await visit(l.url_id, '?ref=blog&utm_source=x')).location);
    const second = sessionIdOf((await visit(l.url_id)).location);
    const paid = await call(url(), 'POST', `/checkout/${first}/pay`, {}, { email: 'b@example.com', ...card() });
    expect(paid.status).toBe(200);
    const completed = (await streamOf(`checkout_session-${first}`)).find((e) => e.type === 'CheckoutSessionCompleted')!;
    expect(completed.data).toMatchObject({ metadata: { ref: 'blog', utm_source: 'x' } });
    expect((await read(org, l.id)).body).toMatchObject({ view_count: 2, session_count: 2, completed_count: 1 });
    const linkEvents = (await streamOf(`payment_link-${l.id}`)).map((e) => e.type);
    expect(linkEvents.filter((t) => t === 'PaymentLinkCompleted')).toHaveLength(1);
    const closed = await visit(l.url_id);
    expect(closed.status).toBe(410);
    expect(closed.text).toContain('reached its limit');
    // A session opened before the limit was reached is not paid either: the link never sells more than its limit.
    const late = await call(url(), 'POST', `/checkout/${second}/pay`, {}, { email: 'c@example.com', ...card() });
    expect(late).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
    expect(late.body.error.message).toContain('reached its limit');
    expect((await streamOf(`checkout_session-${second}`)).map((e) => e.type)).not.toContain('PaymentAttemptStarted');
    const page = await signedFetch(`${url()}/checkout/${second}`);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('reached its limit');
    const posted = await signedFetch(`${url()}/checkout/${second}`, {
      method: 'POST',
      body: new URLSearchParams({ email: 'c@example.com', card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(posted.status).toBe(410);
    expect((await read(org, l.id)).body.completed_count).toBe(1);
  });
});
