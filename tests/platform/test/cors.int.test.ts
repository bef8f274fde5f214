import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(120000);

/**
 * Browser pages on a merchant's own origin call the Publishable-Key endpoints (the recur-tw SDK
 * does): preflights are answered without a key, answers carry `Access-Control-Allow-Origin` for
 * the page's origin unless the organization's allow-list (admin API) leaves it out, and
 * Secret-Key endpoints or Secret-Key calls never get a CORS answer. The SDK's `X-Recur-*` key
 * headers work as the spec's `X-Service-*` ones, and the product list is also under `products`.
 */
describe('CORS and key headers at the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let client: ReturnType<typeof clientOf>;
  const shop = 'https://shop.example';

  const preflight = (path: string, method: string, origin = shop) =>
    fetch(`${platform.gatewayUrl}/v1${path}`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': 'content-type,x-recur-publishable-key',
      },
    });
  const call = (path: string, headers: Record<string, string>) =>
    fetch(`${platform.gatewayUrl}/v1${path}`, { headers }).then(async (response) => ({
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as any,
    }));

  beforeAll(async () => {
    platform = await startPlatform({ config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' } });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Acme Tea');
    expect((await client.createProduct(org.id, plan({ slug: 'pro' }))).status).toBe(201);
  });
  afterAll(() => platform?.stop());

  describe('preflight', () => {
    it('is answered without a key for a Publishable-Key endpoint, for the asking origin, without credentials', async () => {
      for (const [path, method] of [
        ['/products', 'GET'],
        ['/checkout/sessions', 'POST'],
        ['/customers/entitlements', 'GET'],
        ['/promotion-codes/validate', 'POST'],
      ]) {
        const response = await preflight(path!, method!);
        expect(response.status).toBe(204);
        expect(response.headers.get('access-control-allow-origin')).toBe(shop);
        expect(response.headers.get('access-control-allow-methods')).toContain(method);
        expect(response.headers.get('access-control-allow-headers')).toMatch(/X-Recur-Publishable-Key/);
        expect(response.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
        expect(response.headers.get('access-control-allow-credentials')).toBeNull();
        expect(response.headers.get('vary')).toMatch(/Origin/);
      }
    });

    it('gets no CORS answer for a Secret-Key endpoint or a method a Publishable Key may not use', async () => {
      for (const [path, method] of [
        ['/customers', 'GET'],
        ['/products/prod_123', 'GET'],
        ['/payment-links', 'POST'],
        ['/products', 'DELETE'],
      ]) {
        const response = await preflight(path!, method!);
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.headers.get('access-control-allow-origin')).toBeNull();
      }
    });
  });

  describe('requests from a page', () => {
    it('with the SDK key header get the allow-origin answer and the products under data and products', async () => {
      const res = await call('/products', {
        'x-recur-publishable-key': org.api_keys.sandbox.publishable_key,
        origin: shop,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(shop);
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('access-control-expose-headers')).toMatch(/X-RateLimit-Remaining/);
      expect(res.body.data).toEqual([expect.objectContaining({ slug: 'pro', object: 'product' })]);
      expect(res.body.products).toEqual(res.body.data);
    });

    it("a refused key is still readable by the page (401 with allow-origin), in the SDK's words for its header", async () => {
      const res = await call('/products', { 'x-recur-publishable-key': 'pk_test_wrong', origin: shop });
      expect(res.status).toBe(401);
      expect(res.headers.get('access-control-allow-origin')).toBe(shop);
      // The recur-tw SDK reads `error` as text (docs/embedded-checkout.md); others get the envelope.
      expect([res.body.code, res.body.error]).toEqual(['unauthorized', 'Invalid API key']);
      const envelope = await call('/products', { 'x-service-publishable-key': 'pk_test_wrong', origin: shop });
      expect([envelope.status, envelope.body.error.code]).toEqual([401, 'unauthorized']);
    });

    it('with a Secret Key get no CORS answer, on a route that takes both keys too', async () => {
      const res = await call('/products', { authorization: `Bearer ${org.api_keys.sandbox.secret_key}`, origin: shop });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      const secretOnly = await call('/customers', {
        authorization: `Bearer ${org.api_keys.sandbox.secret_key}`,
        origin: shop,
      });
      expect(secretOnly.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  describe('allowed origins (admin API)', () => {
    afterAll(async () => {
      await client.admin('PATCH', `/organizations/${org.id}`, { allowed_origins: [] });
    });

    it('are set per organization and refuse other origins with 403 before anything happens', async () => {
      const set = await client.admin('PATCH', `/organizations/${org.id}`, {
        allowed_origins: [shop, 'http://localhost:5173'],
      });
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({ object: 'organization', allowed_origins: [shop, 'http://localhost:5173'] });
      expect((await client.admin('GET', `/organizations/${org.id}`)).body.allowed_origins).toEqual([
        shop,
        'http://localhost:5173',
      ]);
      const pk = { 'x-recur-publishable-key': org.api_keys.sandbox.publishable_key };

      const allowed = await call('/products', { ...pk, origin: 'http://localhost:5173' });
      expect(allowed.status).toBe(200);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');

      const other = await call('/products', { ...pk, origin: 'https://evil.example' });
      expect(other.status).toBe(403);
      expect(other.body.code).toBe('forbidden');
      expect(other.headers.get('access-control-allow-origin')).toBeNull();

      // A server sends no Origin: the allow-list is about browser pages.
      expect((await call('/products', pk)).status).toBe(200);

      // Another organization's list is its own.
      const other_org = await client.createOrganization('Other');
      const elsewhere = await call('/products', {
        'x-recur-publishable-key': other_org.api_keys.sandbox.publishable_key,
        origin: 'https://evil.example',
      });
      expect(elsewhere.status).toBe(200);
    });

    it('takes origins only (no path, http or https) and known fields only', async () => {
      for (const body of [
        { allowed_origins: ['https://shop.example/'] },
        { allowed_origins: ['https://shop.example/checkout'] },
        { allowed_origins: ['ftp://shop.example'] },
        { allowed_origins: 'https://shop.example' },
        { brand_color: 'green' },
        { logo_url: 'javascript:alert(1)' },
        { owner: 'me' },
      ]) {
        const res = await client.admin('PATCH', `/organizations/${org.id}`, body);
        expect(res.status).toBe(422);
        expect(res.body.error.code).toBe('validation_error');
      }
      expect((await client.admin('PATCH', '/organizations/org_missing', { brand_color: '#000000' })).status).toBe(404);
    });
  });

  describe('key headers', () => {
    it('accepts X-Recur-Secret-Key and X-Recur-Publishable-Key, each for its own kind of key', async () => {
      const { secret_key, publishable_key } = org.api_keys.sandbox;
      expect((await call('/products', { 'x-recur-secret-key': secret_key })).status).toBe(200);
      const product = (await call('/products', { 'x-recur-secret-key': secret_key })).body.data[0];
      expect((await call(`/products/${product.id}`, { 'x-recur-secret-key': secret_key })).status).toBe(200);
      expect((await call('/products', { 'x-recur-publishable-key': publishable_key })).status).toBe(200);
      expect((await call('/products', { 'x-recur-secret-key': publishable_key })).status).toBe(401);
      expect((await call('/products', { 'x-recur-publishable-key': secret_key })).status).toBe(401);
      expect((await call(`/products/${product.id}`, { 'x-recur-publishable-key': publishable_key })).status).toBe(401);
    });
  });
});
