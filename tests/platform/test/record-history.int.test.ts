import { IDENTITY_HEADERS } from '@billing/contracts';
import { verifyInternalCall } from '@billing/signing';
import { eventually } from '@billing/testing';
import type { ClientRequest } from 'node:http';
import type { Request } from 'express';
import { signForwarded } from '@billing/gateway';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(120000);

/**
 * The dashboard's reads on the admin API: every organization, and the history of a record
 * with who did each thing (docs/dashboard-api.md), through the gateway to the owning service.
 */
describe('organizations list and record history', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let other: CreatedOrganization;
  const send = jsonApi(
    () => platform.gatewayUrl,
    () => org.api_keys.sandbox.secret_key,
  );
  const history = (organization: string, query: string) =>
    client.admin('GET', `/organizations/${organization}/events?${query}`);

  beforeAll(async () => {
    platform = await startPlatform({ checkout: true, billing: true });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Acme');
    other = await client.createOrganization('Other');
  });
  afterAll(() => platform.stop());

  it('lists every organization newest first, paged with starting_after', async () => {
    const third = await client.createOrganization('Third');
    const first = await client.admin('GET', '/organizations?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', has_more: true });
    expect(first.body.data.map((o: { id: string }) => o.id)).toEqual([third.id, other.id]);
    const shown = await client.admin('GET', `/organizations/${third.id}`);
    expect(first.body.data[0]).toEqual(shown.body);

    const next = await client.admin('GET', `/organizations?limit=100&starting_after=${other.id}`);
    expect(next.body.data[0].id).toBe(org.id);
    expect(next.body.data.map((o: { id: string }) => o.id)).not.toContain(other.id);

    for (const query of ['limit=0', 'limit=101', 'limit=x', 'starting_after=org_nope']) {
      const bad = await client.admin('GET', `/organizations?${query}`);
      expect({ query, status: bad.status, code: bad.body.error.code }).toEqual({
        query,
        status: 400,
        code: 'bad_request',
      });
    }
    const anonymous = await fetch(`${platform.gatewayUrl}/admin/v1/organizations`);
    expect(anonymous.status).toBe(401);
  });

  it('shows a record’s events oldest first with their actors: admin, API key, buyer, system', async () => {
    const product = await client.createProduct(org.id, plan({ slug: 'pro' }));
    expect(product.status).toBe(201);
    const renamed = await client.admin('PATCH', `/organizations/${org.id}/products/${product.body.id}`, {
      name: 'Pro plus',
    });
    expect(renamed.status).toBe(200);
    const productHistory = await history(org.id, `record_id=${product.body.id}&environment=SANDBOX`);
    expect(productHistory.status).toBe(200);
    expect(productHistory.body).toMatchObject({ object: 'list', record_id: product.body.id, has_more: false });
    expect(productHistory.body.data).toHaveLength(2);
    expect(productHistory.body.data[0]).toMatchObject({
      object: 'record_event',
      version: 1,
      actor: { type: 'admin' },
      occurred_at: expect.any(String),
      data: expect.any(Object),
    });
    expect(productHistory.body.data[1]).toMatchObject({ version: 2, actor: { type: 'admin' } });

    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    expect(session.status).toBe(201);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({
        email: 'buyer@example.com',
        card_number: '4242424242424242',
        exp: '12/34',
        cvc: '123',
      }),
    });
    expect(paid.status).toBe(303);
    const sessionHistory = await history(org.id, `record_id=${session.body.id}&environment=SANDBOX`);
    expect(sessionHistory.status).toBe(200);
    const keyId = (await client.admin('GET', `/organizations/${org.id}`)).body.api_keys.find(
      (key: { environment: string; type: string }) => key.environment === 'SANDBOX' && key.type === 'secret',
    ).id;
    expect(sessionHistory.body.data[0].actor).toEqual({ type: 'api_key', id: keyId });
    expect(sessionHistory.body.data.slice(1).map((e: { actor: unknown }) => e.actor)).toContainEqual({
      type: 'customer',
    });

    // Billing makes the subscription from checkout's event: nobody's request, so the system.
    const subscriptionId = await eventually(async () => {
      const read = await send('GET', `/checkout/sessions/${session.body.id}`);
      expect(read.body.subscription_id).toMatch(/^sub_/);
      expect((await send('GET', `/subscriptions/${read.body.subscription_id}`)).status).toBe(200);
      return read.body.subscription_id as string;
    });
    const subscriptionHistory = await history(org.id, `record_id=${subscriptionId}&environment=SANDBOX`);
    expect(subscriptionHistory.status).toBe(200);
    expect(subscriptionHistory.body.data[0]).toMatchObject({
      version: 1,
      type: 'SubscriptionActivated',
      actor: { type: 'system' },
    });

    const canceled = await send('POST', `/subscriptions/${subscriptionId}/cancel`, {});
    expect(canceled.status).toBe(200);
    const afterCancel = await history(org.id, `record_id=${subscriptionId}&environment=SANDBOX`);
    expect(afterCancel.body.data.at(-1).actor).toEqual({ type: 'api_key', id: keyId });

    // Paged by version.
    const page1 = await history(org.id, `record_id=${product.body.id}&environment=SANDBOX&limit=1`);
    expect(page1.body).toMatchObject({ has_more: true, data: [{ version: 1 }] });
    const page2 = await history(org.id, `record_id=${product.body.id}&environment=SANDBOX&limit=1&starting_after=1`);
    expect(page2.body).toMatchObject({ has_more: false, data: [{ version: 2 }] });
    const past = await history(org.id, `record_id=${product.body.id}&environment=SANDBOX&starting_after=9`);
    expect(past.body).toMatchObject({ has_more: false, data: [] });

    // Another organization's record, the other environment, or nothing at all: 404.
    for (const [organization, query] of [
      [other.id, `record_id=${product.body.id}&environment=SANDBOX`],
      [other.id, `record_id=${subscriptionId}&environment=SANDBOX`],
      [other.id, `record_id=${product.body.id}&environment=SANDBOX&starting_after=9`],
      [org.id, `record_id=${product.body.id}&environment=PRODUCTION`],
      [org.id, 'record_id=cus_doesNotExist&environment=SANDBOX'],
      ['org_missing', `record_id=${product.body.id}&environment=SANDBOX`],
    ] as const) {
      const missing = await history(organization, query);
      expect({ query, status: missing.status, code: missing.body.error.code }).toEqual({
        query,
        status: 404,
        code: 'not_found',
      });
    }
  });

  it('refuses an unknown prefix or a bad parameter with 400 naming it', async () => {
    for (const [query, parameter] of [
      ['record_id=xyz_123&environment=SANDBOX', 'record_id'],
      ['record_id=sub_sched_123&environment=SANDBOX', 'record_id'],
      ['record_id=prod_a-b&environment=SANDBOX', 'record_id'],
      ['environment=SANDBOX', 'record_id'],
      ['record_id=prod_123', 'environment'],
      ['record_id=prod_123&environment=sandbox', 'environment'],
      ['record_id=prod_123&environment=SANDBOX&limit=0', 'limit'],
      ['record_id=prod_123&environment=SANDBOX&starting_after=-1', 'starting_after'],
    ]) {
      const bad = await history(org.id, query!);
      expect({ query, status: bad.status, code: bad.body.error.code, path: bad.body.error.details?.[0]?.path }).toEqual(
        {
          query,
          status: 400,
          code: 'bad_request',
          path: parameter,
        },
      );
    }
  });
});

describe('the actor in the forwarded signature', () => {
  const secret = 'x'.repeat(32);
  const forward = (scope: string, locals: Record<string, unknown>) => {
    const headers: Record<string, string> = {};
    const proxyReq = {
      method: 'GET',
      path: '/admin/events?record_id=cus_1',
      setHeader: (name: string, value: string) => (headers[name] = value),
    } as unknown as ClientRequest;
    const req = {
      headers: {
        [IDENTITY_HEADERS.scope]: scope,
        [IDENTITY_HEADERS.organization]: 'org_1',
        ...(scope === 'key'
          ? {
              [IDENTITY_HEADERS.environment]: 'SANDBOX',
              [IDENTITY_HEADERS.keyKind]: 'secret',
              [IDENTITY_HEADERS.keyId]: 'key_1',
            }
          : {}),
      },
      res: { locals },
    } as unknown as Request;
    signForwarded(secret)(proxyReq, req, Buffer.alloc(0));
    const verified = verifyInternalCall(secret, { method: 'GET', path: '/admin/events?record_id=cus_1', headers });
    if (!verified.ok) throw new Error(verified.reason);
    return { actor: verified.call.actor, headers };
  };

  it('carries res.locals.billingActor, else what vouched for the request', () => {
    expect(forward('admin', { billingActor: { type: 'dashboard_user', id: 'usr_1' } }).actor).toEqual({
      type: 'dashboard_user',
      id: 'usr_1',
    });
    expect(forward('admin', {}).actor).toEqual({ type: 'admin' });
    expect(forward('key', {}).actor).toEqual({ type: 'api_key', id: 'key_1' });
    expect(forward('page', {}).actor).toEqual({ type: 'customer' });
  });

  it('signs the actor: another one under the same signature is refused', () => {
    const { headers } = forward('admin', { billingActor: { type: 'dashboard_user', id: 'usr_1' } });
    const forged = { ...headers, [IDENTITY_HEADERS.actor]: 'dashboard_user:usr_2' };
    const verified = verifyInternalCall(secret, {
      method: 'GET',
      path: '/admin/events?record_id=cus_1',
      headers: forged,
    });
    expect(verified.ok).toBe(false);
  });
});
