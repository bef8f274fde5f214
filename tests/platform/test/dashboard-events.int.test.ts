import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@billing/testing';
import { DashboardAgent } from '../src/dashboard-helpers';
import {
  ADMIN_TOKEN,
  clientOf,
  type CreatedOrganization,
  jsonApi,
  type Platform,
  plan,
  startPlatform,
} from '../src/platform';

jest.setTimeout(120000);

interface Event {
  id: string;
  type: string;
  created_at: string;
  data: { object: { id: string } };
}

/** A merchant's endpoint on loopback that accepts every webhook. */
async function startReceiver() {
  const server = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The dashboard's events view (docs/dashboard-api.md, "The organization's events"): a paid
 * checkout's public events, on Kafka when KAFKA_BROKERS is set, listed by the admin API and on
 * the Events page, filtered by type and record, each with its page.
 */
describe('the events view', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let other: CreatedOrganization;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let endpointId: string;
  let bought: { sessionId: string; subscriptionId: string; customerId: string; invoiceId: string };
  let events: Event[];
  const send = jsonApi(
    () => platform.gatewayUrl,
    () => org.api_keys.sandbox.secret_key,
  );
  const admin = (organization: string, path: string) => client.admin('GET', `/organizations/${organization}${path}`);
  const listOf = async (query: string, organization = org.id) => {
    const reply = await admin(organization, `/webhook_events?${query}`);
    expect(reply.status).toBe(200);
    return reply.body.data as Event[];
  };
  const eventOf = (type: string) => events.find((e) => e.type === type)!;

  /** A subscription bought and paid on the hosted checkout page. */
  const buy = async () => {
    const created = await send('POST', '/checkout/sessions', {
      product_slug: 'monthly',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${created.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({
        email: 'mei.lin@example.com',
        name: 'Mei Lin',
        card_number: '4242424242424242',
        exp: '12/34',
        cvc: '123',
      }),
    });
    expect(paid.status).toBe(303);
    return eventually(async () => {
      const session = (await send('GET', `/checkout/sessions/${created.body.id}`)).body;
      const invoices = await send('GET', `/invoices?subscription_id=${session.subscription_id}`);
      expect(invoices.body.data).toHaveLength(1);
      return {
        sessionId: created.body.id as string,
        subscriptionId: session.subscription_id as string,
        customerId: session.customer_id as string,
        invoiceId: invoices.body.data[0].id as string,
      };
    });
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      // The receiver is on 127.0.0.1: the embedded default's setting, made explicit.
      config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Acme');
    other = await client.createOrganization('Other');
    await client.createProduct(org.id, plan({ slug: 'monthly', price: 300 }));
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: receiver.url,
      events: ['invoice.paid'],
    });
    expect(endpoint.status).toBe(201);
    endpointId = endpoint.body.id;
    bought = await buy();
    events = await eventually(async () => {
      const listed = await listOf('environment=SANDBOX&limit=100');
      expect(listed.map((e) => e.type)).toEqual(
        expect.arrayContaining(['customer.created', 'checkout.completed', 'subscription.activated', 'invoice.paid']),
      );
      return listed;
    }, 60000);
  });
  afterAll(async () => {
    await platform.stop();
    await receiver.close();
  });

  it('lists the checkout’s events newest first through the admin API, by type and by record', async () => {
    expect(eventOf('checkout.completed').data.object.id).toBe(bought.sessionId);
    expect(eventOf('subscription.activated').data.object.id).toBe(bought.subscriptionId);
    expect(eventOf('invoice.paid').data.object.id).toBe(bought.invoiceId);
    expect(eventOf('customer.created').data.object.id).toBe(bought.customerId);
    const times = events.map((e) => e.created_at);
    expect(times).toEqual([...times].sort().reverse());

    const paid = await listOf('environment=SANDBOX&type=invoice.paid');
    expect(paid.map((e) => e.id)).toEqual([eventOf('invoice.paid').id]);
    const ofSubscription = await listOf(`environment=SANDBOX&record_id=${bought.subscriptionId}`);
    expect(ofSubscription.length).toBeGreaterThan(0);
    expect(ofSubscription.every((e) => e.data.object.id === bought.subscriptionId)).toBe(true);
    expect(ofSubscription.map((e) => e.type)).toContain('subscription.activated');

    // Read again: the paging is checked against the list as it is now.
    const all = await listOf('environment=SANDBOX&limit=100');
    const first = await admin(org.id, '/webhook_events?environment=SANDBOX&limit=1');
    expect(first.body).toMatchObject({
      object: 'list',
      livemode: false,
      has_more: true,
      data: [{ id: all[0]!.id }],
    });
    const next = await admin(org.id, `/webhook_events?environment=SANDBOX&limit=1&starting_after=${all[0]!.id}`);
    expect(next.body.data[0].id).toBe(all[1]!.id);

    const one = await admin(org.id, `/webhook_events/${eventOf('invoice.paid').id}?environment=SANDBOX`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(eventOf('invoice.paid'));
  });

  it('keeps the events from another organization and the other environment, and refuses bad queries', async () => {
    const id = eventOf('invoice.paid').id;
    expect(await listOf('environment=SANDBOX', other.id)).toEqual([]);
    expect(await listOf('environment=PRODUCTION')).toEqual([]);
    for (const absent of [
      await admin(other.id, `/webhook_events/${id}?environment=SANDBOX`),
      await admin(org.id, `/webhook_events/${id}?environment=PRODUCTION`),
    ]) {
      expect([absent.status, absent.body.error.code]).toEqual([404, 'not_found']);
    }
    for (const query of ['type=invoice.nope', 'limit=0', `record_id=${'x'.repeat(256)}`, 'starting_after=evt_nope']) {
      const refused = await admin(org.id, `/webhook_events?environment=SANDBOX&${query}`);
      expect([query, refused.status, refused.body.error.code]).toEqual([query, 400, 'bad_request']);
    }
    expect((await admin('org_absent', '/webhook_events?environment=SANDBOX')).status).toBe(404);
  });

  describe('on the dashboard', () => {
    let operator: DashboardAgent;
    const base = () => `/dashboard/${org.id}/sandbox`;
    beforeAll(async () => {
      operator = new DashboardAgent(platform.gatewayUrl);
      expect((await operator.signIn({ admin_token: ADMIN_TOKEN })).status).toBe(303);
    });

    it('shows the events with links to their records and pages, filtered by type and record', async () => {
      const page = await operator.get(`${base()}/events`);
      expect(page.status).toBe(200);
      expect(page.html).toMatch(new RegExp(`<a href="${base()}/events"\\s+aria-current="page"\\s*>Events</a`));
      for (const event of events) expect(page.html).toContain(`href="${base()}/events/${event.id}"`);
      expect(page.html).toContain(`href="${base()}/subscriptions/${bought.subscriptionId}"`);
      expect(page.html).toContain(`href="${base()}/invoices/${bought.invoiceId}"`);
      expect(page.html).toContain(`href="${base()}/customers/${bought.customerId}"`);
      expect(page.html).toContain(`<time datetime="${eventOf('invoice.paid').created_at}">`);
      // A checkout session has no page of its own: its id is shown, not linked.
      expect(page.html).toContain(`<td>${bought.sessionId}</td>`);

      const paid = await operator.get(`${base()}/events?type=invoice.paid`);
      expect(paid.html).toContain(eventOf('invoice.paid').id);
      expect(paid.html).not.toContain(eventOf('checkout.completed').id);
      expect(paid.html).toMatch(/<option value="invoice.paid"\s+selected>/);

      const ofSubscription = await operator.get(`${base()}/events?record_id=${bought.subscriptionId}`);
      expect(ofSubscription.html).toContain(eventOf('subscription.activated').id);
      expect(ofSubscription.html).not.toContain(eventOf('invoice.paid').id);

      const none = await operator.get(`${base()}/events?type=refund.failed`);
      expect(none.html).toContain('No events match these filters yet.');
      const refused = await operator.get(`${base()}/events?record_id=${'x'.repeat(300)}`);
      expect(refused.html).toContain('role="alert"');
      expect(refused.html).toContain('name="record_id"');
      expect((await operator.get(`/dashboard/${other.id}/sandbox/events`)).html).toContain('No events yet.');
    });

    it("shows an event's payload, its record and its deliveries", async () => {
      const paid = eventOf('invoice.paid');
      const page = await eventually(async () => {
        const found = await operator.get(`${base()}/events/${paid.id}`);
        expect(found.html).toContain('SUCCEEDED');
        return found;
      });
      expect(page.status).toBe(200);
      expect(page.html).toContain('<code>invoice.paid</code>');
      const payload = /<pre class="card">([\s\S]*?)<\/pre>/.exec(page.html)![1]!;
      expect(
        JSON.parse(
          payload
            .replace(/&quot;/g, '"')
            .replace(/&#39;/g, "'")
            .replace(/&amp;/g, '&'),
        ),
      ).toEqual(paid);
      expect(page.html).toContain(`href="${base()}/invoices/${bought.invoiceId}#history"`);
      expect(page.html).toContain(`href="${base()}/events?record_id=${bought.invoiceId}"`);
      expect(page.html).toContain(`href="${base()}/webhooks/${endpointId}"`);

      // A checkout session's history is shown on its event's page.
      const completed = await operator.get(`${base()}/events/${eventOf('checkout.completed').id}`);
      expect(completed.html).toContain('<h2 id="history">History</h2>');
      expect(completed.html).toContain('CheckoutSessionCompleted');
      expect(completed.html).toContain('No deliveries of this event yet');

      expect((await operator.get(`${base()}/events/evt_00000000000000000000000000000000`)).status).toBe(404);
      expect((await operator.get(`/dashboard/${org.id}/production/events/${paid.id}`)).status).toBe(404);
    });

    it('speaks zh-TW on both pages when it is chosen', async () => {
      const reader = new DashboardAgent(platform.gatewayUrl);
      expect((await reader.signIn({ admin_token: ADMIN_TOKEN })).status).toBe(303);
      expect((await reader.get(`/dashboard/language/zh-TW?back=${encodeURIComponent(base())}`)).status).toBe(303);
      const pages = [
        [`${base()}/events`, ['All types', 'Record id', 'newest first', '>Filter<']],
        [
          `${base()}/events/${eventOf('checkout.completed').id}`,
          ['Payload', 'Other events of this record', 'No deliveries'],
        ],
      ] as const;
      for (const [path, english] of pages) {
        const page = await reader.get(path);
        expect(page.html).toContain('<html lang="zh-TW">');
        expect(page.html).toMatch(/<h1>事件 <span class="badge">測試環境<\/span><\/h1>/);
        for (const words of english)
          expect({ words, found: page.html.includes(words) }).toEqual({ words, found: false });
      }
    });
  });
});
