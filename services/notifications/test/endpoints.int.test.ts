import { startServiceForTest, type ServiceUnderTest } from '@billing/runtime';
import { notificationsService } from '../src';
import { client, newOrg } from './helpers';

jest.setTimeout(30000);

describe('webhook endpoints', () => {
  let running: ServiceUnderTest;
  const api = client(() => running);
  beforeAll(async () => (running = await startServiceForTest(notificationsService)));
  afterAll(() => running.stop());

  const create = (org: string, body: Record<string, unknown> = {}) =>
    api.admin(org, 'POST', '/webhook_endpoints', {
      environment: 'SANDBOX',
      url: 'https://shop.example/hooks',
      events: ['checkout.completed'],
      ...body,
    });

  it('creates an endpoint with a whsec_ secret and shows it to single reads only', async () => {
    const org = newOrg();
    const created = await create(org);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      object: 'webhook',
      id: expect.stringMatching(/^wh_[0-9A-Za-z]+$/),
      url: 'https://shop.example/hooks',
      events: ['checkout.completed'],
      is_active: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+={0,2}$/),
      created_at: expect.any(String),
      livemode: false,
    });
    expect(Buffer.from(created.body.secret.slice(6), 'base64')).toHaveLength(24);
    const second = await create(org, { url: 'https://shop.example/second', events: ['*'] });

    const list = await api.get('/webhooks', org);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', livemode: false });
    expect(list.body.data.map((e: any) => e.id)).toEqual([second.body.id, created.body.id]);
    expect(list.body.data.every((e: any) => !('secret' in e))).toBe(true);

    const one = await api.get(`/webhooks/${created.body.id}`, org);
    expect(one).toEqual({ status: 200, body: created.body });
  });

  it('keeps environments and organizations apart and answers 404 not_found when absent', async () => {
    const org = newOrg();
    const { body: sandbox } = await create(org);
    const { body: production } = await create(org, { environment: 'PRODUCTION' });
    expect(production.livemode).toBe(true);
    expect((await api.get('/webhooks', org)).body.data.map((e: any) => e.id)).toEqual([sandbox.id]);
    expect((await api.get('/webhooks', org, 'PRODUCTION')).body).toMatchObject({
      livemode: true,
      data: [{ id: production.id }],
    });
    const absent = await api.get(`/webhooks/${production.id}`, org, 'SANDBOX');
    expect(absent).toEqual({ status: 404, body: { error: { code: 'not_found', message: expect.any(String) } } });
    expect((await api.get(`/webhooks/${sandbox.id}`, newOrg())).status).toBe(404);
    expect((await api.get('/webhooks/wh_nothing', org)).status).toBe(404);
    expect((await api.admin(newOrg(), 'GET', `/webhook_endpoints/${sandbox.id}`)).status).toBe(404);
  });

  it('refuses Publishable Keys', async () => {
    const org = newOrg();
    const { body } = await create(org);
    expect((await api.get('/webhooks', org, 'SANDBOX', 'publishable')).status).toBe(401);
    expect((await api.get(`/webhooks/${body.id}`, org, 'SANDBOX', 'publishable')).status).toBe(401);
  });

  it('takes HTTPS to public hosts only, localhost in Sandbox too, without WEBHOOK_ALLOW_PRIVATE_TARGETS', async () => {
    const org = newOrg();
    // Allowed only when the operator sets WEBHOOK_ALLOW_PRIVATE_TARGETS=sandbox (test/ssrf.int.test.ts).
    expect((await create(org, { url: 'http://localhost:3000/hooks' })).status).toBe(422);
    expect((await create(org, { url: 'https://127.0.0.1:3000/hooks' })).status).toBe(422);
    const plain = await create(org, { url: 'http://shop.example/hooks' });
    expect(plain.status).toBe(422);
    expect(plain.body.error).toMatchObject({ code: 'validation_error', details: [{ path: 'url' }] });
    expect((await create(org, { environment: 'PRODUCTION', url: 'http://localhost/hooks' })).status).toBe(422);
    expect((await create(org, { url: 'not a url' })).status).toBe(422);
  });

  it('takes known public event types or *', async () => {
    const org = newOrg();
    const unknown = await create(org, { events: ['checkout.completed', 'CheckoutSessionCompleted'] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details[0].path).toBe('events.1');
    expect((await create(org, { events: [] })).status).toBe(422);
    const all = await create(org, { events: ['*', 'invoice.paid', 'invoice.paid'] });
    expect(all.body.events).toEqual(['*', 'invoice.paid']);
  });

  it('updates url and events, deactivates, reactivates, rolls the secret and deletes', async () => {
    const org = newOrg();
    const { body: created } = await create(org);
    const path = `/webhook_endpoints/${created.id}`;
    const updated = await api.admin(org, 'PATCH', path, {
      url: 'https://shop.example/v2',
      events: ['invoice.paid', 'subscription.activated'],
    });
    expect(updated.body).toMatchObject({
      url: 'https://shop.example/v2',
      events: ['invoice.paid', 'subscription.activated'],
      is_active: true,
      secret: created.secret,
    });
    expect((await api.admin(org, 'PATCH', path, { url: 'http://shop.example' })).status).toBe(422);
    expect((await api.admin(org, 'PATCH', path, { is_active: false })).body.is_active).toBe(false);
    expect((await api.get(`/webhooks/${created.id}`, org)).body.is_active).toBe(false);
    expect((await api.admin(org, 'PATCH', path, { is_active: true })).body.is_active).toBe(true);

    const rolled = await api.admin(org, 'POST', `${path}/secret/roll`);
    expect(rolled.status).toBe(200);
    expect(rolled.body.secret).toMatch(/^whsec_/);
    expect(rolled.body.secret).not.toBe(created.secret);
    expect((await api.get(`/webhooks/${created.id}`, org)).body.secret).toBe(rolled.body.secret);

    const deleted = await api.admin(org, 'DELETE', path);
    expect(deleted.body).toEqual({ object: 'webhook', id: created.id, deleted: true, livemode: false });
    expect((await api.get(`/webhooks/${created.id}`, org)).status).toBe(404);
    expect((await api.get('/webhooks', org)).body.data).toEqual([]);
    expect((await api.admin(org, 'DELETE', path)).status).toBe(404);
    expect((await api.admin(org, 'PATCH', path, { is_active: true })).status).toBe(404);
  });

  it('never publishes a secret in its events', async () => {
    const org = newOrg();
    const { body } = await create(org);
    await api.admin(org, 'POST', `/webhook_endpoints/${body.id}/secret/roll`);
    const events = await running.service.context.store.readStream(`webhook_endpoint-${body.id}`);
    expect(events.map((e) => e.type)).toEqual(['WebhookEndpointCreated', 'WebhookEndpointSecretRolled']);
    expect(JSON.stringify(events)).not.toContain('whsec_');
  });
});
