import { catalogService } from '@billing/catalog';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { checkoutService } from '../src';
import { admin, call, caller, ebook, monthly, newOrg, signedFetch, urls } from './helpers';

jest.setTimeout(120_000);

let infrastructure: Infrastructure;
let catalog: ServiceUnderTest;
let promotions: ServiceUnderTest;
let checkout: ServiceUnderTest;
let clock = new Date();
const advance = (ms: number) => (clock = new Date(clock.getTime() + ms));

beforeAll(async () => {
  infrastructure = await testInfrastructure('checkout-promotion-codes-test');
  catalog = await startServiceForTest(catalogService, { infrastructure });
  promotions = await startServiceForTest(promotionsService, { infrastructure, now: () => clock });
  checkout = await startServiceForTest(checkoutService, {
    infrastructure,
    config: {
      CATALOG_SERVICE_URL: catalog.service.url,
      PROMOTIONS_SERVICE_URL: promotions.service.url,
      CHECKOUT_URL: 'https://pay.example/checkout',
      CHECKOUT_SWEEP_INTERVAL_MS: '3600000',
    },
    now: () => clock,
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
  call(url(), 'POST', '/v1/checkout/sessions', headers, body);
const read = (org: string, id: string) => call(url(), 'GET', `/v1/checkout/sessions/${id}`, caller(org));
const detailsOf = (res: { body: any }) => res.body.error.details.map((d: any) => `${d.path}: ${d.code}`);

async function product(org: string, fields: Record<string, unknown>) {
  const res = await call(catalog.service.url, 'POST', '/admin/products', admin(org), fields);
  expect(res.status).toBe(201);
  return res.body as { id: string; price: number };
}

async function sessionsOf(org: string) {
  const { store } = checkout.service.context;
  const { rows } = await store.database.query<{ count: string }>(
    `SELECT count(*) FROM ${store.tables.schema}.checkout_sessions WHERE organization = $1`,
    [org],
  );
  return Number(rows[0]!.count);
}

describe('allow_promotion_codes on POST /v1/checkout/sessions', () => {
  it('is false unless given; true is kept and read back, under its camelCase name too', async () => {
    const org = newOrg();
    const p = await product(org, ebook());
    const plain = await create(org, { product_id: p.id, ...urls });
    expect((await read(org, plain.body.id)).body.allow_promotion_codes).toBe(false);
    const allowed = await create(org, { product_id: p.id, ...urls, allow_promotion_codes: true });
    expect(allowed.status).toBe(201);
    expect((await read(org, allowed.body.id)).body).toMatchObject({ allow_promotion_codes: true, discount: null });
    const camel = await create(org, { product_id: p.id, ...urls, allowPromotionCodes: true });
    expect((await read(org, camel.body.id)).body.allow_promotion_codes).toBe(true);
  });

  it('refuses a value that is not a boolean, and promotion codes in SETUP mode, with 422 and creates nothing', async () => {
    const org = newOrg();
    const p = await product(org, ebook());
    for (const value of ['true', 1, null]) {
      const refused = await create(org, { product_id: p.id, ...urls, allow_promotion_codes: value });
      expect([refused.status, refused.body.error.code]).toEqual([422, 'validation_error']);
      expect(detailsOf(refused)).toEqual([expect.stringMatching(/^allow_promotion_codes: /)]);
    }
    const plan = await product(org, monthly());
    const setup = await create(org, { product_id: plan.id, ...urls, mode: 'SETUP', allow_promotion_codes: true });
    expect([setup.status, detailsOf(setup)]).toEqual([422, ['allow_promotion_codes: not_allowed']]);
    expect(await sessionsOf(org)).toBe(0);
  });
});

async function promotionCode(
  org: string,
  code: string,
  coupon: Record<string, unknown>,
  fields: Record<string, unknown> = {},
) {
  const c = await call(promotions.service.url, 'POST', '/v1/coupons', caller(org), coupon);
  expect(c.status).toBe(201);
  const p = await call(promotions.service.url, 'POST', '/v1/promotion-codes', caller(org), {
    code,
    coupon_id: c.body.id,
    ...fields,
  });
  expect(p.status).toBe(201);
}
const springSale = { name: 'Spring sale', discount_type: 'PERCENTAGE', discount_amount: 20 };

const streamTypes = async (id: string) =>
  (await checkout.service.context.store.readStream(`checkout_session-${id}`)).map((e) => e.type);
const showPage = async (id: string, language = 'en') =>
  (await signedFetch(`${url()}/checkout/${id}`, { headers: { 'accept-language': language } })).text();
const postPage = async (path: string, fields: Record<string, string>, language = 'en') => {
  const res = await signedFetch(`${url()}${path}`, {
    method: 'POST',
    headers: { 'accept-language': language },
    body: new URLSearchParams(fields),
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location'), page: await res.text() };
};
const applyCode = (id: string, code: string, language = 'en') =>
  postPage(`/checkout/${id}/promotion-code`, { code }, language);
const payPage = (id: string, fields: Record<string, string> = {}) =>
  postPage(`/checkout/${id}`, {
    email: 'mei@example.com',
    card_number: '4242424242424242',
    exp: '12/34',
    cvc: '123',
    ...fields,
  });

/** An organization selling a NT$480 product, with SPRING20 (20% off, "Spring sale"). */
async function shop() {
  const org = newOrg();
  const p = await product(org, ebook({ name: 'Tea box', price: 480 }));
  await promotionCode(org, 'SPRING20', springSale);
  const open = async (fields: Record<string, unknown> = { allow_promotion_codes: true }) => {
    const res = await create(org, { product_id: p.id, ...urls, ...fields });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  return { org, product: p, open };
}

describe('the promotion code field of the hosted page', () => {
  it('is offered only when the session allows it and no code is applied; a code given at creation shows by code and coupon name', async () => {
    const { open } = await shop();
    expect(await showPage(await open({}))).not.toContain('promotion-form');
    const offered = await showPage(await open());
    expect(offered).toContain('<label for="field-promotion_code">Promotion code</label>');
    expect(offered).toContain('id="apply-promotion">Apply</button>');
    const given = await showPage(await open({ allow_promotion_codes: true, promotion_code: 'SPRING20' }), 'zh-TW');
    expect(given).toContain('<div id="discount"><span>SPRING20 · Spring sale</span><span>−NT$96</span></div>');
    expect(given).toContain('付款 NT$384');
    // Neither a field for a second code nor a way to remove the merchant's.
    expect(given).not.toContain('promotion-form');
  });

  it('applies a valid code typed in any case: back to the page with the code, the coupon name and the discounted total, which is what pay charges', async () => {
    const { org, open } = await shop();
    const id = await open();
    const applied = await applyCode(id, ' spring20 ');
    expect([applied.status, applied.location]).toEqual([303, `/checkout/${id}`]);
    expect(await streamTypes(id)).toEqual(['CheckoutSessionCreated', 'PromotionCodeChanged']);
    expect((await read(org, id)).body).toMatchObject({
      amount_subtotal: 480,
      amount_total: 384,
      discount: { type: 'PERCENTAGE', amount: 96, label: '20% off' },
    });
    const zh = await showPage(id, 'zh-TW');
    expect(zh).toContain('<div id="discount"><span>SPRING20 · Spring sale</span><span>−NT$96</span></div>');
    expect(zh).toContain('<input type="hidden" name="shown_total" value="384" />');
    expect(zh).toContain('id="remove-promotion">移除 SPRING20</button>');
    expect(zh).not.toContain('field-promotion_code');

    const paid = await payPage(id, { shown_total: '384' });
    expect([paid.status, paid.location]).toEqual([303, `https://shop.example/thanks?session=${id}`]);
    const completed = (await checkout.service.context.store.readStream(`checkout_session-${id}`)).find(
      (e) => e.type === 'CheckoutSessionCompleted',
    );
    expect(completed!.data).toMatchObject({ amount_subtotal: 480, discount_amount: 96, amount_total: 384 });
    expect((await read(org, id)).body).toMatchObject({ status: 'COMPLETE', amount_total: 384 });
  });

  it('answers an unknown, expired or inapplicable code with the page again and a clear message in its language; nothing changes', async () => {
    const { org, open } = await shop();
    await promotionCode(org, 'BIGSPEND', springSale, { minimum_amount: 1000 });
    await promotionCode(org, 'SOON', springSale, { valid_until: new Date(clock.getTime() + 60_000).toISOString() });
    advance(2 * 60_000);
    const id = await open();
    const zh = '此優惠碼無法用於這筆訂單，請確認後再試一次。';
    for (const [code, language, message] of [
      ['NOPE', 'zh-TW', zh],
      ['SOON', 'zh-TW', zh],
      ['BIGSPEND', 'en', 'This code cannot be used for this purchase. Check it and try again.'],
      ['', 'en', 'Enter a promotion code.'],
    ] as const) {
      const refused = await applyCode(id, code, language);
      expect(refused.status).toBe(422);
      expect(refused.page).toContain(`<p class="field-error" id="promotion-error" role="alert">${message}</p>`);
      expect(refused.page).toMatch(new RegExp(`value="${code}"\\s+aria-invalid="true"`));
    }
    expect(await streamTypes(id)).toEqual(['CheckoutSessionCreated']);
    expect((await read(org, id)).body).toMatchObject({ amount_total: 480, discount: null });
    // A session that does not allow codes takes none, even posted by hand.
    const closed = await open({});
    const refused = await applyCode(closed, 'SPRING20');
    expect(refused.status).toBe(403);
    expect(refused.page).toContain('This checkout does not take promotion codes.');
    expect(await streamTypes(closed)).toEqual(['CheckoutSessionCreated']);
  });

  it('refuses a code on a paid or expired session, changing nothing', async () => {
    const { open } = await shop();
    const paid = await open();
    expect((await payPage(paid)).status).toBe(303);
    const late = await applyCode(paid, 'SPRING20');
    expect(late.status).toBe(409);
    expect(late.page).toContain('Already paid');
    const expired = await open();
    advance(30 * 60_000);
    const tooLate = await applyCode(expired, 'SPRING20', 'zh-TW');
    expect(tooLate.status).toBe(410);
    expect(tooLate.page).toContain('結帳已逾時');
    expect(await streamTypes(expired)).toEqual(['CheckoutSessionCreated']);
    expect((await streamTypes(paid)).filter((t) => t === 'PromotionCodeChanged')).toEqual([]);
  });

  it('of two codes applied at once records one and tells the other window; the loser’s place is free again', async () => {
    const { org, open } = await shop();
    await promotionCode(
      org,
      'ONLYONE',
      { name: 'Last one', discount_type: 'FIXED_AMOUNT', discount_amount: 100 },
      {
        max_redemptions: 1,
      },
    );
    const id = await open();
    const answers = await Promise.all([applyCode(id, 'SPRING20'), applyCode(id, 'ONLYONE')]);
    expect(answers.map((a) => a.status).sort()).toEqual([303, 409]);
    const loser = answers.find((a) => a.status === 409)!;
    expect(loser.page).toContain(
      'The code of this checkout was changed in another window. Check the total and try again.',
    );
    expect((await streamTypes(id)).filter((t) => t === 'PromotionCodeChanged')).toHaveLength(1);
    const { amount_total } = (await read(org, id)).body;
    expect([384, 380]).toContain(amount_total);
    // ONLYONE's one place is held only if it won.
    const other = await create(org, {
      product_id: (await read(org, id)).body.product.id,
      ...urls,
      promotion_code: 'ONLYONE',
    });
    expect(other.status).toBe(amount_total === 380 ? 422 : 201);
    expect((await payPage(id, { shown_total: String(amount_total) })).status).toBe(303);
    expect((await read(org, id)).body).toMatchObject({ status: 'COMPLETE', amount_total });

    // The same code from two windows: applied once, both sent back to the page.
    const twice = await open();
    const same = await Promise.all([applyCode(twice, 'SPRING20'), applyCode(twice, 'spring20')]);
    expect(same.map((a) => a.status)).toEqual([303, 303]);
    expect((await streamTypes(twice)).filter((t) => t === 'PromotionCodeChanged')).toHaveLength(1);
  });

  it('removes a code the buyer applied on the page, never the merchant’s', async () => {
    const { org, open } = await shop();
    const id = await open();
    expect((await applyCode(id, 'SPRING20')).status).toBe(303);
    const removed = await postPage(`/checkout/${id}/promotion-code`, { remove: 'SPRING20' });
    expect([removed.status, removed.location]).toEqual([303, `/checkout/${id}`]);
    expect((await read(org, id)).body).toMatchObject({ amount_total: 480, discount: null });
    expect(await showPage(id)).toContain('id="field-promotion_code"');

    const merchants = await open({ allow_promotion_codes: true, promotion_code: 'SPRING20' });
    const refused = await postPage(`/checkout/${merchants}/promotion-code`, { remove: 'SPRING20' });
    expect(refused.status).toBe(409);
    expect((await read(org, merchants)).body.amount_total).toBe(384);
    expect(await streamTypes(merchants)).toEqual(['CheckoutSessionCreated']);
  });

  it('charges nothing when the total changed after the page was shown, and shows the new one', async () => {
    const { org, open } = await shop();
    const id = await open();
    const shownBefore = await showPage(id);
    expect(shownBefore).toContain('name="shown_total" value="480"');
    // Another window applies the code.
    expect((await applyCode(id, 'SPRING20')).status).toBe(303);
    const stale = await payPage(id, { shown_total: '480' });
    expect(stale.status).toBe(409);
    expect(stale.page).toContain('The total is now NT$384. Nothing was charged. Check it and pay again.');
    expect(stale.page).toContain('name="shown_total" value="384"');
    expect(await streamTypes(id)).toEqual(['CheckoutSessionCreated', 'PromotionCodeChanged']);
    expect((await payPage(id, { shown_total: '384' })).status).toBe(303);
    expect((await read(org, id)).body).toMatchObject({ status: 'COMPLETE', amount_total: 384 });
  });
});
