import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingService } from '../src';
import { caller, client, feeds, newOrg } from './helpers';

jest.setTimeout(120000);

let running: ServiceUnderTest;
beforeAll(async () => {
  running = await startServiceForTest(billingService);
});
afterAll(() => running.stop());

const { call } = client(() => running);
const { product, paid } = feeds(() => running);

/** Customers of a new organization, created by paid one-time checkouts, oldest first. */
async function customers(count: number, fields: (i: number) => Record<string, unknown> = () => ({})) {
  const org = newOrg();
  const productId = await product(org, { type: 'ONE_TIME', interval: null });
  for (let i = 0; i < count; i++) {
    await paid(org, { product_id: productId, mode: 'PAYMENT', customer_email: `c${i}@example.com`, ...fields(i) });
    // One at a time, so that creation order (and `created_at`) follows i.
    await eventually(async () => {
      const res = await call('GET', `/v1/customers?email=c${i}@example.com`, caller(org));
      expect(res.body.data).toHaveLength(1);
    }, 20000);
  }
  const list = await call('GET', '/v1/customers?limit=100', caller(org));
  return { org, ids: list.body.data.map((c: { id: string }) => c.id) as string[] };
}

describe('GET /v1/customers', () => {
  it('pages newest first with limit, starting_after, has_more and next_cursor', async () => {
    const { org, ids } = await customers(5);
    expect(ids).toHaveLength(5);
    const first = await call('GET', '/v1/customers?limit=2', caller(org));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', has_more: true, next_cursor: ids[1], livemode: false });
    expect(first.body.data.map((c: { email: string }) => c.email)).toEqual(['c4@example.com', 'c3@example.com']);
    const second = await call('GET', `/v1/customers?limit=2&starting_after=${first.body.next_cursor}`, caller(org));
    expect(second.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(2, 4));
    const last = await call('GET', `/v1/customers?limit=2&starting_after=${ids[3]}`, caller(org));
    expect(last.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(last.body.data.map((c: { id: string }) => c.id)).toEqual([ids[4]]);
    const all = await call('GET', '/v1/customers', caller(org));
    expect(all.body.data).toHaveLength(5);
    // As documented, not as jsonb stores them (sorted by key length).
    expect(Object.keys(all.body.data[0]).slice(0, 4)).toEqual(['object', 'id', 'email', 'name']);
    const one = await call('GET', `/v1/customers/${ids[0]}`, caller(org));
    expect(Object.keys(one.body).slice(0, 4)).toEqual(['object', 'id', 'email', 'name']);
  });

  it('defaults to 10 and refuses a limit over 100 or a wrong status with invalid_request', async () => {
    const { org } = await customers(11);
    const page = await call('GET', '/v1/customers', caller(org));
    expect(page.body.data).toHaveLength(10);
    expect(page.body.has_more).toBe(true);
    for (const query of ['limit=101', 'limit=0', 'status=GONE', 'starting_after=cus_unknown']) {
      const res = await call('GET', `/v1/customers?${query}`, caller(org));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
  });

  it('filters by email and status', async () => {
    const { org } = await customers(2);
    const one = await call('GET', '/v1/customers?email=c1@example.com', caller(org));
    expect(one.body.data.map((c: { email: string }) => c.email)).toEqual(['c1@example.com']);
    expect((await call('GET', '/v1/customers?status=ACTIVE', caller(org))).body.data).toHaveLength(2);
    expect((await call('GET', '/v1/customers?status=BANNED', caller(org))).body.data).toHaveLength(0);
  });

  it('shows nothing of another organization or environment, and needs a Secret Key', async () => {
    const { org } = await customers(1);
    expect((await call('GET', '/v1/customers', caller(newOrg()))).body.data).toEqual([]);
    expect((await call('GET', '/v1/customers', caller(org, 'PRODUCTION'))).body.data).toEqual([]);
    const publishable = await call('GET', '/v1/customers', caller(org, 'SANDBOX', 'publishable'));
    expect(publishable.status).toBe(401);
    expect(publishable.body.error.code).toBe('unauthorized');
  });
});

describe('GET and PATCH /v1/customers/{id}', () => {
  it('reads by id, by_external_id and /external/{external_id}; 404 resource_not_found otherwise', async () => {
    const { org, ids } = await customers(1, () => ({ external_customer_id: 'ext-1' }));
    const byId = await call('GET', `/v1/customers/${ids[0]}`, caller(org));
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ id: ids[0], external_id: 'ext-1', subscriptions: [] });
    expect((await call('GET', '/v1/customers/ext-1?by_external_id=true', caller(org))).body).toEqual(byId.body);
    expect((await call('GET', '/v1/customers/external/ext-1', caller(org))).body).toEqual(byId.body);
    for (const path of ['/v1/customers/ext-1', '/v1/customers/cus_nope', '/v1/customers/external/nope']) {
      const res = await call('GET', path, caller(org));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_not_found');
    }
    expect((await call('GET', `/v1/customers/${ids[0]}`, caller(newOrg()))).status).toBe(404);
  });

  it('updates name, external_id and metadata, and unlinks with null', async () => {
    const { org, ids } = await customers(1);
    const id = ids[0]!;
    const res = await call('PATCH', `/v1/customers/${id}`, caller(org), {
      name: 'Grace',
      external_id: 'user_7',
      metadata: { tier: 'gold' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'customer',
      id,
      name: 'Grace',
      external_id: 'user_7',
      metadata: { tier: 'gold' },
    });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(res.body.created_at) - 1);
    const byExternal = await call('PATCH', '/v1/customers/external/user_7', caller(org), { name: 'G' });
    expect(byExternal.body).toMatchObject({ id, name: 'G' });
    const viaQuery = await call('PATCH', '/v1/customers/user_7?by_external_id=true', caller(org), {
      external_id: null,
    });
    expect(viaQuery.body).toMatchObject({ id, external_id: null });
    expect((await call('GET', '/v1/customers/external/user_7', caller(org))).status).toBe(404);
  });

  it('answers 409 conflict for an external id another customer holds', async () => {
    const { org, ids } = await customers(2, (i) => ({ external_customer_id: `taken_${i}` }));
    const res = await call('PATCH', `/v1/customers/${ids[0]}`, caller(org), { external_id: 'taken_0' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    // The same id in another organization is free.
    const other = await customers(1);
    expect(
      (await call('PATCH', `/v1/customers/${other.ids[0]}`, caller(other.org), { external_id: 'taken_0' })).status,
    ).toBe(200);
  });

  it('answers 422 validation_error for a bad name or external id, 400 invalid_request for email or bad JSON', async () => {
    const { org, ids } = await customers(1);
    for (const body of [{ name: '' }, { name: 'x'.repeat(256) }, { external_id: 'has space' }, { external_id: 'é' }]) {
      const res = await call('PATCH', `/v1/customers/${ids[0]}`, caller(org), body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details[0]).toEqual(
        expect.objectContaining({ path: expect.any(String), code: expect.any(String) }),
      );
    }
    const email = await call('PATCH', `/v1/customers/${ids[0]}`, caller(org), { email: 'new@example.com' });
    expect(email.status).toBe(400);
    expect(email.body.error.code).toBe('invalid_request');
    const broken = await call('PATCH', `/v1/customers/${ids[0]}`, caller(org), '{"name":');
    expect(broken.status).toBe(400);
    expect(broken.body.error.code).toBe('invalid_request');
    const missing = await call('PATCH', '/v1/customers/cus_nope', caller(org), { name: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('resource_not_found');
    expect((await call('GET', `/v1/customers/${ids[0]}`, caller(org))).body.email).toBe('c0@example.com');
  });
});

describe('GET /v1/subscriptions', () => {
  it('pages under `subscriptions` with has_more, filters by customer_id, and reads one', async () => {
    const org = newOrg();
    const plans = [await product(org), await product(org), await product(org)];
    for (const [i, plan] of plans.entries()) {
      await paid(org, { product_id: plan, customer_email: i === 2 ? 'other@example.com' : 'subs@example.com' });
      await eventually(async () => {
        expect((await call('GET', '/v1/subscriptions', caller(org))).body.subscriptions).toHaveLength(i + 1);
      }, 20000);
    }
    const all = (await call('GET', '/v1/subscriptions', caller(org))).body;
    expect(all).toMatchObject({ object: 'list', has_more: false, livemode: false });
    expect(all.data).toEqual(all.subscriptions);
    const ids = all.subscriptions.map((s: { id: string }) => s.id);
    const page = (await call('GET', '/v1/subscriptions?limit=2', caller(org))).body;
    expect(page.subscriptions.map((s: { id: string }) => s.id)).toEqual(ids.slice(0, 2));
    expect(page.has_more).toBe(true);
    const rest = (await call('GET', `/v1/subscriptions?limit=2&starting_after=${ids[1]}`, caller(org))).body;
    expect(rest.subscriptions.map((s: { id: string }) => s.id)).toEqual(ids.slice(2));
    const customerId = all.subscriptions[2].customer_id;
    const mine = (await call('GET', `/v1/subscriptions?customer_id=${customerId}`, caller(org))).body;
    expect(mine.subscriptions).toHaveLength(2);
    const one = await call('GET', `/v1/subscriptions/${ids[0]}`, caller(org));
    expect(one).toEqual({ status: 200, body: all.subscriptions[0] });
    expect(Object.keys(one.body).slice(0, 3)).toEqual(['object', 'id', 'customer_id']);
    expect((await call('GET', `/v1/subscriptions/${ids[0]}`, caller(newOrg()))).status).toBe(404);
    expect((await call('GET', '/v1/subscriptions?limit=101', caller(org))).status).toBe(400);
  });
});
