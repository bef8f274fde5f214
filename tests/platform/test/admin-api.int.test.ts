import { ADMIN_TOKEN, clientOf, type Platform, plan, startPlatform } from '../src/platform';

describe('admin API', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  beforeAll(async () => {
    platform = await startPlatform();
    client = clientOf(platform.gatewayUrl);
  });
  afterAll(() => platform.stop());

  it('refuses a missing or wrong admin token with 401', async () => {
    const missing = await fetch(`${platform.gatewayUrl}/admin/v1/organizations`, { method: 'POST' });
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as any).error.code).toBe('unauthorized');
    expect((await client.admin('POST', '/organizations', { name: 'X' }, 'wrong')).status).toBe(401);
    expect((await client.admin('POST', '/organizations', { name: 'X' }, `${ADMIN_TOKEN}x`)).status).toBe(401);
  });

  it('creates an organization and shows its four keys once', async () => {
    const created = await client.admin('POST', '/organizations', { name: 'Acme' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^org_[0-9A-Za-z]{24}$/),
      name: 'Acme',
      api_keys: {
        sandbox: {
          secret_key: expect.stringMatching(/^sk_test_/),
          publishable_key: expect.stringMatching(/^pk_test_/),
        },
        production: {
          secret_key: expect.stringMatching(/^sk_live_/),
          publishable_key: expect.stringMatching(/^pk_live_/),
        },
      },
    });

    const read = await client.admin('GET', `/organizations/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.api_keys).toHaveLength(4);
    expect(JSON.stringify(read.body)).not.toContain(created.body.api_keys.sandbox.secret_key);
    expect(read.body.api_keys[0]).toEqual(
      expect.objectContaining({ id: expect.stringMatching(/^key_/), last4: expect.any(String), revoked_at: null }),
    );
  });

  it('stores keys hashed', async () => {
    const org = await client.createOrganization();
    const schema = platform.gateway.service.context.store.tables.schema;
    const { rows } = await platform.infrastructure.database.query<{ hash: string }>(
      `SELECT hash FROM ${schema}.api_keys WHERE organization_id = $1`,
      [org.id],
    );
    expect(rows).toHaveLength(4);
    const everything = JSON.stringify(rows);
    expect(everything).not.toContain(org.api_keys.sandbox.secret_key.slice(8));
    for (const row of rows) expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('answers 422 with details for a bad organization and 404 for an unknown one', async () => {
    const bad = await client.admin('POST', '/organizations', { name: '' });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details[0]).toMatchObject({ path: 'name' });
    expect((await client.admin('GET', '/organizations/org_missing')).status).toBe(404);
    expect((await client.createProduct('org_missing', plan())).status).toBe(404);
  });

  it('rolls a key: the old one is revoked at once, the new one works', async () => {
    const org = await client.createOrganization();
    const old = org.api_keys.sandbox.secret_key;
    expect((await client.get('/products', old)).status).toBe(200);

    const rolled = await client.admin('POST', `/organizations/${org.id}/api_keys/roll`, {
      environment: 'SANDBOX',
      type: 'secret',
    });
    expect(rolled.status).toBe(201);
    expect(rolled.body).toMatchObject({
      object: 'api_key',
      environment: 'SANDBOX',
      type: 'secret',
      key: expect.stringMatching(/^sk_test_/),
    });

    const revoked = await client.get('/products', old);
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe('unauthorized');
    expect((await client.get('/products', rolled.body.key)).status).toBe(200);
    // The other keys are untouched.
    expect((await client.get('/products', org.api_keys.sandbox.publishable_key)).status).toBe(200);
    expect((await client.get('/products', org.api_keys.production.secret_key)).status).toBe(200);

    const badRoll = await client.admin('POST', `/organizations/${org.id}/api_keys/roll`, {
      environment: 'STAGING',
      type: 'secret',
    });
    expect(badRoll.status).toBe(422);
  });

  it('creates and updates products of an organization in an environment', async () => {
    const org = await client.createOrganization();
    const created = await client.createProduct(
      org.id,
      plan({ slug: 'pro-monthly', trial_days: 14, metadata: { tier: 'pro' } }),
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'product',
      id: expect.stringMatching(/^prod_/),
      name: 'Pro',
      slug: 'pro-monthly',
      type: 'SUBSCRIPTION',
      interval: 'month',
      interval_count: 1,
      price: 299,
      currency: 'TWD',
      trial_days: 14,
      metadata: { tier: 'pro' },
      active: true,
      livemode: false,
    });

    const patched = await client.admin('PATCH', `/organizations/${org.id}/products/${created.body.id}`, {
      price: 399,
      active: false,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ price: 399, active: false });

    const invalid = await client.createProduct(org.id, plan({ type: 'ONE_TIME', interval: 'month', price: 1.5 }));
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details.map((d: { path: string }) => d.path)).toEqual(expect.arrayContaining(['price']));

    const otherOrg = await client.createOrganization('Other');
    const foreign = await client.admin('PATCH', `/organizations/${otherOrg.id}/products/${created.body.id}`, {
      price: 1,
    });
    expect(foreign.status).toBe(404);
  });
});
