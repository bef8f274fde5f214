import { Coupon, PromotionCode, ValidationResult } from '@billing/contracts';
import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { promotionsService } from '../src';
import { admin, caller, client, envelope, newOrg } from './helpers';
import { newId } from '@billing/contracts';

jest.setTimeout(120000);

let running: ServiceUnderTest;
let clock = Date.parse('2026-03-01T00:00:00.000Z');
const tick = (ms = 1000) => (clock += ms);
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  running = await startServiceForTest(promotionsService, { now: () => new Date(clock) });
});
afterAll(() => running.stop());

const { call } = client(() => running);
const couponBody = (fields: Record<string, unknown> = {}) => ({
  name: 'Spring sale',
  discount_type: 'PERCENTAGE',
  discount_amount: 20,
  ...fields,
});

async function coupon(org: string, fields: Record<string, unknown> = {}) {
  tick();
  const res = await call('POST', '/v1/coupons', caller(org), couponBody(fields));
  expect(res.status).toBe(201);
  return res.body;
}
async function code(org: string, fields: Record<string, unknown> = {}) {
  tick();
  const couponId = (fields.coupon_id as string | undefined) ?? (await coupon(org)).id;
  const res = await call('POST', '/v1/promotion-codes', caller(org), {
    code: 'SPRING20',
    coupon_id: couponId,
    ...fields,
  });
  expect(res.status).toBe(201);
  return res.body.data;
}
const validateCode = (org: string, body: Record<string, unknown>, kind: 'secret' | 'publishable' = 'secret') =>
  call('POST', '/v1/promotion-codes/validate', caller(org, 'SANDBOX', kind), body);

describe('coupons', () => {
  it('creates a coupon with Stripe-like defaults', async () => {
    const org = newOrg();
    const res = await call('POST', '/v1/coupons', caller(org), couponBody({ metadata: { campaign: 'spring' } }));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      object: 'coupon',
      id: expect.stringMatching(/^cpn_[0-9A-Za-z]{24}$/),
      name: 'Spring sale',
      discount_type: 'PERCENTAGE',
      discount_amount: 20,
      duration: 'once',
      duration_in_months: null,
      applies_to_all_products: true,
      product_ids: [],
      bonus_trial_days: 0,
      bonus_months: 0,
      active: true,
      metadata: { campaign: 'spring' },
      created_at: iso(clock),
      updated_at: iso(clock),
      livemode: false,
    });
    expect(Coupon.parse(res.body)).toEqual(res.body);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a percentage over 100', { discount_amount: 101 }, 'discount_amount'],
    ['a percentage of 0', { discount_amount: 0 }, 'discount_amount'],
    ['a fixed amount of 0', { discount_type: 'FIXED_AMOUNT', discount_amount: 0 }, 'discount_amount'],
    ['a fractional amount', { discount_amount: 1.5 }, 'discount_amount'],
    ['repeating without months', { duration: 'repeating' }, 'duration_in_months'],
    ['months without repeating', { duration: 'forever', duration_in_months: 3 }, 'duration_in_months'],
    ['restricted without products', { applies_to_all_products: false }, 'product_ids'],
    ['products while applying to all', { product_ids: ['prod_1'] }, 'product_ids'],
    ['an unknown discount type', { discount_type: 'BOGO' }, 'discount_type'],
    ['negative bonus days', { bonus_trial_days: -1 }, 'bonus_trial_days'],
    ['an unknown field', { percent_off: 3 }, ''],
  ])('rejects %s with 422', async (_name, fields, path) => {
    const res = await call('POST', '/v1/coupons', caller(newOrg()), couponBody(fields));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it('accepts a first-period price of 0 and a repeating coupon', async () => {
    const org = newOrg();
    expect((await coupon(org, { discount_type: 'FIRST_PERIOD_PRICE', discount_amount: 0 })).discount_amount).toBe(0);
    expect(await coupon(org, { duration: 'repeating', duration_in_months: 3 })).toMatchObject({
      duration: 'repeating',
      duration_in_months: 3,
    });
  });

  it('lists newest first with a cursor, and confines reads to the tenant', async () => {
    const org = newOrg();
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await coupon(org, { name: `C${i}` }));
    const first = await call('GET', '/v1/coupons?limit=2', caller(org));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', has_more: true, livemode: false });
    expect(first.body.data.map((c: { id: string }) => c.id)).toEqual([made[2].id, made[1].id]);
    const second = await call('GET', `/v1/coupons?limit=2&starting_after=${made[1].id}`, caller(org));
    expect(second.body.data.map((c: { id: string }) => c.id)).toEqual([made[0].id]);
    expect(second.body.has_more).toBe(false);
    expect((await call('GET', '/v1/coupons?limit=101', caller(org))).status).toBe(400);
    expect((await call('GET', `/v1/coupons/${made[0].id}`, caller(org))).body.id).toBe(made[0].id);
    expect((await call('GET', `/v1/coupons/${made[0].id}`, caller(newOrg()))).status).toBe(404);
    expect((await call('GET', `/v1/coupons/${made[0].id}`, caller(org, 'PRODUCTION'))).status).toBe(404);
    expect((await call('GET', '/v1/coupons', caller(newOrg()))).body.data).toEqual([]);
  });

  it('updates name, active and metadata only', async () => {
    const org = newOrg();
    const c = await coupon(org);
    tick();
    const res = await call('PATCH', `/v1/coupons/${c.id}`, caller(org), {
      name: 'Renamed',
      active: false,
      metadata: null,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Renamed', active: false, metadata: null, updated_at: iso(clock) });
    const immutable = await call('PATCH', `/v1/coupons/${c.id}`, caller(org), { discount_amount: 50 });
    expect(immutable.status).toBe(422);
    expect(immutable.body.error.details[0].code).toBe('unrecognized_keys');
    expect((await call('PATCH', `/v1/coupons/${c.id}`, caller(newOrg()), { name: 'x' })).status).toBe(404);
  });

  it('is created through the admin API with an environment', async () => {
    const org = newOrg();
    const res = await call('POST', '/admin/coupons', admin(org), { environment: 'PRODUCTION', ...couponBody() });
    expect(res.status).toBe(201);
    expect(res.body.livemode).toBe(true);
    expect((await call('GET', `/v1/coupons/${res.body.id}`, caller(org, 'PRODUCTION'))).status).toBe(200);
    expect((await call('POST', '/admin/coupons', {}, { environment: 'SANDBOX', ...couponBody() })).status).toBe(401);
    expect((await call('POST', '/admin/coupons', admin(org), couponBody())).status).toBe(422);
  });

  it('requires the identity headers and a Secret Key', async () => {
    expect((await call('GET', '/v1/coupons', {})).status).toBe(401);
    expect((await call('GET', '/v1/coupons', caller(newOrg(), 'SANDBOX', 'publishable'))).status).toBe(401);
  });
});

describe('promotion codes', () => {
  it('creates a code with the spec defaults, wrapped in success/data', async () => {
    const org = newOrg();
    const c = await coupon(org);
    tick();
    const res = await call('POST', '/v1/promotion-codes', caller(org), { code: 'WELCOME10', coupon_id: c.id });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        object: 'promotion_code',
        id: expect.stringMatching(/^promo_[0-9A-Za-z]{24}$/),
        code: 'WELCOME10',
        coupon_id: c.id,
        active: true,
        valid_from: null,
        valid_until: null,
        max_redemptions: null,
        max_redemptions_per_customer: 1,
        current_redemptions: 0,
        minimum_amount: null,
        customer_eligibility: 'ALL',
        restricted_to_customer_id: null,
        metadata: null,
        created_at: iso(clock),
        updated_at: iso(clock),
        livemode: false,
      },
    });
    expect(PromotionCode.parse(res.body.data)).toEqual(res.body.data);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a lowercase code', { code: 'spring' }, 'code'],
    ['a code of 2 characters', { code: 'AB' }, 'code'],
    ['a code of 21 characters', { code: 'A'.repeat(21) }, 'code'],
    ['a code with a hyphen', { code: 'SPRING-20' }, 'code'],
    [
      'valid_until before valid_from',
      { valid_from: '2026-03-02T00:00:00Z', valid_until: '2026-03-01T00:00:00Z' },
      'valid_until',
    ],
    [
      'valid_until equal to valid_from',
      { valid_from: '2026-03-02T00:00:00Z', valid_until: '2026-03-02T00:00:00Z' },
      'valid_until',
    ],
    ['an unknown eligibility', { customer_eligibility: 'VIP' }, 'customer_eligibility'],
    ['max_redemptions of 0', { max_redemptions: 0 }, 'max_redemptions'],
    ['a negative minimum', { minimum_amount: -1 }, 'minimum_amount'],
  ])('rejects %s with 422', async (_name, fields, path) => {
    const org = newOrg();
    const c = await coupon(org);
    const res = await call('POST', '/v1/promotion-codes', caller(org), { code: 'OK20', coupon_id: c.id, ...fields });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it('needs a coupon of the same organization and environment (422 at coupon_id)', async () => {
    const org = newOrg();
    const other = await coupon(newOrg());
    const res = await call('POST', '/v1/promotion-codes', caller(org), { code: 'NOPE', coupon_id: other.id });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: 'coupon_id', code: 'coupon_not_found' })]);
  });

  it('keeps codes unique per organization and environment (409)', async () => {
    const org = newOrg();
    const first = await code(org, { code: 'UNIQUE1' });
    const dup = await call('POST', '/v1/promotion-codes', caller(org), { code: 'UNIQUE1', coupon_id: first.coupon_id });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('conflict');
    // Another organization, and another environment of the same one, may use it.
    await code(newOrg(), { code: 'UNIQUE1' });
    const prod = await call('POST', '/admin/coupons', admin(org), { environment: 'PRODUCTION', ...couponBody() });
    const inProd = await call('POST', '/v1/promotion-codes', caller(org, 'PRODUCTION'), {
      code: 'UNIQUE1',
      coupon_id: prod.body.id,
    });
    expect(inProd.status).toBe(201);
  });

  it('lists with filters and offset paging', async () => {
    const org = newOrg();
    const c1 = await coupon(org);
    const a = await code(org, { code: 'AAA', coupon_id: c1.id });
    const b = await code(org, { code: 'BBB', coupon_id: c1.id, active: false });
    const c = await code(org, { code: 'CCC' });
    const all = await call('GET', '/v1/promotion-codes', caller(org));
    expect(all.status).toBe(200);
    expect(all.body.success).toBe(true);
    expect(all.body.data).toMatchObject({ total: 3, limit: 20, offset: 0 });
    expect(all.body.data.promotion_codes.map((p: { id: string }) => p.id)).toEqual([c.id, b.id, a.id]);
    const byCoupon = await call('GET', `/v1/promotion-codes?coupon_id=${c1.id}`, caller(org));
    expect(byCoupon.body.data.total).toBe(2);
    const inactive = await call('GET', '/v1/promotion-codes?active=false', caller(org));
    expect(inactive.body.data.promotion_codes.map((p: { id: string }) => p.id)).toEqual([b.id]);
    const page = await call('GET', '/v1/promotion-codes?limit=1&offset=1', caller(org));
    expect(page.body.data).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.body.data.promotion_codes.map((p: { id: string }) => p.id)).toEqual([b.id]);
    expect((await call('GET', '/v1/promotion-codes?limit=101', caller(org))).status).toBe(400);
    expect((await call('GET', '/v1/promotion-codes?offset=-1', caller(org))).status).toBe(400);
    expect((await call('GET', '/v1/promotion-codes?active=yes', caller(org))).status).toBe(400);
  });

  it('reads, patches and deactivates; code and coupon_id are immutable', async () => {
    const org = newOrg();
    const p = await code(org);
    expect((await call('GET', `/v1/promotion-codes/${p.id}`, caller(org))).body).toEqual({ success: true, data: p });
    expect((await call('GET', `/v1/promotion-codes/${p.id}`, caller(newOrg()))).status).toBe(404);
    tick();
    const patched = await call('PATCH', `/v1/promotion-codes/${p.id}`, caller(org), {
      max_redemptions: 5,
      minimum_amount: 100,
      customer_eligibility: 'NEW_CUSTOMERS',
      valid_from: '2026-01-01T08:00:00+08:00',
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      max_redemptions: 5,
      minimum_amount: 100,
      customer_eligibility: 'NEW_CUSTOMERS',
      valid_from: '2026-01-01T00:00:00.000Z',
      updated_at: iso(clock),
    });
    const window = await call('PATCH', `/v1/promotion-codes/${p.id}`, caller(org), {
      valid_until: '2025-12-31T00:00:00Z',
    });
    expect(window.status).toBe(422);
    expect(window.body.error.details[0].path).toBe('valid_until');
    for (const immutable of [{ code: 'OTHER' }, { coupon_id: 'cpn_x' }]) {
      const res = await call('PATCH', `/v1/promotion-codes/${p.id}`, caller(org), immutable);
      expect(res.status).toBe(422);
      expect(res.body.error.details[0].code).toBe('unrecognized_keys');
    }
    const deleted = await call('DELETE', `/v1/promotion-codes/${p.id}`, caller(org));
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.active).toBe(false);
    expect((await call('DELETE', `/v1/promotion-codes/${p.id}`, caller(newOrg()))).status).toBe(404);
  });
});

describe('validation', () => {
  it('answers a valid code with the discount computed from the amount, case-insensitively', async () => {
    const org = newOrg();
    await code(org, { code: 'SPRING20', max_redemptions: 100, valid_until: '2026-12-31T00:00:00Z' });
    const res = await validateCode(org, { code: 'spring20', amount: 299 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: true,
      applies_to_all_products: true,
      discount: {
        type: 'PERCENTAGE',
        amount: 59,
        discounted_amount: 240,
        label: '20% off',
        bonus_trial_days: 0,
        bonus_months: 0,
      },
      coupon: {
        name: 'Spring sale',
        discount_type: 'PERCENTAGE',
        discount_amount: 20,
        duration: 'once',
        applies_to_all_products: true,
      },
      promotion_code: {
        code: 'SPRING20',
        valid_until: '2026-12-31T00:00:00.000Z',
        max_redemptions: 100,
        current_redemptions: 0,
      },
      livemode: false,
    });
    expect(ValidationResult.parse(res.body)).toEqual(res.body);
    const noAmount = await validateCode(org, { code: 'SPRING20' });
    expect(noAmount.body.discount).toEqual({
      type: 'PERCENTAGE',
      label: '20% off',
      bonus_trial_days: 0,
      bonus_months: 0,
    });
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>, string]>([
    ['NOT_FOUND', {}, { code: 'MISSING' }, 'PROMO_CODE_NOT_FOUND'],
    ['INACTIVE', { active: false }, {}, 'PROMO_CODE_INACTIVE'],
    ['NOT_STARTED', { valid_from: '2099-01-01T00:00:00Z' }, {}, 'PROMO_CODE_NOT_STARTED'],
    ['EXPIRED', { valid_until: '2026-01-01T00:00:00Z' }, {}, 'PROMO_CODE_EXPIRED'],
    ['RESTRICTED', { restricted_to_customer_id: 'cus_vip' }, { customer_id: 'cus_other' }, 'PROMO_CODE_RESTRICTED'],
    [
      'EXISTING_CUSTOMERS_ONLY',
      { customer_eligibility: 'EXISTING_CUSTOMERS' },
      { customer_id: 'cus_new' },
      'PROMO_CODE_EXISTING_CUSTOMERS_ONLY',
    ],
    ['MINIMUM_NOT_MET', { minimum_amount: 500 }, { amount: 499 }, 'PROMO_CODE_MINIMUM_NOT_MET'],
  ])('reports %s with 200 and valid false', async (_name, codeFields, body, errorCode) => {
    const org = newOrg();
    await code(org, { code: 'CHECKME', ...codeFields });
    const res = await validateCode(org, { code: 'CHECKME', ...body });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: false,
      error_code: errorCode,
      error_message: expect.any(String),
      livemode: false,
    });
  });

  it('reports an inactive coupon as INACTIVE', async () => {
    const org = newOrg();
    const p = await code(org);
    await call('PATCH', `/v1/coupons/${p.coupon_id}`, caller(org), { active: false });
    expect((await validateCode(org, { code: 'SPRING20' })).body.error_code).toBe('PROMO_CODE_INACTIVE');
  });

  it('checks product applicability and lists the applicable products from the catalog replica', async () => {
    const org = newOrg();
    const bus = running.infrastructure.bus;
    // Ids unique per run: on Kafka a new consumer group also reads earlier runs' events.
    const [pa, pb] = [newId('product'), newId('product')];
    await bus.publish('catalog.events', [
      {
        key: `product-${pa}`,
        value: envelope('ProductCreated', `product-${pa}`, org, productData(pa, 'Pro', 299)),
      },
      {
        key: `product-${pb}`,
        value: envelope('ProductCreated', `product-${pb}`, org, productData(pb, 'Team', 999)),
      },
      {
        key: `product-${pb}`,
        value: envelope(
          'ProductUpdated',
          `product-${pb}`,
          org,
          { product_id: pb, changes: { price: 1000 }, updated_at: iso(clock) },
          2,
        ),
      },
    ]);
    const c = await coupon(org, {
      discount_type: 'FIXED_AMOUNT',
      discount_amount: 100,
      applies_to_all_products: false,
      product_ids: [pa, pb],
    });
    await code(org, { code: 'ONLYPRO', coupon_id: c.id });
    const mismatch = await validateCode(org, { code: 'ONLYPRO', product_id: 'prod_other' });
    expect(mismatch.body.error_code).toBe('PROMO_CODE_PRODUCT_MISMATCH');
    await eventually(async () => {
      const res = await validateCode(org, { code: 'ONLYPRO', product_id: pa, amount: 299 });
      expect(res.body).toMatchObject({
        valid: true,
        applies_to_all_products: false,
        discount: { type: 'FIXED_AMOUNT', amount: 100, discounted_amount: 199, label: 'NT$100 off' },
        applicable_products: [
          { id: pa, name: 'Pro', price: 299, price_after_discount: 199, interval: 'month', interval_count: 1 },
          { id: pb, name: 'Team', price: 1000, price_after_discount: 900, interval: 'month', interval_count: 1 },
        ],
      });
    }, 30000);
  });

  it('masks every failure but ALREADY_USED with a Publishable Key, and needs a customer', async () => {
    const org = newOrg();
    await code(org, { code: 'MASKED', valid_until: '2026-01-01T00:00:00Z' });
    const noCustomer = await validateCode(org, { code: 'MASKED' }, 'publishable');
    expect(noCustomer.status).toBe(400);
    expect(noCustomer.body.error.code).toBe('bad_request');
    const expired = await validateCode(org, { code: 'MASKED', external_id: 'u1' }, 'publishable');
    expect(expired.body).toEqual({
      valid: false,
      error_code: 'PROMO_CODE_INVALID',
      error_message: 'This promotion code is not valid',
      livemode: false,
    });
    const missing = await validateCode(org, { code: 'NOPE', customer_id: 'cus_1' }, 'publishable');
    expect(missing.body.error_code).toBe('PROMO_CODE_INVALID');
  });

  it('rejects a bad body with 422', async () => {
    const org = newOrg();
    expect((await validateCode(org, { code: 'X', amount: -1 })).status).toBe(422);
    expect((await validateCode(org, { code: 'X', amount: 1.5 })).status).toBe(422);
    expect((await validateCode(org, {})).status).toBe(422);
  });
});

function productData(id: string, name: string, price: number) {
  return {
    product_id: id,
    organization: 'ignored',
    environment: 'SANDBOX',
    name,
    slug: null,
    description: null,
    type: 'SUBSCRIPTION',
    interval: 'month',
    interval_count: 1,
    price,
    currency: 'TWD',
    trial_days: null,
    display_order: null,
    metadata: null,
    created_at: iso(clock),
  };
}
