import { IDENTITY_HEADERS, identityHeaders } from '@billing/contracts';
import { signInternalCall } from '@billing/signing';
import { eventually, signedHeaders, testInternalSecret } from '@billing/testing';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

type Reply = { status: number; body: any };

/**
 * Issue 12, part 3: services answer only calls the gateway (or a sibling service) signed with
 * the internal secret. Each attack goes straight to a service's port, as someone who reached it
 * would send it, and must be refused with 401 in the envelope and change nothing.
 */
describe('calls straight to a service port', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let victim: CreatedOrganization;
  let sk: string;
  let customerId: string;
  let promotionCodeId: string;
  let productId: string;

  const gateway = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const response = await fetch(`${platform.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const direct = async (
    base: string,
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined } as Reply;
  };
  const url = (service: 'catalog' | 'checkout' | 'billing' | 'promotions' | 'notifications') =>
    platform[service]!.service.url;

  beforeAll(async () => {
    platform = await startPlatform({ checkout: true, billing: true, notifications: true });
    client = clientOf(platform.gatewayUrl);
    victim = await client.createOrganization('Victim');
    sk = victim.api_keys.sandbox.secret_key;
    const product = await client.createProduct(victim.id, plan({ slug: 'pro' }));
    productId = product.body.id;
    const coupon = await gateway('POST', '/v1/coupons', {
      name: 'Half',
      discount_type: 'PERCENTAGE',
      discount_amount: 50,
      duration: 'once',
    });
    expect(coupon.status).toBe(201);
    const code = await gateway('POST', '/v1/promotion-codes', { coupon_id: coupon.body.id, code: 'HALF' });
    expect(code.status).toBe(201);
    promotionCodeId = code.body.data.id;
    const session = await gateway('POST', '/v1/checkout/sessions', {
      product_id: productId,
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cancel',
      customer_email: 'victim@example.com',
      external_customer_id: 'victim-1',
    });
    expect(session.status).toBe(201);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ card_number: '4242424242424242', exp: '12/34', cvc: '123', name: 'Victim' }),
    });
    expect(paid.status).toBe(200);
    customerId = await eventually(
      async () => {
        const customers = await gateway('GET', '/v1/customers');
        expect(customers.body.data).toHaveLength(1);
        return customers.body.data[0].id as string;
      },
      30000,
      200,
    );
  });
  afterAll(() => platform?.stop());

  /** The victim's identity, as the gateway would have set it for its Secret Key. */
  const victimIdentity = () => ({
    organization: victim.id,
    environment: 'SANDBOX' as const,
    keyKind: 'secret' as const,
    keyId: 'key_forged',
  });

  /** The ten attacks of the issue: read and change another organization's data, admin writes, reservations. */
  const attacks = () =>
    [
      { name: 'list the customers', base: url('billing'), method: 'GET', path: '/v1/customers' },
      { name: 'read a customer', base: url('billing'), method: 'GET', path: `/v1/customers/${customerId}` },
      {
        name: 'change a customer',
        base: url('billing'),
        method: 'PATCH',
        path: `/v1/customers/${customerId}`,
        body: { name: 'Mallory', email: 'mallory@example.com' },
      },
      {
        name: 'change a customer by external id',
        base: url('billing'),
        method: 'PATCH',
        path: '/v1/customers/external/victim-1',
        body: { metadata: { owned: 'yes' } },
      },
      {
        name: 'read entitlements by email',
        base: url('billing'),
        method: 'GET',
        path: '/v1/customers/entitlements?email=victim%40example.com',
      },
      {
        name: 'create a product without the admin token',
        base: url('catalog'),
        method: 'POST',
        path: '/admin/products',
        body: plan({ slug: 'forged' }),
        admin: true,
      },
      {
        name: 'archive a product without the admin token',
        base: url('catalog'),
        method: 'PATCH',
        path: `/admin/products/${productId}`,
        body: { active: false },
        admin: true,
      },
      {
        name: 'create a webhook endpoint without the admin token',
        base: url('notifications'),
        method: 'POST',
        path: '/admin/webhook_endpoints',
        body: { environment: 'SANDBOX', url: 'https://evil.example/hooks', events: ['checkout.completed'] },
        admin: true,
      },
      {
        name: 'reserve a redemption',
        base: url('promotions'),
        method: 'POST',
        path: '/internal/promotion-codes/reserve',
        body: { code: 'HALF', amount: 299, checkout_session_id: 'cs_forged' },
      },
      {
        name: 'resolve (create) a customer',
        base: url('billing'),
        method: 'POST',
        path: '/internal/customers/resolve',
        body: { email: 'mallory@example.com' },
      },
    ] as Array<{ name: string; base: string; method: string; path: string; body?: unknown; admin?: boolean }>;

  const forgedIdentity = (admin?: boolean): Record<string, string> =>
    admin ? { [IDENTITY_HEADERS.organization]: victim.id } : identityHeaders(victimIdentity());
  const sign = (
    method: string,
    path: string,
    admin: boolean | undefined,
    options: { secret?: string; at?: number } = {},
  ) =>
    signInternalCall(
      options.secret ?? testInternalSecret(),
      {
        scope: admin ? 'admin' : path.startsWith('/internal') ? 'service' : 'key',
        method,
        path,
        identity: admin ? { organization: victim.id } : victimIdentity(),
      },
      options.at ?? Date.now(),
    );

  const forgeries: Array<[string, (a: ReturnType<typeof attacks>[number]) => Record<string, string>]> = [
    ['forged identity headers, no signature', (a) => forgedIdentity(a.admin)],
    [
      'signed with another secret',
      (a) => sign(a.method, a.path, a.admin, { secret: 'not-the-internal-secret-not-the-internal-secret' }),
    ],
    ['signed two minutes ago', (a) => sign(a.method, a.path, a.admin, { at: Date.now() - 120_000 })],
    ['signed two minutes ahead', (a) => sign(a.method, a.path, a.admin, { at: Date.now() + 120_000 })],
    ['a signature replayed from another path', (a) => sign('GET', '/v1/products', a.admin)],
    ['a signature replayed with another method', (a) => sign(a.method === 'GET' ? 'POST' : 'GET', a.path, a.admin)],
    [
      'a signed identity with the organization swapped',
      (a) => ({
        ...sign(a.method, a.path, a.admin),
        [IDENTITY_HEADERS.organization]: 'org_someoneelse000000000000',
      }),
    ],
    [
      'a signature with a header repeated',
      (a) => ({ ...sign(a.method, a.path, a.admin), [IDENTITY_HEADERS.signature.toUpperCase()]: 'v1=00' }),
    ],
  ];

  for (const [forgery, headersFor] of forgeries) {
    it(`refuses all ten attacks with ${forgery}: 401 in the envelope`, async () => {
      for (const attack of attacks()) {
        const reply = await direct(attack.base, attack.method, attack.path, headersFor(attack), attack.body);
        expect({ attack: attack.name, status: reply.status, code: reply.body?.error?.code }).toEqual({
          attack: attack.name,
          status: 401,
          code: 'unauthorized',
        });
      }
    });
  }

  it('refuses a correctly signed public-key identity on admin and internal routes', async () => {
    for (const attack of attacks().filter((a) => a.admin || a.path.startsWith('/internal'))) {
      for (const keyKind of ['publishable', 'secret'] as const) {
        const headers = signInternalCall(testInternalSecret(), {
          scope: 'key',
          method: attack.method,
          path: attack.path,
          identity: { ...victimIdentity(), keyKind },
        });
        const reply = await direct(attack.base, attack.method, attack.path, headers, attack.body);
        expect({ attack: attack.name, keyKind, status: reply.status }).toEqual({
          attack: attack.name,
          keyKind,
          status: 401,
        });
      }
    }
  });

  it('refuses an admin-signed call on the public API, and a page-signed call anywhere but a page', async () => {
    const asAdmin = signInternalCall(testInternalSecret(), {
      scope: 'admin',
      method: 'GET',
      path: '/v1/customers',
      identity: { organization: victim.id },
    });
    expect((await direct(url('billing'), 'GET', '/v1/customers', asAdmin)).status).toBe(401);
    for (const path of ['/v1/customers', '/internal/customers/resolve', '/admin/webhook_endpoints']) {
      const asPage = signInternalCall(testInternalSecret(), { scope: 'page', method: 'GET', path });
      expect((await direct(url('billing'), 'GET', path, asPage)).status).toBe(401);
    }
  });

  it('changed nothing: the customer, products, webhook endpoints and redemptions are as they were', async () => {
    const customer = await gateway('GET', `/v1/customers/${customerId}`);
    expect(customer.body).toMatchObject({ email: 'victim@example.com' });
    expect(customer.body.name).not.toBe('Mallory');
    expect(customer.body.metadata?.owned).toBeUndefined();
    expect((await gateway('GET', '/v1/customers')).body.data).toHaveLength(1);
    const products = await gateway('GET', '/v1/products');
    expect(products.body.data.map((p: { slug: string; active: boolean }) => [p.slug, p.active])).toEqual([
      ['pro', true],
    ]);
    const endpoints = await client.admin('GET', `/organizations/${victim.id}/webhook_endpoints?environment=SANDBOX`);
    expect(endpoints.status).toBe(200);
    expect(endpoints.body.data).toEqual([]);
    const redemptions = await gateway('GET', `/v1/promotion-codes/${promotionCodeId}/redemptions`);
    expect(redemptions.status).toBe(200);
    expect(redemptions.body.data).toMatchObject({ total: 0, redemptions: [] });
  });

  it('still answers the same calls when the gateway signed them (the control)', async () => {
    const signed = (base: string, method: string, path: string, headers: Record<string, string>, body?: unknown) =>
      direct(base, method, path, signedHeaders(`${base}${path}`, method, headers), body);
    expect((await signed(url('billing'), 'GET', '/v1/customers', forgedIdentity())).status).toBe(200);
    expect((await signed(url('catalog'), 'GET', `/v1/products/${productId}`, forgedIdentity())).status).toBe(200);
  });

  it('keeps /healthz, /readyz and /metrics open on every service', async () => {
    for (const service of ['catalog', 'checkout', 'billing', 'promotions', 'notifications'] as const) {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        expect([service, path, (await fetch(`${url(service)}${path}`)).status]).toEqual([service, path, 200]);
      }
    }
  });

  it('serves the hosted pages through the gateway without a key, and refuses them straight from checkout', async () => {
    const session = await gateway('POST', '/v1/checkout/sessions', {
      product_id: productId,
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cancel',
    });
    expect(session.status).toBe(201);
    expect((await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`)).status).toBe(200);
    const straight = await fetch(`${url('checkout')}/checkout/${session.body.id}`);
    expect(straight.status).toBe(401);
    const paid = await direct(
      url('checkout'),
      'POST',
      `/checkout/${session.body.id}/pay`,
      {},
      {
        card_number: '4242424242424242',
        exp: '12/34',
        cvc: '123',
        email: 'mallory@example.com',
      },
    );
    expect(paid.status).toBe(401);
    expect((await gateway('GET', `/v1/checkout/sessions/${session.body.id}`)).body.status).toBe('OPEN');
  });

  /**
   * Issue 26, item 6: a signed 1 TWD refund replayed to checkout's port within the minute with
   * another body answered 201. The signature covers the body's SHA-256, and the service checks
   * the bytes it reads against it.
   */
  describe('a captured call replayed with another body', () => {
    const sendRaw = async (base: string, path: string, headers: Record<string, string>, body?: string) => {
      const response = await fetch(`${base}${path}`, { method: 'POST', headers, body });
      const text = await response.text();
      return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text } as Reply;
    };
    const signedPost = (path: string, body: string | undefined, scope: 'key' | 'page' = 'key') =>
      signInternalCall(testInternalSecret(), {
        scope,
        method: 'POST',
        path,
        identity: scope === 'key' ? victimIdentity() : undefined,
        body,
      });
    const coupon = (amount: number) =>
      JSON.stringify({
        name: `Replay ${amount}`,
        discount_type: 'PERCENTAGE',
        discount_amount: amount,
        duration: 'once',
      });
    const json = { 'content-type': 'application/json' };

    it('refuses a JSON call with another body, or with the body added or left out, and accepts the body signed', async () => {
      const headers = { ...json, ...signedPost('/v1/coupons', coupon(1)) };
      const replays = [
        await sendRaw(url('promotions'), '/v1/coupons', headers, coupon(99)),
        await sendRaw(url('promotions'), '/v1/coupons', headers, `${coupon(1)} `),
        await sendRaw(url('promotions'), '/v1/coupons', headers),
        await sendRaw(
          url('promotions'),
          '/v1/coupons',
          { ...json, ...signedPost('/v1/coupons', undefined) },
          coupon(99),
        ),
      ];
      for (const replay of replays) {
        expect(replay).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
      }
      const signed = await sendRaw(url('promotions'), '/v1/coupons', headers, coupon(1));
      expect(signed).toMatchObject({ status: 201, body: { name: 'Replay 1' } });
      const names = (await gateway('GET', '/v1/coupons')).body.data.map((c: { name: string }) => c.name);
      expect(names.filter((name: string) => name.startsWith('Replay'))).toEqual(['Replay 1']);
    });

    it('refuses a hosted-page form replayed with other fields', async () => {
      const path = '/checkout/cs_replayed';
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const fields = 'card_number=4242424242424242&exp=12%2F34&cvc=123';
      const headers = { ...form, ...signedPost(path, fields, 'page') };
      const replay = await sendRaw(url('checkout'), path, headers, 'card_number=4000000000000002&exp=12%2F34&cvc=123');
      expect(replay).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
      // The body signed reaches the page, which knows no such session.
      expect((await sendRaw(url('checkout'), path, headers, fields)).status).not.toBe(401);
    });
  });
});
