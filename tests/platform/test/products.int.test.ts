import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

describe('products through the gateway', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let acme: CreatedOrganization;
  let other: CreatedOrganization;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    platform = await startPlatform();
    client = clientOf(platform.gatewayUrl);
    acme = await client.createOrganization('Acme');
    other = await client.createOrganization('Other');
    ids.monthly = (await client.createProduct(acme.id, plan({ name: 'Monthly', slug: 'monthly' }))).body.id;
    ids.credits = (
      await client.createProduct(acme.id, plan({ name: 'Credits', slug: 'credits', type: 'CREDITS', interval: null }))
    ).body.id;
    ids.live = (
      await client.createProduct(acme.id, plan({ name: 'Live', slug: 'monthly', environment: 'PRODUCTION' }))
    ).body.id;
    ids.foreign = (await client.createProduct(other.id, plan({ name: 'Foreign', slug: 'foreign' }))).body.id;
  });
  afterAll(() => platform.stop());

  const sandbox = () => acme.api_keys.sandbox.secret_key;

  it('lists the organization and environment products, newest first, without has_more', async () => {
    const list = await client.get('/products', sandbox());
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ object: 'list', data: expect.any(Array), products: list.body.data, livemode: false });
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([ids.credits, ids.monthly]);
    expect(list.body.data[0]).not.toHaveProperty('updated_at');
  });

  it('filters by type case-insensitively and lists archived products on request', async () => {
    const credits = await client.get('/products?type=credits', sandbox());
    expect(credits.body.data.map((p: { id: string }) => p.id)).toEqual([ids.credits]);
    expect((await client.get('/products?type=bogus', sandbox())).status).toBe(400);

    await client.admin('PATCH', `/organizations/${acme.id}/products/${ids.credits}`, { active: false });
    const active = await client.get('/products', sandbox());
    expect(active.body.data.map((p: { id: string }) => p.id)).toEqual([ids.monthly]);
    const archived = await client.get('/products?status=archived', sandbox());
    expect(archived.body.data.map((p: { id: string }) => p.id)).toEqual([ids.credits]);
    await client.admin('PATCH', `/organizations/${acme.id}/products/${ids.credits}`, { active: true });
  });

  it('reads one product by id with updated_at, and by slug', async () => {
    const byId = await client.get(`/products/${ids.monthly}`, sandbox());
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({
      object: 'product',
      id: ids.monthly,
      slug: 'monthly',
      livemode: false,
      updated_at: expect.any(String),
    });
    const bySlug = await client.get('/products/by-slug/monthly', sandbox());
    expect(bySlug.body.id).toBe(ids.monthly);
    expect((await client.get('/products/prod_absent', sandbox())).body.error.code).toBe('not_found');
    expect((await client.get('/products/by-slug/absent', sandbox())).status).toBe(404);
  });

  it("never shows another organization's products: 404 as if absent", async () => {
    expect((await client.get(`/products/${ids.foreign}`, sandbox())).status).toBe(404);
    expect((await client.get('/products/by-slug/foreign', sandbox())).status).toBe(404);
    const theirs = await client.get('/products', other.api_keys.sandbox.secret_key);
    expect(theirs.body.data.map((p: { id: string }) => p.id)).toEqual([ids.foreign]);
  });

  it('never shows Production products to a Sandbox key, nor the reverse', async () => {
    expect((await client.get(`/products/${ids.live}`, sandbox())).status).toBe(404);
    const live = acme.api_keys.production.secret_key;
    expect((await client.get(`/products/${ids.monthly}`, live)).status).toBe(404);
    const liveList = await client.get('/products', live);
    expect(liveList.body).toMatchObject({ livemode: true });
    expect(liveList.body.data.map((p: { id: string }) => p.id)).toEqual([ids.live]);
    expect((await client.get('/products/by-slug/monthly', live)).body.id).toBe(ids.live);
  });

  it("relays the catalog's product events to catalog.events", async () => {
    const seen: Array<{ type: string; organization: string }> = [];
    const subscription = await platform.infrastructure.bus.subscribe({
      groupId: `gateway-test-${Date.now()}`,
      topics: ['catalog.events'],
      handler: async (message) => {
        if (message.value.stream === `product-${ids.monthly}`) seen.push(message.value);
      },
    });
    try {
      await eventually(() => expect(seen.map((e) => e.type)).toContain('ProductCreated'), 30000);
      expect(seen[0]).toMatchObject({ organization: acme.id, environment: 'SANDBOX' });
    } finally {
      await subscription.stop();
    }
  });
});
