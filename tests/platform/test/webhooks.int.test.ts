import { type IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookEvent } from '@billing/contracts';
import { eventually } from '@billing/testing';
import { Webhook } from 'standardwebhooks';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(90000);

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** The merchant's endpoint on loopback (Sandbox accepts http://127.0.0.1). */
async function startReceiver() {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('webhooks through the gateway', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const clock = Date.parse('2026-11-21T08:00:00.000Z');

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      now: () => new Date(clock),
      // The receiver is on 127.0.0.1: the embedded default's setting, made explicit.
      config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    await client.createProduct(org.id, plan({ slug: 'pro', price: 299 }));
  });
  afterAll(async () => {
    await platform.stop();
    await receiver.close();
  });

  it('manages endpoints through the admin API and reads them with the Secret Key only', async () => {
    const path = `/organizations/${org.id}/webhook_endpoints`;
    const created = await client.admin('POST', path, {
      environment: 'SANDBOX',
      url: 'https://shop.example/hooks',
      events: ['invoice.paid'],
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    const sk = org.api_keys.sandbox.secret_key;

    const list = await client.get('/webhooks', sk);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', livemode: false });
    expect(list.body.data[0]).toEqual({
      object: 'webhook',
      id: created.body.id,
      url: 'https://shop.example/hooks',
      events: ['invoice.paid'],
      is_active: true,
      created_at: expect.any(String),
      livemode: false,
    });
    expect((await client.get(`/webhooks/${created.body.id}`, sk)).body.secret).toBe(created.body.secret);
    expect((await client.get('/webhooks', org.api_keys.sandbox.publishable_key)).status).toBe(401);
    const other = await client.get(`/webhooks/${created.body.id}`, org.api_keys.production.secret_key);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('not_found');

    const rolled = await client.admin('POST', `${path}/${created.body.id}/secret/roll`);
    expect(rolled.body.secret).not.toBe(created.body.secret);
    expect((await client.admin('PATCH', `${path}/${created.body.id}`, { is_active: false })).body.is_active).toBe(
      false,
    );
    expect((await client.admin('GET', `${path}?environment=SANDBOX`)).body.data).toHaveLength(1);
    expect((await client.admin('DELETE', `${path}/${created.body.id}`)).body.deleted).toBe(true);
    expect((await client.get(`/webhooks/${created.body.id}`, sk)).status).toBe(404);
    expect((await client.admin('POST', `/organizations/org_absent/webhook_endpoints`, {})).status).toBe(404);
  });

  it('sends signed checkout.completed (with the link attribution), subscription.activated and invoice.paid for a payment', async () => {
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: receiver.url,
      events: ['checkout.completed', 'subscription.activated', 'invoice.paid'],
    });
    expect(endpoint.status).toBe(201);
    const sk = org.api_keys.sandbox.secret_key;
    const link = await fetch(`${platform.gatewayUrl}/v1/payment-links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ productSlug: 'pro' }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    expect(link.status).toBe(201);
    const opened = await fetch(`${link.body.url}?ref=newsletter&utm_source=mail&utm_campaign=launch`, {
      redirect: 'manual',
    });
    expect(opened.status).toBe(303);
    const pageUrl = opened.headers.get('location')!;
    const sessionId = pageUrl.split('/').pop()!;
    const paid = await fetch(pageUrl, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({
        email: 'buyer@example.com',
        name: 'Buyer',
        card_number: '4242424242424242',
        exp: '12/34',
        cvc: '123',
      }),
    });
    expect({ status: paid.status, page: paid.status === 303 ? '' : await paid.text() }).toEqual({
      status: 303,
      page: '',
    });

    const completed = await eventually(() => {
      const found = receiver.received.filter((r) => JSON.parse(r.body).type === 'checkout.completed');
      expect(found).toHaveLength(1);
      return found[0]!;
    }, 30000);
    const payload = new Webhook(endpoint.body.secret).verify(completed.body, {
      'webhook-id': String(completed.headers['webhook-id']),
      'webhook-timestamp': String(completed.headers['webhook-timestamp']),
      'webhook-signature': String(completed.headers['webhook-signature']),
    }) as WebhookEvent;
    expect(WebhookEvent.parse(payload)).toBeDefined();
    expect(payload).toMatchObject({
      id: completed.headers['webhook-id'],
      type: 'checkout.completed',
      livemode: false,
      data: {
        object: {
          object: 'checkout.session',
          id: sessionId,
          status: 'COMPLETE',
          customer_email: 'buyer@example.com',
          metadata: { ref: 'newsletter', utm_source: 'mail', utm_campaign: 'launch' },
        },
      },
    });

    // The receiver answers before the scheduler records the attempt: the log catches up shortly after.
    await eventually(async () => {
      const log = await client.admin('GET', `/organizations/${org.id}/webhook_events/${payload.id}/deliveries`);
      expect(log.body.data).toEqual([
        expect.objectContaining({
          endpoint_id: endpoint.body.id,
          status: 'SUCCEEDED',
          attempts: [expect.objectContaining({ attempt: 1, response_status: 200 })],
        }),
      ]);
    }, 10000);
    // Billing subscribes to the paid session: the same buyer's subscription and first invoice.
    const billingEvents = await eventually(() => {
      const types = receiver.received.map((r) => JSON.parse(r.body).type).sort();
      expect(types).toEqual(['checkout.completed', 'invoice.paid', 'subscription.activated']);
      return receiver.received;
    }, 30000);
    for (const request of billingEvents) {
      const event = new Webhook(endpoint.body.secret).verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      }) as WebhookEvent;
      expect(WebhookEvent.parse(event).livemode).toBe(false);
    }
    const [invoice, subscription] = billingEvents
      .map((r) => JSON.parse(r.body))
      .filter((e) => e.type !== 'checkout.completed')
      .sort((a, b) => a.type.localeCompare(b.type));
    expect(subscription.data.object).toMatchObject({
      object: 'subscription',
      status: 'ACTIVE',
      checkout_session_id: sessionId,
      livemode: false,
    });
    expect(invoice.data.object).toMatchObject({
      object: 'invoice',
      status: 'paid',
      subscription_id: subscription.data.object.id,
      total: 299,
    });

    const byEndpoint = await client.admin(
      'GET',
      `/organizations/${org.id}/webhook_endpoints/${endpoint.body.id}/deliveries`,
    );
    expect(byEndpoint.body.data.map((d: any) => d.event_id)).toContain(payload.id);
  });
});
