import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

describe('API keys at the gateway', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let productId: string;
  beforeAll(async () => {
    // The gateway's clock stands still: the 121 calls of the rate-limit case fall in one minute's
    // window however long they take.
    platform = await startPlatform({ now: () => new Date('2026-11-21T08:00:00.000Z') });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    productId = (await client.createProduct(org.id, plan({ slug: 'pro' }))).body.id;
  });
  afterAll(() => platform.stop());

  it('accepts a key in each of the three header forms', async () => {
    const { secret_key, publishable_key } = org.api_keys.sandbox;
    expect((await client.api('/products', { authorization: `Bearer ${secret_key}` })).status).toBe(200);
    expect((await client.api('/products', { 'x-service-secret-key': secret_key })).status).toBe(200);
    expect((await client.api('/products', { 'x-service-publishable-key': publishable_key })).status).toBe(200);
  });

  it.each([
    ['no key', {}],
    ['an empty bearer', { authorization: 'Bearer ' }],
    ['a malformed key', { authorization: 'Bearer sk_test_short' }],
    ['an unknown key', { authorization: `Bearer sk_test_${'a'.repeat(32)}` }],
    ['a Basic scheme', { authorization: 'Basic abc' }],
  ])('answers 401 unauthorized to %s', async (_case, headers) => {
    const response = await client.api('/products', headers as Record<string, string>);
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
  });

  it("answers the recur-tw SDK's calls in the shapes it reads: a wrong key, its key's rate limit", async () => {
    const text = (message: string) => ({ error: message, message, details: message });
    const wrong = await client.api('/products', { 'x-recur-publishable-key': `pk_test_${'a'.repeat(32)}` });
    expect([wrong.status, wrong.body]).toEqual([401, { code: 'unauthorized', ...text('Invalid API key') }]);

    const shop = await client.createOrganization('SDK shop');
    const headers = { 'x-recur-publishable-key': shop.api_keys.sandbox.publishable_key };
    const answers = [];
    for (let i = 0; i <= 120; i += 1) answers.push(await client.api('/products', headers));
    expect(answers.slice(0, 120).every((answer) => answer.status === 200)).toBe(true);
    const limited = answers[120]!;
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.body).toEqual({
      code: 'rate_limit_exceeded',
      ...text(expect.stringMatching(/^Rate limit of 120 requests per minute exceeded/) as unknown as string),
    });
    // The same key in the spec's own header gets the envelope.
    const envelope = await client.api('/products', {
      'x-service-publishable-key': shop.api_keys.sandbox.publishable_key,
    });
    expect([envelope.status, envelope.body.error.code]).toEqual([429, 'rate_limit_exceeded']);
  });

  it('answers 401 to a key sent in the header of the other kind', async () => {
    const { secret_key, publishable_key } = org.api_keys.sandbox;
    expect((await client.api('/products', { 'x-service-secret-key': publishable_key })).status).toBe(401);
    expect((await client.api('/products', { 'x-service-publishable-key': secret_key })).status).toBe(401);
  });

  it('enforces the access table: Publishable Keys read the list and by-slug, not a product by id', async () => {
    const pk = org.api_keys.sandbox.publishable_key;
    expect((await client.get('/products', pk)).status).toBe(200);
    expect((await client.get('/products/by-slug/pro', pk)).status).toBe(200);
    const byId = await client.get(`/products/${productId}`, pk);
    expect(byId.status).toBe(401);
    expect(byId.body.error.code).toBe('unauthorized');
    expect((await client.get(`/products/${productId}`, org.api_keys.sandbox.secret_key)).status).toBe(200);
  });

  it('counts each public request in the gateway metrics under its route pattern, never its path', async () => {
    const sk = org.api_keys.sandbox.secret_key;
    expect((await client.get(`/products/${productId}`, sk)).status).toBe(200);
    expect((await client.get(`/products/${productId}`, org.api_keys.sandbox.publishable_key)).status).toBe(401);
    const metrics = await (await fetch(`${platform.gatewayUrl}/metrics`)).text();
    expect(metrics).toMatch(/http_requests_total\{method="GET",route="\/v1\/products\/:id",status="200"/);
    expect(metrics).toMatch(/http_requests_total\{method="GET",route="\/v1\/products\/:id",status="401"/);
    expect(metrics).not.toContain(productId);
  });

  it('lets the key alone decide organization and environment: client identity headers are dropped', async () => {
    const other = await client.createOrganization('Other');
    const forged = await client.api(`/products/${productId}`, {
      authorization: `Bearer ${other.api_keys.sandbox.secret_key}`,
      'x-billing-organization': org.id,
      'x-billing-environment': 'SANDBOX',
      'x-billing-key-kind': 'secret',
      'x-billing-key-id': 'key_forged',
    });
    expect(forged.status).toBe(404);
  });

  it('answers 404 in the envelope for an unknown route behind a valid key', async () => {
    const response = await client.get('/nothing-here', org.api_keys.sandbox.secret_key);
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  });

  it('describes the implemented endpoints in OpenAPI 3.1 without a key', async () => {
    const response = await fetch(`${platform.gatewayUrl}/v1/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as any;
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/products', '/products/{id}', '/products/by-slug/{slug}']),
    );
    expect(document.components.schemas).toHaveProperty('Product');
  });

  it('describes the Kafka topics in AsyncAPI 3 without a key', async () => {
    const response = await fetch(`${platform.gatewayUrl}/v1/asyncapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as any;
    expect(document.asyncapi).toBe('3.0.0');
    expect(Object.keys(document.channels['checkout.events'].messages)).toContain('checkout.completed');
    expect(document.components.messages['checkout.completed'].payload.schema.properties.type.const).toBe(
      'checkout.completed',
    );
  });
});

describe('what the gateway forwards of the key', () => {
  let platform: Platform;
  let catalog: Server;
  let org: CreatedOrganization;
  const seen: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    // A stand-in catalog that answers every call and keeps the headers it was sent.
    catalog = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
    });
    await new Promise<void>((resolve) => catalog.listen(0, '127.0.0.1', resolve));
    platform = await startPlatform({
      config: { CATALOG_SERVICE_URL: `http://127.0.0.1:${(catalog.address() as AddressInfo).port}` },
    });
    org = await clientOf(platform.gatewayUrl).createOrganization();
  });
  afterAll(async () => {
    await platform?.stop();
    catalog?.close();
  });

  it('never hands a key to a service, in any header form; a key in the SDK header leaves only its mark', async () => {
    const { secret_key, publishable_key } = org.api_keys.sandbox;
    const forms: Array<[Record<string, string>, boolean]> = [
      [{ authorization: `Bearer ${secret_key}` }, false],
      [{ 'x-service-secret-key': secret_key }, false],
      [{ 'x-recur-secret-key': secret_key }, true],
      [{ 'x-service-publishable-key': publishable_key }, false],
      [{ 'x-recur-publishable-key': publishable_key, 'x-billing-recur-sdk': '1' }, true],
      [{ 'x-service-publishable-key': publishable_key, 'x-billing-recur-sdk': '1' }, false],
    ];
    for (const [headers, fromSdk] of forms) {
      seen.length = 0;
      expect((await fetch(`${platform.gatewayUrl}/v1/products`, { headers })).status).toBe(200);
      expect(seen).toHaveLength(1);
      const forwarded = JSON.stringify(seen[0]);
      expect(forwarded).not.toContain(secret_key);
      expect(forwarded).not.toContain(publishable_key);
      expect(seen[0]!['x-billing-organization']).toBe(org.id);
      expect(seen[0]!['x-billing-recur-sdk']).toBe(fromSdk ? '1' : undefined);
    }
  });
});
