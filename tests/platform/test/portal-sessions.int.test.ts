import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180_000);

/**
 * `POST /v1/portal/sessions` (issue 15, part 1) and portal configurations through the admin
 * API (part 2), through the gateway: both namings, the precedence of the identifiers, every
 * portal error code of the spec, five active sessions per customer, Idempotency-Key replays.
 */
describe('portal sessions through the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;
  let client: ReturnType<typeof clientOf>;
  let clock = Date.parse('2026-11-23T05:00:00.000Z');
  const RETURN = 'https://shop.example/account';

  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );
  const post = async (body: unknown, headers: Record<string, string> = {}, key: string | null = sk) => {
    const response = await fetch(`${platform.gatewayUrl}/v1/portal/sessions`, {
      method: 'POST',
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        'content-type': 'application/json',
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined } as {
      status: number;
      headers: Headers;
      body: any;
    };
  };
  const portalError = (status: number, code: string) => ({
    status,
    body: { error: expect.objectContaining({ code, type: 'invalid_request_error', message: expect.any(String) }) },
  });

  /** A buyer who paid for the monthly plan: a customer with a subscription. */
  async function customer(email: string, externalId: string): Promise<string> {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cancel',
      customer_email: email,
      external_customer_id: externalId,
    });
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    return eventually(
      async () => {
        const found = await send('GET', `/customers/external/${externalId}`);
        expect(found.status).toBe(200);
        return found.body.id as string;
      },
      30_000,
      100,
    );
  }

  let ada: string;
  let bob: string;

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      now: () => new Date(clock),
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    await client.createProduct(org.id, plan({ slug: 'pro', price: 299 }));
    ada = await customer('ada@example.com', 'ada_1');
    bob = await customer('bob@example.com', 'bob_1');
  });
  afterAll(() => platform?.stop());

  it('opens a session from a snake_case body: the spec’s portal.session, expiring one hour later', async () => {
    const created = await post({ customer_id: ada, return_url: RETURN, locale: 'zh-TW' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      object: 'portal.session',
      id: expect.stringMatching(/^portal_session_[0-9A-Za-z]{24}$/),
      url: expect.stringMatching(new RegExp(`^${platform.gatewayUrl}/portal/portal_session_\\w+/[\\w-]{43}$`)),
      return_url: RETURN,
      customer_id: ada,
      configuration_id: null,
      locale: 'zh-TW',
      status: 'active',
      expires_at: '2026-11-23T06:00:00.000Z',
      accessed_at: null,
      created_at: '2026-11-23T05:00:00.000Z',
      livemode: false,
    });
    const read = await send('GET', `/portal/sessions/${created.body.id}`);
    expect(read).toEqual({ status: 200, body: created.body });
  });

  it('opens a session from the camelCase body server SDKs send', async () => {
    const byExternalId = await post({ externalId: 'bob_1', returnUrl: RETURN });
    expect(byExternalId.status).toBe(201);
    expect(byExternalId.body).toMatchObject({ customer_id: bob, return_url: RETURN, locale: null });
    const byCustomerId = await post({ customerId: ada, returnUrl: 'https://shop.example/other' });
    expect(byCustomerId.body).toMatchObject({ customer_id: ada, return_url: 'https://shop.example/other' });
    const byEmail = await post({ email: 'ADA@example.com', returnUrl: RETURN });
    expect(byEmail.body.customer_id).toBe(ada);
  });

  it('takes customer_id before external_id before email; a name that matches nobody gives way', async () => {
    expect((await post({ customer_id: ada, external_id: 'bob_1', return_url: RETURN })).body.customer_id).toBe(ada);
    expect((await post({ external_id: 'bob_1', email: 'ada@example.com', return_url: RETURN })).body.customer_id).toBe(
      bob,
    );
    expect(
      (await post({ customer_id: 'cus_nobody', email: 'bob@example.com', return_url: RETURN })).body.customer_id,
    ).toBe(bob);
  });

  it('400 invalid_param: no identifier, a bad field, an unknown field, two namings that disagree, bad JSON', async () => {
    expect(await post({ return_url: RETURN })).toMatchObject(portalError(400, 'invalid_param'));
    expect(await post({})).toMatchObject(portalError(400, 'invalid_param'));
    expect(await post({ customer_id: ada, return_url: RETURN, locale: 'fr' })).toMatchObject(
      portalError(400, 'invalid_param'),
    );
    expect(await post({ customer_id: ada, return_url: 'javascript:alert(1)' })).toMatchObject(
      portalError(400, 'invalid_param'),
    );
    expect(await post({ customer_id: 42, return_url: RETURN })).toMatchObject(portalError(400, 'invalid_param'));
    expect(await post({ customer_id: ada, return_url: RETURN, flow: 'x' })).toMatchObject(
      portalError(400, 'invalid_param'),
    );
    const conflicting = await post({ customer_id: ada, customerId: bob, return_url: RETURN });
    expect(conflicting).toMatchObject(portalError(400, 'invalid_param'));
    expect(conflicting.body.error.details[0].path).toBe('customer_id');
    expect(await post('{"customer_id":')).toMatchObject(portalError(400, 'invalid_param'));
    expect(await post({ customer_id: ada, return_url: RETURN, configuration_id: 'bpc_missing' })).toMatchObject(
      portalError(400, 'invalid_param'),
    );
  });

  it('400 missing_return_url without return_url and without a default; the default fills it in', async () => {
    expect(await post({ customer_id: ada })).toMatchObject(portalError(400, 'missing_return_url'));
    expect(await post({ customerId: ada })).toMatchObject(portalError(400, 'missing_return_url'));
  });

  it('401 invalid_api_key for a Publishable Key, a wrong key and no key', async () => {
    const body = { customer_id: ada, return_url: RETURN };
    expect(await post(body, {}, org.api_keys.sandbox.publishable_key)).toMatchObject(
      portalError(401, 'invalid_api_key'),
    );
    expect(await post(body, {}, 'sk_test_wrong')).toMatchObject(portalError(401, 'invalid_api_key'));
    expect(await post(body, {}, null)).toMatchObject(portalError(401, 'invalid_api_key'));
    const read = await fetch(`${platform.gatewayUrl}/v1/portal/sessions/portal_session_x`, {
      headers: { authorization: `Bearer ${org.api_keys.sandbox.publishable_key}` },
    });
    expect(read.status).toBe(401);
    expect(((await read.json()) as any).error).toMatchObject({
      code: 'invalid_api_key',
      type: 'invalid_request_error',
    });
  });

  it('404 customer_not_found, also for another environment’s or organization’s customer', async () => {
    expect(await post({ customer_id: 'cus_nobody', return_url: RETURN })).toMatchObject(
      portalError(404, 'customer_not_found'),
    );
    expect(await post({ email: 'nobody@example.com', external_id: 'nobody', return_url: RETURN })).toMatchObject(
      portalError(404, 'customer_not_found'),
    );
    expect(await post({ customer_id: ada, return_url: RETURN }, {}, org.api_keys.production.secret_key)).toMatchObject(
      portalError(404, 'customer_not_found'),
    );
    const other = await client.createOrganization('Other');
    expect(await post({ customer_id: ada, return_url: RETURN }, {}, other.api_keys.sandbox.secret_key)).toMatchObject(
      portalError(404, 'customer_not_found'),
    );
    expect((await send('GET', '/portal/sessions/portal_session_nobody')).status).toBe(404);
  });

  it('keeps five active sessions per customer: a sixth revokes the oldest', async () => {
    const carol = await customer('carol@example.com', 'carol_1');
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await post({ customer_id: carol, return_url: RETURN })).body.id);
    const statuses = await Promise.all(
      ids.map(async (id) => (await send('GET', `/portal/sessions/${id}`)).body.status),
    );
    expect(statuses).toEqual(['revoked', 'active', 'active', 'active', 'active', 'active']);
  });

  it('keeps five active sessions when eight are opened at once', async () => {
    const dave = await customer('dave@example.com', 'dave_1');
    const created = await Promise.all(Array.from({ length: 8 }, () => post({ customer_id: dave, return_url: RETURN })));
    expect(created.map((c) => c.status)).toEqual(Array(8).fill(201));
    const statuses = await Promise.all(
      created.map(async (c) => (await send('GET', `/portal/sessions/${c.body.id}`)).body.status as string),
    );
    expect(statuses.filter((s) => s === 'active')).toHaveLength(5);
    expect(statuses.filter((s) => s === 'revoked')).toHaveLength(3);
  });

  it('replays the same session for the same Idempotency-Key; another body with it is refused', async () => {
    const body = { customer_id: bob, return_url: RETURN };
    const first = await post(body, { 'idempotency-key': 'portal-1' });
    const again = await post(body, { 'idempotency-key': 'portal-1' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotency-replay')).toBe('true');
    const other = await post({ ...body, locale: 'en' }, { 'idempotency-key': 'portal-1' });
    expect(other).toMatchObject(portalError(400, 'idempotency_key_mismatch'));
    const fresh = await post(body, { 'idempotency-key': 'portal-2' });
    expect(fresh.body.id).not.toBe(first.body.id);
  });

  it('is expired one hour after creation, on the injected clock', async () => {
    const created = await post({ customer_id: bob, return_url: RETURN });
    clock += 60 * 60_000 - 1;
    expect((await send('GET', `/portal/sessions/${created.body.id}`)).body.status).toBe('active');
    clock += 1;
    expect((await send('GET', `/portal/sessions/${created.body.id}`)).body.status).toBe('expired');
  });

  describe('portal configurations (admin API)', () => {
    const admin = (method: string, path: string, body?: unknown) =>
      client.admin(method, `/organizations/${org.id}/portal_configurations${path}`, body);

    it('creates, lists, reads and updates configurations per environment; the first is the default', async () => {
      const first = await admin('POST', '', {
        environment: 'SANDBOX',
        business_profile: { name: 'Acme Cloud' },
        default_return_url: 'https://acme.example/billing',
        features: { cancel: { mode: 'immediately' } },
      });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({
        object: 'portal.configuration',
        id: expect.stringMatching(/^bpc_/),
        is_default: true,
        active: true,
        default_return_url: 'https://acme.example/billing',
        business_profile: { name: 'Acme Cloud', privacy_policy_url: null, terms_of_service_url: null },
        features: {
          invoice_history: { enabled: true },
          payment_method_update: { enabled: true },
          cancel: { enabled: true, mode: 'immediately' },
          subscription_update: { enabled: false, products: [] },
        },
        environment: 'SANDBOX',
        livemode: false,
      });
      const session = await post({ customer_id: ada });
      expect(session.body).toMatchObject({
        return_url: 'https://acme.example/billing',
        configuration_id: first.body.id,
      });

      const second = await admin('POST', '', {
        environment: 'SANDBOX',
        name: 'No cancel',
        default_return_url: 'https://acme.example/other',
        features: { cancel: { enabled: false } },
      });
      expect(second.body.is_default).toBe(false);
      const named = await post({ customer_id: ada, configurationId: second.body.id });
      expect(named.body).toMatchObject({ return_url: 'https://acme.example/other', configuration_id: second.body.id });

      const updated = await admin('PATCH', `/${second.body.id}`, {
        is_default: true,
        features: { subscription_update: { enabled: true, products: ['prod_a'] } },
      });
      expect(updated.body).toMatchObject({
        is_default: true,
        name: 'No cancel',
        features: { cancel: { enabled: false }, subscription_update: { enabled: true, products: ['prod_a'] } },
      });
      expect((await admin('GET', `/${first.body.id}`)).body.is_default).toBe(false);
      expect((await post({ customer_id: ada })).body.configuration_id).toBe(second.body.id);

      const listed = await admin('GET', '?environment=SANDBOX');
      expect(listed.body.data.map((c: { id: string }) => c.id).sort()).toEqual([first.body.id, second.body.id].sort());
      expect((await admin('GET', '?environment=PRODUCTION')).body.data).toEqual([]);
      // Production has no configuration: no default return URL there.
      expect(await post({ customer_id: 'cus_x' }, {}, org.api_keys.production.secret_key)).toMatchObject(
        portalError(400, 'missing_return_url'),
      );
    });

    it('refuses bad bodies and unknown configurations', async () => {
      expect(
        (await admin('POST', '', { environment: 'SANDBOX', features: { cancel: { mode: 'later' } } })).status,
      ).toBe(422);
      expect((await admin('POST', '', { environment: 'SANDBOX', default_return_url: 'ftp://x' })).status).toBe(422);
      expect((await admin('POST', '', { features: {} })).status).toBe(422);
      expect((await admin('GET', '/bpc_missing')).status).toBe(404);
      expect((await admin('PATCH', '/bpc_missing', { name: 'x' })).status).toBe(404);
      const inactive = await admin('POST', '', { environment: 'SANDBOX', active: false });
      expect(await post({ customer_id: ada, return_url: RETURN, configuration_id: inactive.body.id })).toMatchObject(
        portalError(400, 'invalid_param'),
      );
    });
  });
});
