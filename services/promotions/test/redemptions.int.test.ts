import { CHECKOUT_TOPIC } from '@billing/contracts';
import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { promotionsService } from '../src';
import { caller, client, envelope, newOrg } from './helpers';

jest.setTimeout(120000);

let running: ServiceUnderTest;
beforeAll(async () => {
  running = await startServiceForTest(promotionsService);
});
afterAll(() => running.stop());

const { call } = client(() => running);

async function setUp(
  org: string,
  codeFields: Record<string, unknown> = {},
  couponFields: Record<string, unknown> = {},
) {
  const coupon = await call('POST', '/v1/coupons', caller(org), {
    name: 'Launch',
    discount_type: 'PERCENTAGE',
    discount_amount: 15,
    ...couponFields,
  });
  const code = await call('POST', '/v1/promotion-codes', caller(org), {
    code: 'LAUNCH',
    coupon_id: coupon.body.id,
    ...codeFields,
  });
  expect(code.status).toBe(201);
  return code.body.data;
}

let sessions = 0;
/** Unique per run: on Kafka a new consumer group also reads earlier runs' events. */
const run = Math.random().toString(36).slice(2, 8);
const reserve = (org: string, body: Record<string, unknown> = {}) =>
  call('POST', '/internal/promotion-codes/reserve', caller(org), {
    code: 'launch',
    amount: 999,
    checkout_session_id: `cs_${run}_${++sessions}`,
    ...body,
  });

const publish = (org: string, type: string, stream: string, data: Record<string, unknown>) =>
  running.infrastructure.bus.publish(CHECKOUT_TOPIC, [{ key: stream, value: envelope(type, stream, org, data) }]);

const completed = (org: string, fields: Record<string, unknown>) =>
  publish(org, 'checkout.completed', `checkout_session-${fields.session_id as string}`, {
    session_id: 'cs_x',
    order_id: `ord_${run}_${++sessions}`,
    customer_id: null,
    customer_email: 'a@example.com',
    external_customer_id: null,
    product_id: 'prod_1',
    amount_subtotal: 999,
    amount_total: 850,
    promotion_code_id: null,
    redemption_id: null,
    discount_amount: 149,
    metadata: null,
    ...fields,
  });

const redemptionsOf = async (org: string, id: string, query = '') =>
  (await call('GET', `/v1/promotion-codes/${id}/redemptions${query}`, caller(org))).body.data;

describe('reserve (internal API for checkout)', () => {
  it('validates with Secret semantics, reserves and answers the discount', async () => {
    const org = newOrg();
    const code = await setUp(org);
    const res = await reserve(org, { customer_id: 'cus_1', checkout_session_id: `cs_once_${run}` });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      redemption_id: expect.stringMatching(/^red_/),
      promotion_code_id: code.id,
      status: 'RESERVED',
      discount: {
        type: 'PERCENTAGE',
        amount: 149,
        discounted_amount: 850,
        label: '15% off',
        bonus_trial_days: 0,
        bonus_months: 0,
      },
      amount_after_discount: 850,
      coupon: {
        coupon_id: code.coupon_id,
        discount_type: 'PERCENTAGE',
        discount_amount: 15,
        duration: 'once',
        duration_in_months: null,
        bonus_months: 0,
      },
      coupon_name: 'Launch',
    });
    // The same session again is the same reservation (checkout retries behind its breaker).
    const again = await reserve(org, { customer_id: 'cus_1', checkout_session_id: `cs_once_${run}` });
    expect(again.status).toBe(200);
    expect(again.body.redemption_id).toBe(res.body.redemption_id);
    // RESERVED is not listed and not counted as a redemption yet, but holds the customer's place.
    expect(await redemptionsOf(org, code.id)).toEqual({ redemptions: [], total: 0, active_count: 0, voided_count: 0 });
    const second = await reserve(org, { customer_id: 'cus_1' });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('PROMO_CODE_ALREADY_USED');
    const validation = await call('POST', '/v1/promotion-codes/validate', caller(org, 'SANDBOX', 'publishable'), {
      code: 'LAUNCH',
      customer_id: 'cus_1',
    });
    expect(validation.body.error_code).toBe('PROMO_CODE_ALREADY_USED');
  });

  it('answers validation failures in the error envelope', async () => {
    const org = newOrg();
    await setUp(org, { minimum_amount: 1000 });
    const res = await reserve(org, { amount: 999 });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('PROMO_CODE_MINIMUM_NOT_MET');
    expect((await reserve(org, { code: 'NOPE' })).body.error.code).toBe('PROMO_CODE_NOT_FOUND');
    expect((await reserve(org, { amount: undefined })).status).toBe(422);
  });

  it('gives exactly 10 of 50 concurrent reservations of a code capped at 10', async () => {
    const org = newOrg();
    const code = await setUp(org, { max_redemptions: 10, max_redemptions_per_customer: 50 });
    const replies = await Promise.all(Array.from({ length: 50 }, () => reserve(org, { customer_id: 'cus_many' })));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 409)).toHaveLength(40);
    expect(new Set(replies.filter((r) => r.status === 409).map((r) => r.body.error.code))).toEqual(
      new Set(['PROMO_CODE_EXHAUSTED']),
    );
    const validation = await call('POST', '/v1/promotion-codes/validate', caller(org), { code: 'LAUNCH' });
    expect(validation.body.error_code).toBe('PROMO_CODE_EXHAUSTED');
    const { rows } = await running.infrastructure.database.query<{ n: number }>(
      `SELECT count(*)::integer AS n FROM ${running.service.context.store.tables.schema}.redemptions
       WHERE promotion_code_id = $1 AND status = 'RESERVED'`,
      [code.id],
    );
    expect(rows[0]!.n).toBe(10);
  });
});

describe('redemptions driven by checkout events', () => {
  it('confirms on CheckoutSessionCompleted, voids on OrderRefunded, and lists with counts', async () => {
    const org = newOrg();
    const code = await setUp(org, { max_redemptions: 2 });
    const a = (await reserve(org, { customer_id: 'cus_a', checkout_session_id: `cs_a_${run}` })).body;
    const b = (await reserve(org, { customer_id: 'cus_b', checkout_session_id: `cs_b_${run}` })).body;
    await completed(org, {
      session_id: `cs_a_${run}`,
      order_id: `ord_a_${run}`,
      customer_id: 'cus_a',
      redemption_id: a.redemption_id,
    });
    await completed(org, {
      session_id: `cs_b_${run}`,
      order_id: `ord_b_${run}`,
      customer_id: 'cus_b',
      redemption_id: b.redemption_id,
    });
    await eventually(async () => expect((await redemptionsOf(org, code.id)).active_count).toBe(2), 30000);
    const read = await call('GET', `/v1/promotion-codes/${code.id}`, caller(org));
    expect(read.body.data.current_redemptions).toBe(2);
    await publish(org, 'order.refunded', `order-ord_a_${run}`, {
      order_id: `ord_a_${run}`,
      redemption_id: a.redemption_id,
    });
    await eventually(async () => expect((await redemptionsOf(org, code.id)).voided_count).toBe(1), 30000);
    const listed = await redemptionsOf(org, code.id);
    expect(listed).toMatchObject({ total: 2, active_count: 1, voided_count: 1 });
    expect(listed.redemptions).toEqual(
      expect.arrayContaining([
        {
          id: a.redemption_id,
          promotion_code_id: code.id,
          customer_id: 'cus_a',
          order_id: `ord_a_${run}`,
          discount_amount: 149,
          status: 'VOIDED',
          redeemed_at: expect.any(String),
        },
        expect.objectContaining({ id: b.redemption_id, status: 'ACTIVE', order_id: `ord_b_${run}` }),
      ]),
    );
    expect((await redemptionsOf(org, code.id, '?status=ACTIVE')).redemptions).toHaveLength(1);
    expect((await redemptionsOf(org, code.id, '?customerId=cus_a')).redemptions.map((r: any) => r.id)).toEqual([
      a.redemption_id,
    ]);
    expect((await redemptionsOf(org, code.id, '?limit=1&offset=1')).redemptions).toHaveLength(1);
    // The void gave the place back; DELETE deactivates and keeps the redemptions.
    expect((await reserve(org, { customer_id: 'cus_c' })).status).toBe(201);
    await call('DELETE', `/v1/promotion-codes/${code.id}`, caller(org));
    expect((await redemptionsOf(org, code.id)).total).toBe(2);
    const list = await call('GET', `/v1/promotion-codes/${code.id}/redemptions`, caller(org));
    expect([list.body.success, list.body.livemode]).toEqual([true, false]);
    expect((await call('GET', `/v1/promotion-codes/${code.id}/redemptions`, caller(newOrg()))).status).toBe(404);
  });

  it('releases on CheckoutSessionExpired and through the internal API', async () => {
    const org = newOrg();
    const code = await setUp(org, { max_redemptions: 1 });
    const first = (await reserve(org, { checkout_session_id: `cs_exp_${run}` })).body;
    expect((await reserve(org)).body.error.code).toBe('PROMO_CODE_EXHAUSTED');
    await publish(org, 'checkout.expired', `checkout_session-cs_exp_${run}`, {
      session_id: `cs_exp_${run}`,
      redemption_id: first.redemption_id,
    });
    let second: any;
    await eventually(async () => {
      second = await reserve(org, { checkout_session_id: `cs_next_${run}` });
      expect(second.status).toBe(201);
    }, 30000);
    const released = await call('POST', `/internal/redemptions/${second.body.redemption_id}/release`, caller(org));
    expect(released.status).toBe(200);
    expect(released.body).toEqual({
      redemption_id: second.body.redemption_id,
      promotion_code_id: code.id,
      status: 'RELEASED',
    });
    expect((await call('POST', `/internal/redemptions/red_missing/release`, caller(org))).status).toBe(404);
    expect((await reserve(org)).status).toBe(201);
    expect((await redemptionsOf(org, code.id)).total).toBe(0);
  });

  it('learns new and existing customers from completed orders', async () => {
    const org = newOrg();
    const coupon = await call('POST', '/v1/coupons', caller(org), {
      name: 'x',
      discount_type: 'FIRST_PERIOD_PRICE',
      discount_amount: 1,
    });
    for (const [code, eligibility] of [
      ['NEWONLY', 'NEW_CUSTOMERS'],
      ['OLDONLY', 'EXISTING_CUSTOMERS'],
    ]) {
      await call('POST', '/v1/promotion-codes', caller(org), {
        code,
        coupon_id: coupon.body.id,
        customer_eligibility: eligibility,
      });
    }
    const validateAs = (code: string, who: Record<string, string>) =>
      call('POST', '/v1/promotion-codes/validate', caller(org), { code, amount: 299, ...who });
    expect((await validateAs('NEWONLY', { external_id: 'user-9' })).body).toMatchObject({
      valid: true,
      discount: { amount: 298, discounted_amount: 1, label: 'First period NT$1' },
    });
    await completed(org, { session_id: `cs_old_${run}`, order_id: `ord_old_${run}`, external_customer_id: 'user-9' });
    await eventually(async () => {
      expect((await validateAs('NEWONLY', { external_id: 'user-9' })).body.error_code).toBe(
        'PROMO_CODE_NEW_CUSTOMERS_ONLY',
      );
    }, 30000);
    expect((await validateAs('OLDONLY', { external_id: 'user-9' })).body.valid).toBe(true);
    expect((await validateAs('OLDONLY', { customer_id: 'cus_other' })).body.error_code).toBe(
      'PROMO_CODE_EXISTING_CUSTOMERS_ONLY',
    );
  });
});
