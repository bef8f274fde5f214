import { ApiError, type CallerIdentity } from '@billing/contracts';
import { InternalClient, type ServiceUnderTest, startServiceForTest, testInternalSecret } from '@billing/runtime';
import { eventually, freePort } from '@billing/testing';
import { promotionsService } from '../src';
import { caller, client, newOrg } from './helpers';

jest.setTimeout(60000);

/** Checkout's side of the internal API: reserve through a client with its own breaker. */
describe('reserving through the caller-side breaker', () => {
  let port: number;
  let running: ServiceUnderTest | undefined;
  let promotions: InternalClient;
  const org = newOrg();
  const identity: CallerIdentity = {
    organization: org,
    environment: 'SANDBOX',
    keyKind: 'secret',
    keyId: 'key_checkout',
  };
  const reserve = (session: string) =>
    promotions.post<{ redemption_id?: string; error?: { code: string } }>(
      '/internal/promotion-codes/reserve',
      { code: 'spring', amount: 1000, checkout_session_id: session },
      identity,
    );

  beforeAll(async () => {
    port = await freePort();
    promotions = new InternalClient({
      name: 'promotions',
      baseUrl: `http://127.0.0.1:${port}`,
      secret: testInternalSecret(),
      timeoutMs: 1000,
      resetTimeoutMs: 500,
    });
  });
  afterAll(async () => {
    promotions.close();
    await running?.stop();
  });

  it('answers 503 quickly while promotions is down, opens, and recovers when it returns', async () => {
    for (let i = 0; i < 4; i++) {
      const started = Date.now();
      const failure = await reserve(`cs_down_${i}`).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ApiError);
      expect(failure).toMatchObject({ status: 503, code: 'service_unavailable' });
      expect(Date.now() - started).toBeLessThan(2000);
    }
    expect(promotions.isOpen).toBe(true);

    running = await startServiceForTest(promotionsService, { port });
    const { call } = client(() => running!);
    const coupon = await call('POST', '/v1/coupons', caller(org), {
      name: 'Spring',
      discount_type: 'FIXED_AMOUNT',
      discount_amount: 100,
    });
    await call('POST', '/v1/promotion-codes', caller(org), {
      coupon_id: coupon.body.id,
      code: 'SPRING',
      max_redemptions: 1,
    });

    const reserved = await eventually(
      async () => {
        const response = await reserve('cs_up_1');
        expect(response.status).toBe(201);
        return response;
      },
      10000,
      200,
    );
    expect(reserved.body.redemption_id).toMatch(/^red_/);

    // The service's own refusals come back as answers, not as failures of the breaker.
    const exhausted = await reserve('cs_up_2');
    expect(exhausted.status).toBe(409);
    expect(exhausted.body.error?.code).toBe('PROMO_CODE_EXHAUSTED');
    expect(promotions.isOpen).toBe(false);
  });
});
