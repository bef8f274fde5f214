import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

/**
 * `GET /v1/customers/entitlements` as a paywall check through the gateway: a visitor who never
 * bought has no entitlements (not an error), every identifier an SDK has may be sent
 * (precedence customer_id, external_id, email), and only identifiers naming two different
 * customers are a 400.
 */
describe('entitlements through the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;
  let amy: { id: string };
  let ben: { id: string };
  /** The platform's clock: real time, held still while a test counts requests in one rate-limit window. */
  let heldAt: Date | undefined;

  const get = async (path: string, key = sk) => {
    const response = await fetch(`${platform.gatewayUrl}/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: response.status, body: (await response.json()) as any };
  };
  const entitlements = (query: Record<string, string>, key = sk) =>
    get(`/customers/entitlements?${new URLSearchParams(query)}`, key);
  const EMPTY = { status: 200, body: { entitlements: [], customer: null, subscription: null, credits: null } };

  /** A paid checkout for the plan `pro` (the buyer's side through the hosted page); the customer it made. */
  const subscribe = async (email: string, externalId?: string) => {
    const session = await fetch(`${platform.gatewayUrl}/v1/checkout/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        product_slug: 'pro',
        success_url: 'https://shop.example/thanks',
        cancel_url: 'https://shop.example/cancel',
        customer_email: email,
        ...(externalId ? { external_customer_id: externalId } : {}),
      }),
    }).then((r) => r.json() as Promise<any>);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ email, name: 'Buyer', card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    return eventually(
      async () => {
        const list = await get(`/customers?email=${encodeURIComponent(email)}`);
        expect(list.body.data).toEqual([expect.objectContaining({ subscriptions_count: 1 })]);
        return list.body.data[0] as { id: string };
      },
      30000,
      200,
    );
  };

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
      now: () => heldAt ?? new Date(),
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    expect((await client.createProduct(org.id, plan({ slug: 'pro' }))).status).toBe(201);
    amy = await subscribe('amy@example.com', 'user-amy');
    ben = await subscribe('ben@example.com');
  });
  afterAll(() => platform?.stop());

  const amysPro = () => ({
    status: 200,
    body: {
      entitlements: [expect.objectContaining({ product: 'pro', status: 'active' })],
      customer: expect.objectContaining({ id: amy.id, external_id: 'user-amy', email: 'amy@example.com' }),
      subscription: expect.objectContaining({ status: 'ACTIVE', product: expect.objectContaining({ slug: 'pro' }) }),
      credits: { balance: 0 },
    },
  });

  it('answers 200 with no entitlements for an email that matches no customer', async () => {
    expect(await entitlements({ email: 'visitor@example.com' })).toEqual(EMPTY);
    expect(await entitlements({ external_id: 'user-nobody' })).toEqual(EMPTY);
    expect(await entitlements({ customer_id: 'cus_missing', email: 'visitor@example.com' })).toEqual(EMPTY);
  });

  it("gives a customer's entitlements for their customer_id and email together", async () => {
    const both = await entitlements({ customer_id: amy.id, email: 'AMY@example.com' });
    expect(both).toEqual(amysPro());
    const all = await entitlements({ customer_id: amy.id, external_id: 'user-amy', email: 'amy@example.com' });
    expect(all).toEqual(both);
    expect(await entitlements({ email: 'amy@example.com' })).toEqual(both);
  });

  it('answers 400 invalid_request when the identifiers name different customers', async () => {
    const conflicting: Record<string, string>[] = [
      { customer_id: amy.id, email: 'ben@example.com' },
      { external_id: 'user-amy', email: 'ben@example.com' },
      { customer_id: ben.id, external_id: 'user-amy', email: 'visitor@example.com' },
    ];
    for (const query of conflicting) {
      const res = await entitlements(query);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/different/) });
    }
  });

  it("ignores an identifier that matches nobody: an unknown external_id with a known email is that customer's", async () => {
    expect(await entitlements({ external_id: 'user-unknown', email: 'amy@example.com' })).toEqual(amysPro());
    const benOnly = await entitlements({
      customer_id: 'cus_missing',
      external_id: 'user-unknown',
      email: 'ben@example.com',
    });
    expect(benOnly.body.subscription).toMatchObject({ status: 'ACTIVE' });
    expect(benOnly.body.entitlements).toHaveLength(1);
  });

  it('answers 400 invalid_request for no identifier at all', async () => {
    const res = await get('/customers/entitlements');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  describe('with a Publishable Key (a front end)', () => {
    const pk = () => org.api_keys.sandbox.publishable_key;

    it('answers by external_id or customer_id with the products only, in the SDK header too', async () => {
      const byExternalId = await entitlements({ external_id: 'user-amy' }, pk());
      expect(byExternalId).toEqual({
        status: 200,
        body: {
          entitlements: [{ product: 'pro', product_id: expect.any(String), status: 'active' }],
          customer: { id: amy.id, external_id: 'user-amy' },
          subscription: null,
          credits: { balance: 0 },
        },
      });
      expect(await entitlements({ customer_id: amy.id }, pk())).toEqual(byExternalId);
      const viaSdkHeader = await fetch(`${platform.gatewayUrl}/v1/customers/entitlements?external_id=user-amy`, {
        headers: { 'x-recur-publishable-key': pk(), origin: 'https://shop.example' },
      });
      expect(viaSdkHeader.headers.get('access-control-allow-origin')).toBe('https://shop.example');
      expect(await viaSdkHeader.json()).toEqual(byExternalId.body);
      expect(await entitlements({ external_id: 'user-nobody' }, pk())).toEqual(EMPTY);
    });

    it('never answers by email, which would tell who is a customer', async () => {
      const queries: Record<string, string>[] = [
        { email: 'amy@example.com' },
        { external_id: 'user-amy', email: 'amy@example.com' },
      ];
      for (const query of queries) {
        const res = await entitlements(query, pk());
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/email/) });
      }
    });

    it('is limited per client IP: 30 a minute', async () => {
      // Held still, so that the 32 requests cannot straddle two windows of the minute.
      heldAt = new Date();
      try {
        let last = 0;
        for (let i = 0; i < 32; i += 1) last = (await entitlements({ external_id: `probe-${i}` }, pk())).status;
        expect(last).toBe(429);
        // The Secret Key is not limited per IP.
        expect((await entitlements({ external_id: 'user-amy' })).status).toBe(200);
      } finally {
        heldAt = undefined;
      }
    });
  });

  it("treats another organization's or environment's customer as absent", async () => {
    const other = await clientOf(platform.gatewayUrl).createOrganization('Other');
    expect(
      await entitlements({ customer_id: amy.id, email: 'amy@example.com' }, other.api_keys.sandbox.secret_key),
    ).toEqual(EMPTY);
    expect(await entitlements({ email: 'amy@example.com' }, org.api_keys.production.secret_key)).toEqual(EMPTY);
  });
});
