import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

/** Promotion codes through the gateway: key access, Publishable masking and validation limits. */
describe('promotion codes through the gateway', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let clock = Date.parse('2026-11-21T08:00:00.000Z');
  const advance = (ms: number) => (clock += ms);

  const post = (path: string, key: string, body: unknown) =>
    fetch(`${platform.gatewayUrl}/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (response) => ({
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as any,
    }));

  beforeAll(async () => {
    platform = await startPlatform({ promotions: true, now: () => new Date(clock) });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    await client.createProduct(org.id, plan({ slug: 'pro' }));
    const coupon = await client.admin('POST', `/organizations/${org.id}/coupons`, {
      environment: 'SANDBOX',
      name: 'Launch',
      discount_type: 'PERCENTAGE',
      discount_amount: 20,
      duration: 'once',
    });
    expect(coupon.status).toBe(201);
    const code = await post('/promotion-codes', org.api_keys.sandbox.secret_key, {
      coupon_id: coupon.body.id,
      code: 'LAUNCH20',
    });
    expect(code.status).toBe(201);
    expect(code.body).toMatchObject({ success: true, data: { code: 'LAUNCH20', coupon_id: coupon.body.id } });
  });
  afterAll(() => platform.stop());

  it('keeps promotion-code management to Secret Keys', async () => {
    const pk = org.api_keys.sandbox.publishable_key;
    expect((await client.get('/promotion-codes', pk)).status).toBe(401);
    expect((await post('/promotion-codes', pk, { coupon_id: 'cpn_x', code: 'NOPE' })).status).toBe(401);
    expect((await client.get('/coupons', pk)).status).toBe(401);
    expect((await client.get('/promotion-codes', org.api_keys.sandbox.secret_key)).status).toBe(200);
  });

  it('validates with either key, masking every Publishable failure but ALREADY_USED', async () => {
    const ok = await post('/promotion-codes/validate', org.api_keys.sandbox.secret_key, {
      code: 'launch20',
      amount: 1000,
    });
    expect(ok.body).toMatchObject({ valid: true, discount: { type: 'PERCENTAGE', amount: 200 } });
    const unknownSecret = await post('/promotion-codes/validate', org.api_keys.sandbox.secret_key, { code: 'NOSUCH' });
    expect(unknownSecret.body).toMatchObject({ valid: false, error_code: 'PROMO_CODE_NOT_FOUND' });

    advance(61_000);
    const pk = org.api_keys.sandbox.publishable_key;
    const unknownPublic = await post('/promotion-codes/validate', pk, { code: 'NOSUCH', external_id: 'user_1' });
    expect(unknownPublic.body).toMatchObject({ valid: false, error_code: 'PROMO_CODE_INVALID' });
    const anonymous = await post('/promotion-codes/validate', pk, { code: 'LAUNCH20' });
    expect(anonymous.status).toBe(400);
  });

  it('limits a Publishable Key to 5 validations a minute per IP', async () => {
    advance(61_000);
    const pk = org.api_keys.sandbox.publishable_key;
    for (let i = 0; i < 5; i++) {
      expect(
        (await post('/promotion-codes/validate', pk, { code: 'LAUNCH20', external_id: `ip_user_${i}` })).status,
      ).toBe(200);
    }
    const limited = await post('/promotion-codes/validate', pk, { code: 'LAUNCH20', external_id: 'ip_user_9' });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limit_exceeded');
    expect(limited.headers.get('x-ratelimit-limit')).toBe('5');
  });

  it('limits a Publishable Key to 10 validations an hour per customer', async () => {
    const pk = org.api_keys.sandbox.publishable_key;
    for (let minute = 0; minute < 2; minute++) {
      advance(61_000); // a new per-IP window, the same hourly one
      for (let i = 0; i < 5; i++) {
        expect(
          (await post('/promotion-codes/validate', pk, { code: 'LAUNCH20', external_id: 'busy_user' })).status,
        ).toBe(200);
      }
    }
    advance(61_000);
    const limited = await post('/promotion-codes/validate', pk, { code: 'LAUNCH20', external_id: 'busy_user' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('10');
    expect((await post('/promotion-codes/validate', pk, { code: 'LAUNCH20', external_id: 'other_user' })).status).toBe(
      200,
    );
  });

  it('limits a Secret Key to 60 validations a minute per key', async () => {
    advance(61_000);
    const sk = org.api_keys.production.secret_key;
    for (let i = 0; i < 60; i++)
      expect((await post('/promotion-codes/validate', sk, { code: 'LAUNCH20' })).status).toBe(200);
    const limited = await post('/promotion-codes/validate', sk, { code: 'LAUNCH20' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('60');
  });
});
