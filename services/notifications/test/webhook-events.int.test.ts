import {
  BILLING_TOPIC,
  CHECKOUT_TOPIC,
  type DomainEventEnvelope,
  type Environment,
  newId,
  webhookEventId,
} from '@billing/contracts';
import {
  type Infrastructure,
  type ServiceUnderTest,
  createInfrastructure,
  startServiceForTest,
  testInfrastructure,
} from '@billing/runtime';
import { describeWithServer, eventually } from '@billing/testing';
import { notificationsService } from '../src';
import { client, completedSession, envelope, newOrg, publish } from './helpers';

jest.setTimeout(120000);

const DAY_MS = 24 * 60 * 60 * 1000;

/** A public event about `object` (it needs an `id`), as billing's relay publishes it. */
function publicEvent(
  type: string,
  organization: string,
  object: Record<string, unknown> & { id: string },
  at: string,
  environment: Environment = 'SANDBOX',
): DomainEventEnvelope {
  return envelope(type, organization, { object }, environment, new Date(at));
}

/** The id notifications gives the event: of its type, record and the record's version (or the event's time). */
const idOf = (e: DomainEventEnvelope) => {
  const object = e.data.object as { id: string; updated_at?: string };
  return webhookEventId(e.type, object.id, object.updated_at ?? e.occurred_at);
};

/**
 * The organization's events list (GET /admin/webhook_events): every public event the consumer
 * received, whether or not an endpoint subscribes to it, kept 30 days.
 */
function eventsListSuite(startInfrastructure: () => Promise<Infrastructure>) {
  let infrastructure: Infrastructure;
  let running: ServiceUnderTest;
  let clock = Date.parse('2026-11-21T08:00:00.000Z');
  const api = client(() => running);
  const table = () => `${running.service.context.store.tables.schema}.webhook_events`;

  beforeAll(async () => {
    infrastructure = await startInfrastructure();
    running = await startServiceForTest(notificationsService, {
      infrastructure,
      now: () => new Date(clock),
      config: { WEBHOOK_EVENTS_PRUNE_INTERVAL_MS: '100' },
    });
  });
  afterAll(async () => {
    await running.stop();
    await infrastructure.close();
  });

  const list = async (org: string, query = '', environment: Environment = 'SANDBOX') =>
    api.admin(org, 'GET', `/webhook_events?environment=${environment}${query}`);
  const idsOf = async (org: string, query = '', environment: Environment = 'SANDBOX') => {
    const reply = await list(org, query, environment);
    expect(reply.status).toBe(200);
    return (reply.body.data as Array<{ id: string }>).map((e) => e.id);
  };
  /** Waits until the organization's list is exactly `expected` (ids, newest first). */
  const listed = (org: string, expected: string[], environment: Environment = 'SANDBOX') =>
    eventually(async () => expect(await idsOf(org, '&limit=100', environment)).toEqual(expected), 60000);
  const storedRows = async (org?: string) => {
    const { rows } = await running.infrastructure.database.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${table()} ${org ? 'WHERE organization = $1' : ''}`,
      org ? [org] : [],
    );
    return Number(rows[0]!.n);
  };

  it('lists every public event consumed, none subscribed to, newest first, by type and by record, a page at a time', async () => {
    const org = newOrg();
    const session = completedSession();
    const subscription = { object: 'subscription', id: newId('subscription'), status: 'ACTIVE' };
    const customer = { object: 'customer', id: newId('customer'), email: 'buyer@example.com' };
    const invoice = { object: 'invoice', id: newId('invoice'), subscription_id: subscription.id };
    const completed = envelope(
      'checkout.completed',
      org,
      { session_id: session.id, object: session },
      'SANDBOX',
      new Date('2026-11-21T07:55:00.000Z'),
    );
    const created = publicEvent('customer.created', org, customer, '2026-11-21T07:56:00.000Z');
    const activated = publicEvent(
      'subscription.activated',
      org,
      { ...subscription, updated_at: '2026-11-21T07:57:00.000Z' },
      '2026-11-21T07:57:00.000Z',
    );
    const paid = publicEvent('invoice.paid', org, invoice, '2026-11-21T07:58:00.000Z');
    const renewed = publicEvent(
      'subscription.renewed',
      org,
      { ...subscription, updated_at: '2026-11-21T07:59:00.000Z' },
      '2026-11-21T07:59:00.000Z',
    );
    const internal = { ...publicEvent('invoice.paid', org, invoice, '2026-11-21T08:00:00.000Z'), type: 'InvoicePaid' };
    await publish(running, CHECKOUT_TOPIC, completed);
    await publish(running, BILLING_TOPIC, created, activated, paid, internal, renewed);
    const newestFirst = [renewed, paid, activated, created, completed].map(idOf);
    await listed(org, newestFirst);

    const page = await list(org);
    expect(page.body).toMatchObject({ object: 'list', livemode: false, has_more: false });
    expect(page.body.data[0]).toEqual({
      id: idOf(renewed),
      type: 'subscription.renewed',
      created_at: renewed.occurred_at,
      livemode: false,
      data: { object: renewed.data.object },
    });
    const one = await api.admin(org, 'GET', `/webhook_events/${idOf(completed)}?environment=SANDBOX`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: idOf(completed), type: 'checkout.completed', data: { object: session } });

    expect(await idsOf(org, '&type=subscription.activated')).toEqual([idOf(activated)]);
    expect(await idsOf(org, `&record_id=${subscription.id}`)).toEqual([idOf(renewed), idOf(activated)]);
    expect(await idsOf(org, `&record_id=${subscription.id}&type=subscription.renewed`)).toEqual([idOf(renewed)]);
    expect(await idsOf(org, `&record_id=${session.id}`)).toEqual([idOf(completed)]);
    expect(await idsOf(org, `&record_id=${newId('subscription')}`)).toEqual([]);
    expect(await idsOf(org, '&type=invoice.payment_failed')).toEqual([]);

    const pages: string[][] = [];
    let cursor = '';
    for (let more = true; more;) {
      const reply = await list(org, `&limit=2${cursor}`);
      pages.push(reply.body.data.map((e: { id: string }) => e.id));
      more = reply.body.has_more;
      cursor = `&starting_after=${pages.at(-1)!.at(-1)}`;
    }
    expect(pages).toEqual([newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4)]);
    const first = await list(org, `&record_id=${subscription.id}&limit=1`);
    expect([first.body.data[0].id, first.body.has_more]).toEqual([idOf(renewed), true]);
    const second = await list(org, `&record_id=${subscription.id}&limit=1&starting_after=${idOf(renewed)}`);
    expect([second.body.data[0].id, second.body.has_more]).toEqual([idOf(activated), false]);
  });

  it('stores a redelivered event once, and still delivers it to its endpoint once', async () => {
    const org = newOrg();
    const endpoint = await api.admin(org, 'POST', '/webhook_endpoints', {
      environment: 'SANDBOX',
      // `.example` never resolves: the attempts fail, the delivery is what the test counts.
      url: 'https://hooks.shop.example/events',
      events: ['invoice.paid'],
    });
    expect(endpoint.status).toBe(201);
    const invoice = { object: 'invoice', id: newId('invoice') };
    const paid = publicEvent('invoice.paid', org, invoice, '2026-11-21T07:00:00.000Z');
    await publish(running, BILLING_TOPIC, paid);
    await listed(org, [idOf(paid)]);
    // The relay publishes it again, twice in one batch, then a later event.
    const later = publicEvent('invoice.paid', org, { ...invoice, id: newId('invoice') }, '2026-11-21T07:01:00.000Z');
    await publish(running, BILLING_TOPIC, paid, paid, later);
    await listed(org, [idOf(later), idOf(paid)]);
    expect(await storedRows(org)).toBe(2);
    const deliveries = await api.admin(org, 'GET', `/webhook_events/${idOf(paid)}/deliveries`);
    expect(deliveries.body.data).toHaveLength(1);
    expect(deliveries.body.data[0]).toMatchObject({ endpoint_id: endpoint.body.id, event_type: 'invoice.paid' });
  });

  it("keeps another organization's and the other environment's events out", async () => {
    const [org, other] = [newOrg(), newOrg()];
    const customer = (at: string, organization: string, environment: Environment = 'SANDBOX') =>
      publicEvent('customer.created', organization, { object: 'customer', id: newId('customer') }, at, environment);
    const sandbox = customer('2026-11-21T06:00:00.000Z', org);
    const production = customer('2026-11-21T06:01:00.000Z', org, 'PRODUCTION');
    const others = customer('2026-11-21T06:02:00.000Z', other);
    await publish(running, BILLING_TOPIC, sandbox, production, others);
    await listed(org, [idOf(sandbox)]);
    await listed(org, [idOf(production)], 'PRODUCTION');
    await listed(other, [idOf(others)]);
    expect((await list(org, '', 'PRODUCTION')).body.livemode).toBe(true);

    const read = (organization: string, id: string, environment = 'SANDBOX') =>
      api.admin(organization, 'GET', `/webhook_events/${id}?environment=${environment}`);
    expect((await read(org, idOf(sandbox))).status).toBe(200);
    for (const absent of [
      await read(other, idOf(sandbox)),
      await read(org, idOf(sandbox), 'PRODUCTION'),
      await read(org, 'evt_00000000000000000000000000000000'),
    ]) {
      expect(absent.status).toBe(404);
      expect(absent.body.error.code).toBe('not_found');
    }
    // Another tenant's event is no cursor here.
    for (const [organization, query, environment] of [
      [other, `&starting_after=${idOf(sandbox)}`, 'SANDBOX'],
      [org, `&starting_after=${idOf(sandbox)}`, 'PRODUCTION'],
    ] as const) {
      const refused = await list(organization, query, environment);
      expect([refused.status, refused.body.error.details[0].code]).toEqual([400, 'unknown_cursor']);
    }
  });

  it('answers bad queries with 400 in the error envelope, changing nothing', async () => {
    const org = newOrg();
    const paid = publicEvent(
      'invoice.paid',
      org,
      { object: 'invoice', id: newId('invoice') },
      '2026-11-21T05:00:00.000Z',
    );
    await publish(running, BILLING_TOPIC, paid);
    await listed(org, [idOf(paid)]);
    const rowsBefore = await storedRows();
    const long = 'x'.repeat(256);
    const badLists = [
      '/webhook_events',
      '/webhook_events?environment=TEST',
      '/webhook_events?environment=SANDBOX&type=invoice.unknown',
      '/webhook_events?environment=SANDBOX&type=INVOICE.PAID',
      '/webhook_events?environment=SANDBOX&type=',
      '/webhook_events?environment=SANDBOX&type=invoice.paid&type=checkout.completed',
      `/webhook_events?environment=SANDBOX&record_id=${long}`,
      '/webhook_events?environment=SANDBOX&record_id=in_%00x',
      '/webhook_events?environment=SANDBOX&record_id=',
      '/webhook_events?environment=SANDBOX&limit=0',
      '/webhook_events?environment=SANDBOX&limit=101',
      '/webhook_events?environment=SANDBOX&limit=abc',
      '/webhook_events?environment=SANDBOX&starting_after=evt_unknown',
      `/webhook_events?environment=SANDBOX&starting_after=${long}`,
      '/webhook_events?environment=SANDBOX&kind=invoice.paid',
      `/webhook_events/${long}?environment=SANDBOX`,
      `/webhook_events/evt_%00?environment=SANDBOX`,
      `/webhook_events/${idOf(paid)}`,
      `/webhook_events/${idOf(paid)}?environment=sandbox`,
    ];
    for (const path of badLists) {
      const reply = await api.admin(org, 'GET', path);
      expect([path, reply.status, reply.body.error.code]).toEqual([path, 400, 'bad_request']);
      expect(reply.body.error.details.length).toBeGreaterThan(0);
    }
    expect(await storedRows()).toBe(rowsBefore);
    expect(await idsOf(org)).toEqual([idOf(paid)]);
  });

  // Last: it moves the clock past the retention of every event stored before.
  it('forgets an event 30 days after it was received, by the service clock', async () => {
    const org = newOrg();
    const customer = (at: string) =>
      publicEvent('customer.created', org, { object: 'customer', id: newId('customer') }, at);
    const old = customer('2026-11-21T04:00:00.000Z');
    await publish(running, BILLING_TOPIC, old);
    await listed(org, [idOf(old)]);
    clock += 29 * DAY_MS;
    // Its own time says nothing: a test clock's event may be from long ago.
    const recent = customer('2026-01-01T00:00:00.000Z');
    await publish(running, BILLING_TOPIC, recent);
    await listed(org, [idOf(old), idOf(recent)]);
    clock += DAY_MS + 60_000;
    await listed(org, [idOf(recent)]);
    expect(await storedRows(org)).toBe(1);
    const gone = await api.admin(org, 'GET', `/webhook_events/${idOf(old)}?environment=SANDBOX`);
    expect(gone.status).toBe(404);
  });
}

describeWithServer('DATABASE_URL', 'the events list on PostgreSQL (and Kafka when KAFKA_BROKERS is set)', () =>
  eventsListSuite(() => testInfrastructure('notifications-events-test')),
);

describe('the events list on PGlite and the in-process bus', () =>
  eventsListSuite(() => createInfrastructure({ clientId: 'notifications-events-pglite', dataDir: 'memory', env: {} })));
