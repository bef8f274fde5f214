import { randomUUID } from 'node:crypto';
import { CHECKOUT_TOPIC, type DomainEventEnvelope, identityHeaders } from '@billing/contracts';
import { eventually, signedFetch } from '@billing/testing';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(120000);

/** The spec's promotion-code section, every endpoint and every error code, through the gateway. */
describe('promotion-code section through the gateway', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let sk: string;
  let couponId: string;
  let productA: string;
  let productB: string;
  const run = randomUUID().slice(0, 8);

  const call = (method: string, path: string, body?: unknown, key = sk) =>
    fetch(`${platform.gatewayUrl}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
  const validate = (body: Record<string, unknown>) => call('POST', '/promotion-codes/validate', body);
  const newCode = async (code: string, fields: Record<string, unknown> = {}, coupon = couponId) => {
    const created = await call('POST', '/promotion-codes', { coupon_id: coupon, code, ...fields });
    expect(created.status).toBe(201);
    return created.body.data as { id: string };
  };
  /** What checkout (issue 5) will do: reserve through the internal API, then complete on Kafka. */
  const reserve = (code: string, customer_id: string) =>
    signedFetch(`${platform.promotions!.service.url}/internal/promotion-codes/reserve`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...identityHeaders({ organization: org.id, environment: 'SANDBOX', keyKind: 'secret', keyId: 'key_checkout' }),
      },
      body: JSON.stringify({ code, customer_id, amount: 1000, checkout_session_id: `cs_${run}_${randomUUID()}` }),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
  const complete = (data: Record<string, unknown>) => {
    const session = `cs_${run}_${randomUUID()}`;
    const event: DomainEventEnvelope = {
      id: randomUUID(),
      type: 'checkout.completed',
      schema_version: 1,
      stream: `checkout_session-${session}`,
      stream_version: 1,
      global_position: 1,
      occurred_at: new Date().toISOString(),
      organization: org.id,
      environment: 'SANDBOX',
      data: {
        session_id: session,
        order_id: `ord_${run}_${randomUUID()}`,
        customer_id: null,
        customer_email: 'buyer@example.com',
        external_customer_id: null,
        product_id: productA,
        amount_subtotal: 1000,
        amount_total: 1000,
        promotion_code_id: null,
        redemption_id: null,
        discount_amount: 0,
        metadata: null,
        ...data,
      },
    };
    return platform.infrastructure.bus.publish(CHECKOUT_TOPIC, [{ key: event.stream, value: event }]);
  };

  beforeAll(async () => {
    platform = await startPlatform({ promotions: true });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    productA = (await client.createProduct(org.id, plan({ name: 'A', slug: 'a' }))).body.id;
    productB = (await client.createProduct(org.id, plan({ name: 'B', slug: 'b' }))).body.id;
    const coupon = await call('POST', '/coupons', {
      name: 'Ten',
      discount_type: 'PERCENTAGE',
      discount_amount: 10,
      duration: 'once',
    });
    expect(coupon.status).toBe(201);
    couponId = coupon.body.id;
  });
  afterAll(() => platform.stop());

  it('serves every coupon and promotion-code endpoint', async () => {
    expect((await call('GET', '/coupons')).body.data.map((c: { id: string }) => c.id)).toContain(couponId);
    expect((await call('GET', `/coupons/${couponId}`)).body).toMatchObject({ id: couponId, object: 'coupon' });
    expect((await call('PATCH', `/coupons/${couponId}`, { metadata: { campaign: 'x' } })).body.metadata).toEqual({
      campaign: 'x',
    });

    const { id } = await newCode('ENDPOINTS');
    expect((await call('GET', '/promotion-codes?active=true')).status).toBe(200);
    expect((await call('GET', `/promotion-codes/${id}`)).body).toMatchObject({
      success: true,
      data: { id, code: 'ENDPOINTS' },
    });
    expect((await call('PATCH', `/promotion-codes/${id}`, { max_redemptions: 5 })).body.data.max_redemptions).toBe(5);
    expect((await call('PATCH', `/promotion-codes/${id}`, { code: 'OTHER' })).status).toBe(422);
    expect((await call('DELETE', `/promotion-codes/${id}`)).body.data.active).toBe(false);
    expect((await call('GET', `/promotion-codes/${id}/redemptions`)).body).toEqual({
      success: true,
      data: { redemptions: [], total: 0, active_count: 0, voided_count: 0 },
      livemode: false,
    });
    expect((await call('GET', '/promotion-codes/promo_missing')).status).toBe(404);
    expect((await call('POST', '/promotion-codes', { coupon_id: couponId, code: 'no' })).status).toBe(422);
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['PROMO_CODE_NOT_FOUND', {}, { code: 'ABSENT' }],
    ['PROMO_CODE_INACTIVE', { active: false }, {}],
    ['PROMO_CODE_EXPIRED', { valid_from: '2020-01-01T00:00:00Z', valid_until: '2020-02-01T00:00:00Z' }, {}],
    ['PROMO_CODE_NOT_STARTED', { valid_from: '2099-01-01T00:00:00Z' }, {}],
    ['PROMO_CODE_MINIMUM_NOT_MET', { minimum_amount: 500 }, { amount: 499 }],
    ['PROMO_CODE_RESTRICTED', { restricted_to_customer_id: 'cus_vip' }, { customer_id: 'cus_else' }],
    [
      'PROMO_CODE_EXISTING_CUSTOMERS_ONLY',
      { customer_eligibility: 'EXISTING_CUSTOMERS' },
      { customer_id: 'cus_brand_new' },
    ],
  ])('answers %s on its condition', async (errorCode, codeFields, body) => {
    const code = `C${errorCode.slice(11, 20).replaceAll('_', '')}`;
    await newCode(code, codeFields);
    expect((await validate({ code, ...body })).body).toMatchObject({ valid: false, error_code: errorCode });
  });

  it('answers PROMO_CODE_PRODUCT_MISMATCH for a product the coupon does not cover', async () => {
    const narrow = await call('POST', '/coupons', {
      name: 'Only A',
      discount_type: 'FIXED_AMOUNT',
      discount_amount: 50,
      duration: 'once',
      applies_to_all_products: false,
      product_ids: [productA],
    });
    await newCode('ONLYA', {}, narrow.body.id);
    await eventually(async () => {
      const ok = await validate({ code: 'ONLYA', product_id: productA, amount: 299 });
      expect(ok.body).toMatchObject({
        valid: true,
        applicable_products: [{ id: productA, price_after_discount: 249 }],
      });
    }, 30000);
    expect((await validate({ code: 'ONLYA', product_id: productB })).body).toMatchObject({
      error_code: 'PROMO_CODE_PRODUCT_MISMATCH',
    });
  });

  it('answers PROMO_CODE_EXHAUSTED once the global cap is reserved', async () => {
    await newCode('CAPPED', { max_redemptions: 1 });
    expect((await reserve('CAPPED', 'cus_first')).status).toBe(201);
    expect((await validate({ code: 'CAPPED', customer_id: 'cus_second' })).body).toMatchObject({
      error_code: 'PROMO_CODE_EXHAUSTED',
    });
  });

  it('answers PROMO_CODE_ALREADY_USED and NEW_CUSTOMERS_ONLY after a paid checkout, ALREADY_USED even to a Publishable Key', async () => {
    await newCode('ONCE');
    await newCode('WELCOME', { customer_eligibility: 'NEW_CUSTOMERS' });
    const reserved = await reserve('ONCE', 'cus_buyer');
    expect(reserved.status).toBe(201);
    await complete({
      customer_id: 'cus_buyer',
      promotion_code_id: reserved.body.promotion_code_id,
      redemption_id: reserved.body.redemption_id,
    });
    await eventually(async () => {
      expect((await validate({ code: 'ONCE', customer_id: 'cus_buyer' })).body).toMatchObject({
        error_code: 'PROMO_CODE_ALREADY_USED',
      });
    }, 30000);
    // The order replica and the redemption are updated by separate effects: both are eventual.
    await eventually(async () => {
      expect((await validate({ code: 'WELCOME', customer_id: 'cus_buyer' })).body).toMatchObject({
        error_code: 'PROMO_CODE_NEW_CUSTOMERS_ONLY',
      });
    }, 30000);
    const masked = await call(
      'POST',
      '/promotion-codes/validate',
      { code: 'ONCE', customer_id: 'cus_buyer' },
      org.api_keys.sandbox.publishable_key,
    );
    expect(masked.body).toMatchObject({ valid: false, error_code: 'PROMO_CODE_ALREADY_USED' });
    const maskedOther = await call(
      'POST',
      '/promotion-codes/validate',
      { code: 'WELCOME', customer_id: 'cus_buyer' },
      org.api_keys.sandbox.publishable_key,
    );
    expect(maskedOther.body).toMatchObject({ valid: false, error_code: 'PROMO_CODE_INVALID' });
    const redemptions = await call('GET', `/promotion-codes/${reserved.body.promotion_code_id}/redemptions`);
    expect(redemptions.body.data).toMatchObject({ total: 1, active_count: 1, voided_count: 0 });
  });
});
