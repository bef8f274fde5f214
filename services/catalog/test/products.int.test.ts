import {
  type Environment,
  IDENTITY_HEADERS,
  type KeyKind,
  Product,
  ProductList,
  identityHeaders,
} from '@billing/contracts';
import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { signedFetch } from '@billing/testing';
import { catalogService } from '../src';

jest.setTimeout(60000);

let running: ServiceUnderTest;
let clock = Date.parse('2026-03-01T00:00:00.000Z');
const tick = (ms = 1000) => (clock += ms);

beforeAll(async () => {
  running = await startServiceForTest(catalogService, { now: () => new Date(clock) });
});
afterAll(() => running.stop());

let orgs = 0;
/** A fresh organization per test, so lists only hold what the test made. */
const newOrg = () => `org_t${++orgs}`;

interface Reply {
  status: number;
  body: any;
}

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
  const res = await signedFetch(`${running.service.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** What the gateway sets for a public request made with an API key. */
const caller = (organization: string, environment: Environment = 'SANDBOX', keyKind: KeyKind = 'secret') =>
  identityHeaders({ organization, environment, keyKind, keyId: 'key_test' });
/** What the gateway's admin API sets: the organization of its path and nothing else. */
const admin = (organization: string) => ({ [IDENTITY_HEADERS.organization]: organization });

const get = (path: string, headers: Record<string, string>) => call('GET', path, headers);
const createBody = (fields: Record<string, unknown> = {}) => ({
  environment: 'SANDBOX',
  name: 'Pro',
  type: 'SUBSCRIPTION',
  interval: 'month',
  price: 299,
  ...fields,
});

/** Creates a product one clock second after the previous one. */
async function create(org: string, fields: Record<string, unknown> = {}): Promise<any> {
  tick();
  const res = await call('POST', '/admin/products', admin(org), createBody(fields));
  expect(res.status).toBe(201);
  return res.body;
}
const patch = (org: string, id: string, body?: unknown) => {
  tick();
  return call('PATCH', `/admin/products/${id}`, admin(org), body);
};

describe('POST /admin/products', () => {
  it('creates a product and answers 201 with the full product', async () => {
    const org = newOrg();
    const res = await call(
      'POST',
      '/admin/products',
      admin(org),
      createBody({ slug: 'pro-monthly', description: 'All features', trial_days: 14, metadata: { tier: 'pro' } }),
    );
    expect(res.status).toBe(201);
    const now = new Date(clock).toISOString();
    expect(res.body).toEqual({
      object: 'product',
      id: expect.stringMatching(/^prod_[0-9A-Za-z]{24}$/),
      name: 'Pro',
      slug: 'pro-monthly',
      description: 'All features',
      type: 'SUBSCRIPTION',
      interval: 'month',
      interval_count: 1,
      price: 299,
      currency: 'TWD',
      trial_days: 14,
      display_order: null,
      metadata: { tier: 'pro' },
      credits: null,
      metered_prices: null,
      active: true,
      created_at: now,
      updated_at: now,
      livemode: false,
    });
    expect(Product.parse(res.body)).toEqual(res.body);
  });

  it('fills the defaults for a one-time item and is livemode in Production', async () => {
    const body = await create(newOrg(), { environment: 'PRODUCTION', type: 'ONE_TIME', interval: undefined, price: 0 });
    expect(body).toMatchObject({
      type: 'ONE_TIME',
      interval: null,
      interval_count: 1,
      slug: null,
      description: null,
      currency: 'TWD',
      trial_days: null,
      metadata: null,
      price: 0,
      livemode: true,
    });
  });

  it('keeps what a CREDITS product grants, and changes it', async () => {
    const org = newOrg();
    const pack = { type: 'CREDITS', interval: undefined, price: 300, credits: { amount: 500 } };
    const body = await create(org, pack);
    expect(body.credits).toEqual({ amount: 500, expires_after_days: null });
    expect(Product.parse(body)).toEqual(body);
    const changed = await call('PATCH', `/admin/products/${body.id}`, admin(org), {
      credits: { amount: 600, expires_after_days: 365 },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.credits).toEqual({ amount: 600, expires_after_days: 365 });
    // A product that grants nothing says so.
    expect((await create(org, { type: 'ONE_TIME', interval: undefined })).credits).toBeNull();
    // It stops being a CREDITS product only without its credits.
    const retyped = await call('PATCH', `/admin/products/${body.id}`, admin(org), { type: 'ONE_TIME' });
    expect(retyped.status).toBe(422);
    expect(retyped.body.error.details).toEqual([
      { path: 'credits', message: expect.any(String), code: 'invalid_value' },
    ]);
  });

  it("keeps a plan's allowance per period, rolled over or not (not by default)", async () => {
    const org = newOrg();
    const plan = await create(org, { credits: { amount: 100 } });
    expect(plan.credits).toEqual({ amount: 100, expires_after_days: null, rollover: false });
    expect(Product.parse(plan)).toEqual(plan);
    const changed = await call('PATCH', `/admin/products/${plan.id}`, admin(org), {
      credits: { amount: 200, expires_after_days: 90, rollover: true },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.credits).toEqual({ amount: 200, expires_after_days: 90, rollover: true });
    // Rolling over is a plan's: a CREDITS product it becomes keeps no period to roll over from.
    const retyped = await call('PATCH', `/admin/products/${plan.id}`, admin(org), { type: 'CREDITS', interval: null });
    expect(retyped.status).toBe(422);
    expect(retyped.body.error.details).toEqual([
      { path: 'credits.rollover', message: expect.any(String), code: 'invalid_value' },
    ]);
    // A plan made before allowances existed grants nothing.
    expect((await create(org, {})).credits).toBeNull();
  });

  it("keeps a plan's metered prices, a package of 1 unless set, and changes them; a plan without any has null", async () => {
    const org = newOrg();
    const plan = await create(org, {
      metered_prices: [
        { meter: 'api_calls', unit_amount: 1, package_size: 100 },
        { meter: 'seats', unit_amount: 50 },
      ],
    });
    expect(plan.metered_prices).toEqual([
      { meter: 'api_calls', unit_amount: 1, package_size: 100 },
      { meter: 'seats', unit_amount: 50, package_size: 1 },
    ]);
    expect(Product.parse(plan)).toEqual(plan);
    const changed = await patch(org, plan.id, {
      metered_prices: [{ meter: 'api_calls', unit_amount: 2, package_size: 100 }],
    });
    expect(changed.status).toBe(200);
    expect(changed.body.metered_prices).toEqual([{ meter: 'api_calls', unit_amount: 2, package_size: 100 }]);
    // The same prices again change nothing (the stored document's keys come back in another order).
    const same = await patch(org, plan.id, {
      metered_prices: [{ package_size: 100, unit_amount: 2, meter: 'api_calls' }],
    });
    expect(same.body.updated_at).toBe(changed.body.updated_at);
    expect((await create(org, {})).metered_prices).toBeNull();
    // Usage is billed per period: a product without periods has none.
    const oneTime = await call(
      'POST',
      '/admin/products',
      admin(org),
      createBody({ type: 'ONE_TIME', interval: null, metered_prices: [{ meter: 'api_calls', unit_amount: 1 }] }),
    );
    expect(oneTime.status).toBe(422);
    expect(oneTime.body.error.details).toEqual([
      { path: 'metered_prices', message: expect.any(String), code: 'invalid_value' },
    ]);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['no environment', { environment: undefined }, 'environment', 'invalid_value'],
    ['an unknown environment', { environment: 'STAGING' }, 'environment', 'invalid_value'],
    ['no name', { name: undefined }, 'name', 'invalid_type'],
    ['a name over 255 characters', { name: 'x'.repeat(256) }, 'name', 'too_big'],
    ['a slug that is not URL-safe', { slug: 'Pro Plan' }, 'slug', 'invalid_format'],
    ['a slug with a trailing hyphen', { slug: 'pro-' }, 'slug', 'invalid_format'],
    ['a description over 5000 characters', { description: 'x'.repeat(5001) }, 'description', 'too_big'],
    ['no type', { type: undefined }, 'type', 'invalid_value'],
    ['an unknown type', { type: 'RENTAL' }, 'type', 'invalid_value'],
    ['a subscription without interval', { interval: undefined }, 'interval', 'invalid_type'],
    ['an unknown interval', { interval: 'fortnight' }, 'interval', 'invalid_value'],
    ['a one-time item with an interval', { type: 'ONE_TIME' }, 'interval', 'invalid_value'],
    [
      'credits every 3 units',
      { type: 'CREDITS', interval: null, interval_count: 3 },
      'interval_count',
      'invalid_value',
    ],
    ['a donation with a trial', { type: 'DONATION', interval: null, trial_days: 7 }, 'trial_days', 'invalid_value'],
    [
      'a one-time item that grants credits',
      { type: 'ONE_TIME', interval: null, credits: { amount: 100 } },
      'credits',
      'invalid_value',
    ],
    [
      'credits that roll over on a CREDITS product',
      { type: 'CREDITS', interval: null, credits: { amount: 10, rollover: false } },
      'credits.rollover',
      'invalid_value',
    ],
    [
      'a rollover that is not a boolean',
      { credits: { amount: 10, rollover: 'yes' } },
      'credits.rollover',
      'invalid_type',
    ],
    ['credits of 0', { type: 'CREDITS', interval: null, credits: { amount: 0 } }, 'credits.amount', 'too_small'],
    [
      'a meter priced twice',
      {
        metered_prices: [
          { meter: 'api_calls', unit_amount: 1 },
          { meter: 'api_calls', unit_amount: 2 },
        ],
      },
      'metered_prices',
      'custom',
    ],
    [
      'a meter key with a space',
      { metered_prices: [{ meter: 'api calls', unit_amount: 1 }] },
      'metered_prices.0.meter',
      'invalid_format',
    ],
    [
      'a package of 0 units',
      { metered_prices: [{ meter: 'm', unit_amount: 1, package_size: 0 }] },
      'metered_prices.0.package_size',
      'too_small',
    ],
    [
      'a unit amount of 1.5',
      { metered_prices: [{ meter: 'm', unit_amount: 1.5 }] },
      'metered_prices.0.unit_amount',
      'invalid_type',
    ],
    [
      'fractional credits',
      { type: 'CREDITS', interval: null, credits: { amount: 1.5 } },
      'credits.amount',
      'invalid_type',
    ],
    [
      'credits that expire after 0 days',
      { type: 'CREDITS', interval: null, credits: { amount: 10, expires_after_days: 0 } },
      'credits.expires_after_days',
      'too_small',
    ],
    ['an interval count of 0', { interval_count: 0 }, 'interval_count', 'too_small'],
    ['no price', { price: undefined }, 'price', 'invalid_type'],
    ['a fractional price', { price: 299.5 }, 'price', 'invalid_type'],
    ['a price in a string', { price: '299' }, 'price', 'invalid_type'],
    ['a negative price', { price: -1 }, 'price', 'too_small'],
    ['another currency', { currency: 'USD' }, 'currency', 'invalid_value'],
    ['a trial of 0 days', { trial_days: 0 }, 'trial_days', 'too_small'],
    ['a fractional display order', { display_order: 0.5 }, 'display_order', 'invalid_type'],
    ['metadata with a number value', { metadata: { seats: 5 } }, 'metadata.seats', 'invalid_type'],
    ['a metadata value over 500 characters', { metadata: { note: 'x'.repeat(501) } }, 'metadata.note', 'too_big'],
    [
      'a metadata key over 40 characters',
      { metadata: { ['k'.repeat(41)]: 'v' } },
      `metadata.${'k'.repeat(41)}`,
      'invalid_key',
    ],
    [
      'metadata with 51 keys',
      { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
      'metadata',
      'too_big',
    ],
    ['an unknown field', { colour: 'red' }, '', 'unrecognized_keys'],
  ])('rejects %s with 422 validation_error at its path', async (_case, fields, path, code) => {
    const res = await call('POST', '/admin/products', admin(newOrg()), createBody(fields));
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({
      code: 'validation_error',
      message: expect.any(String),
      details: [{ path, message: expect.any(String), code }],
    });
  });

  it('answers 400 bad_request to malformed JSON', async () => {
    const res = await call('POST', '/admin/products', admin(newOrg()), '{"name":');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
  });

  it('answers 409 slug_taken for a slug used in the same organization and environment', async () => {
    const org = newOrg();
    await create(org, { slug: 'pro' });
    const res = await call('POST', '/admin/products', admin(org), createBody({ slug: 'pro', name: 'Pro 2' }));
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({
      code: 'conflict',
      message: expect.any(String),
      details: [{ path: 'slug', message: expect.any(String), code: 'slug_taken' }],
    });
    // The same slug is free in the other environment and in another organization.
    await create(org, { slug: 'pro', environment: 'PRODUCTION' });
    await create(newOrg(), { slug: 'pro' });
    const list = await get('/v1/products', caller(org));
    expect(list.body.data.map((p: { name: string }) => p.name)).toEqual(['Pro']);
  });

  it('lets exactly one of two concurrent creates take a slug', async () => {
    const org = newOrg();
    const results = await Promise.all(
      [1, 2, 3].map((n) => call('POST', '/admin/products', admin(org), createBody({ slug: 'race', name: `P${n}` }))),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect((await get('/v1/products', caller(org))).body.data).toHaveLength(1);
  });

  it('answers 401 without the organization header', async () => {
    const res = await call('POST', '/admin/products', {}, createBody());
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });
});

describe('PATCH /admin/products/:id', () => {
  it('changes fields, moves updated_at and keeps created_at', async () => {
    const org = newOrg();
    const product = await create(org, { slug: 'pro' });
    const res = await patch(org, product.id, { name: 'Pro Plus', price: 399, metadata: { tier: 'plus' }, slug: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...product,
      name: 'Pro Plus',
      price: 399,
      metadata: { tier: 'plus' },
      slug: null,
      updated_at: new Date(clock).toISOString(),
    });
    expect((await get(`/v1/products/${product.id}`, caller(org))).body).toEqual(res.body);
  });

  it('checks the rules on the merged product: a subscription turned one-time keeps its interval', async () => {
    const org = newOrg();
    const product = await create(org);
    const rejected = await patch(org, product.id, { type: 'ONE_TIME' });
    expect(rejected.status).toBe(422);
    expect(rejected.body.error.details).toEqual([
      { path: 'interval', message: expect.any(String), code: 'invalid_value' },
    ]);
    const accepted = await patch(org, product.id, { type: 'ONE_TIME', interval: null });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ type: 'ONE_TIME', interval: null });
  });

  it.each<[string, unknown, string, string]>([
    ['a fractional price', { price: 1.5 }, 'price', 'invalid_type'],
    ['an environment', { environment: 'PRODUCTION' }, '', 'unrecognized_keys'],
    ['a non-boolean active', { active: 'no' }, 'active', 'invalid_type'],
  ])('rejects %s with 422', async (_case, body, path, code) => {
    const org = newOrg();
    const product = await create(org);
    const res = await patch(org, product.id, body);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ path, message: expect.any(String), code }]);
  });

  it('answers 409 slug_taken when the new slug belongs to another product', async () => {
    const org = newOrg();
    await create(org, { slug: 'basic' });
    const pro = await create(org, { slug: 'pro' });
    const res = await patch(org, pro.id, { slug: 'basic' });
    expect(res.status).toBe(409);
    expect(res.body.error.details).toEqual([{ path: 'slug', message: expect.any(String), code: 'slug_taken' }]);
    expect((await get(`/v1/products/${pro.id}`, caller(org))).body.slug).toBe('pro');
  });

  it('archives with active: false and restores with active: true', async () => {
    const org = newOrg();
    const product = await create(org, { slug: 'seasonal' });
    const archived = await patch(org, product.id, { active: false });
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({ active: false, updated_at: new Date(clock).toISOString() });

    expect((await get('/v1/products', caller(org))).body.data).toEqual([]);
    const archivedList = await get('/v1/products?status=archived', caller(org));
    expect(archivedList.body.data.map((p: { id: string }) => p.id)).toEqual([product.id]);
    // Archived products stay readable by id and by slug, with active: false.
    expect((await get(`/v1/products/${product.id}`, caller(org))).body.active).toBe(false);
    expect((await get('/v1/products/by-slug/seasonal', caller(org))).body.active).toBe(false);

    const restored = await patch(org, product.id, { active: true });
    expect(restored.body.active).toBe(true);
    expect((await get('/v1/products', caller(org))).body.data.map((p: { id: string }) => p.id)).toEqual([product.id]);
  });

  it('changes nothing, and records no event, for an empty body or no body', async () => {
    const org = newOrg();
    const product = await create(org);
    for (const body of [{}, undefined, { price: 299 }]) {
      const res = await patch(org, product.id, body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(product);
    }
    expect(await running.service.context.store.readStream(`product-${product.id}`)).toHaveLength(1);
  });

  it("answers 404 for an unknown id and for another organization's product", async () => {
    const org = newOrg();
    const product = await create(org);
    for (const [owner, id] of [
      [org, 'prod_000000000000000000000000'],
      [org, 'not-an-id'],
      [newOrg(), product.id],
    ]) {
      const res = await patch(owner!, id!, { price: 1 });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await get(`/v1/products/${product.id}`, caller(org))).body.price).toBe(299);
  });

  it('answers 401 without the organization header', async () => {
    const product = await create(newOrg());
    expect((await call('PATCH', `/admin/products/${product.id}`, {}, { price: 1 })).status).toBe(401);
  });
});

describe('GET /v1/products', () => {
  it('lists active products newest first, items without updated_at, in a list envelope without has_more', async () => {
    const org = newOrg();
    const first = await create(org, { name: 'First' });
    const second = await create(org, { name: 'Second', type: 'ONE_TIME', interval: null });
    const third = await create(org, { name: 'Third', type: 'CREDITS', interval: null });
    const res = await get('/v1/products', caller(org));
    expect(res.status).toBe(200);
    // `products` repeats `data` for SDKs that read it (as `subscriptions` does for subscriptions).
    expect(Object.keys(res.body).sort()).toEqual(['data', 'livemode', 'object', 'products']);
    expect(res.body.products).toEqual(res.body.data);
    expect(res.body).toMatchObject({ object: 'list', livemode: false });
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual([third.id, second.id, first.id]);
    const { updated_at: _single, ...item } = third;
    expect(res.body.data[0]).toEqual(item);
    expect(ProductList.parse(res.body)).toEqual(res.body);
  });

  it('breaks ties in created_at by id, descending', async () => {
    const org = newOrg();
    const sameInstant = await Promise.all(
      [1, 2, 3].map(() => call('POST', '/admin/products', admin(org), createBody())),
    );
    const ids = sameInstant
      .map((r) => r.body.id as string)
      .sort()
      .reverse();
    expect((await get('/v1/products', caller(org))).body.data.map((p: { id: string }) => p.id)).toEqual(ids);
  });

  it('filters by type, case-insensitively', async () => {
    const org = newOrg();
    const plan = await create(org);
    const item = await create(org, { type: 'ONE_TIME', interval: null });
    const ids = async (query: string) =>
      (await get(`/v1/products?${query}`, caller(org))).body.data.map((p: { id: string }) => p.id);
    expect(await ids('type=subscription')).toEqual([plan.id]);
    expect(await ids('type=One_Time')).toEqual([item.id]);
    expect(await ids('type=DONATION')).toEqual([]);
  });

  it.each([
    ['type=rental', 'type'],
    ['status=active', 'status'],
    ['type=one_time&type=credits', 'type'],
  ])('answers 400 bad_request naming the parameter to %s', async (query, path) => {
    const res = await get(`/v1/products?${query}`, caller(newOrg()));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'bad_request', details: [expect.objectContaining({ path })] });
  });

  it('answers 401 without caller identity', async () => {
    const res = await get('/v1/products', admin(newOrg()));
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });
});

describe('GET /v1/products/:id and /v1/products/by-slug/:slug', () => {
  it('returns the full product, with updated_at, by id and by slug', async () => {
    const org = newOrg();
    const product = await create(org, { slug: 'annual', interval: 'year' });
    const byId = await get(`/v1/products/${product.id}`, caller(org));
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(product);
    expect(byId.body.updated_at).toEqual(product.created_at);
    expect((await get('/v1/products/by-slug/annual', caller(org))).body).toEqual(product);
  });

  it('answers 404 not_found for an unknown id or slug', async () => {
    for (const path of ['/v1/products/prod_000000000000000000000000', '/v1/products/by-slug/nothing-here']) {
      const res = await get(path, caller(newOrg()));
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: 'not_found', message: expect.any(String) });
    }
  });

  it('takes a Publishable Key for lists and slugs, and only a Secret Key by id', async () => {
    const org = newOrg();
    const product = await create(org, { slug: 'public' });
    const publishable = caller(org, 'SANDBOX', 'publishable');
    expect((await get('/v1/products', publishable)).body.data).toHaveLength(1);
    expect((await get('/v1/products/by-slug/public', publishable)).status).toBe(200);
    expect((await get(`/v1/products/${product.id}`, publishable)).status).toBe(401);
  });
});

describe('tenancy', () => {
  it("answers 404 for another organization's or another environment's product, and lists leave them out", async () => {
    const org = newOrg();
    const other = newOrg();
    const product = await create(org, { slug: 'mine' });
    const live = await create(org, { slug: 'live-only', environment: 'PRODUCTION' });

    for (const headers of [caller(other), caller(org, 'PRODUCTION')]) {
      expect((await get(`/v1/products/${product.id}`, headers)).status).toBe(404);
      expect((await get('/v1/products/by-slug/mine', headers)).status).toBe(404);
    }
    expect((await get(`/v1/products/${live.id}`, caller(org))).status).toBe(404);
    expect((await get('/v1/products/by-slug/live-only', caller(org))).status).toBe(404);

    expect((await get('/v1/products', caller(other))).body.data).toEqual([]);
    const sandbox = await get('/v1/products', caller(org));
    expect(sandbox.body.data.map((p: { id: string }) => p.id)).toEqual([product.id]);
    const production = await get('/v1/products', caller(org, 'PRODUCTION'));
    expect(production.body).toMatchObject({
      livemode: true,
      data: [expect.objectContaining({ id: live.id, livemode: true })],
    });
  });
});

describe('event stream', () => {
  it('records ProductCreated, ProductUpdated, ProductArchived and ProductRestored with organization and environment', async () => {
    const org = newOrg();
    const product = await create(org, { environment: 'PRODUCTION' });
    const createdAt = new Date(clock).toISOString();
    await patch(org, product.id, { price: 499, active: false });
    const changedAt = new Date(clock).toISOString();
    await patch(org, product.id, { active: true });

    const events = await running.service.context.store.readStream(`product-${product.id}`);
    expect(events.map((e) => e.type)).toEqual([
      'ProductCreated',
      'ProductUpdated',
      'ProductArchived',
      'ProductRestored',
    ]);
    for (const event of events) {
      expect(event).toMatchObject({ organization: org, environment: 'PRODUCTION', stream: `product-${product.id}` });
      expect(event.data.product_id).toBe(product.id);
    }
    expect(events[0]).toMatchObject({ occurred_at: createdAt, data: { price: 299, created_at: createdAt } });
    expect(events[1]).toMatchObject({
      occurred_at: changedAt,
      data: { changes: { price: 499 }, updated_at: changedAt },
    });
    expect(events[2]!.data).toEqual({ product_id: product.id, archived_at: changedAt });
  });
});
