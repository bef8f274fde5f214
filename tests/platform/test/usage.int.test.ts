import { eventually } from '@billing/testing';
import { type Receiver, lifecycleOrganization, startLifecyclePlatform, startReceiver } from '../src/lifecycle-helpers';
import { createUser, signedIn } from '../src/dashboard-helpers';
import { type Platform, plan } from '../src/platform';

jest.setTimeout(240000);

/**
 * Usage on a plan's metered prices (docs/usage.md), on the bus the platform runs (Kafka in CI):
 * bought on the hosted page, usage reported through the gateway and on the usage topic, billed
 * on the renewal invoice the saved card pays when the test clock passes the period's end, and
 * the last period's usage on a final invoice, once the subscription is canceled at its period end
 * or canceled now by its customer in the portal.
 */
describe('usage billed on the renewal invoice', () => {
  let platform: Platform;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startLifecyclePlatform({ config: { BILLING_USAGE_TOPIC: 'on' } });
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  it('bills the usage reported by API and by the usage topic, paid with the saved card', async () => {
    const { org, client, send, subscribeOnClock, advance, invoicesOf } = await lifecycleOrganization(
      platform,
      receiver,
    );
    const prices = [
      { meter: 'api_calls', unit_amount: 1, package_size: 100 },
      { meter: 'seats', unit_amount: 120 },
    ];
    await client.createProduct(org.id, plan({ slug: 'metered', price: 199, metered_prices: prices }));
    expect((await send('POST', '/meters', { key: 'api_calls', name: 'API calls', aggregation: 'sum' })).status).toBe(
      201,
    );
    const seats = await send('POST', '/meters', { key: 'seats', name: 'Seats', aggregation: 'max' });
    expect(seats.status).toBe(201);
    // Renamed, deactivated and reactivated through the gateway.
    expect((await send('POST', `/meters/${seats.body.id}`, { name: 'Seats in use' })).body.name).toBe('Seats in use');
    expect((await send('POST', `/meters/${seats.body.id}/deactivate`)).body.status).toBe('inactive');
    expect((await send('GET', `/meters/${seats.body.id}`)).body.status).toBe('inactive');
    expect((await send('POST', `/meters/${seats.body.id}/reactivate`)).body.status).toBe('active');
    const { subscription, clock } = await subscribeOnClock('metered@example.com', '4242424242424242', {
      product_slug: 'metered',
    });
    const customer = subscription.customer_id;
    expect(subscription.metered_prices).toEqual([
      { meter: 'api_calls', unit_amount: 1, package_size: 100 },
      { meter: 'seats', unit_amount: 120, package_size: 1 },
    ]);

    await advance(clock, '2026-02-10T10:00:00Z');
    const byApi = await send('POST', '/usage_events', {
      events: [
        { id: 'api-1', customer_id: customer, meter: 'api_calls', quantity: 1000 },
        { id: 'api-2', customer_id: customer, meter: 'api_calls', quantity: 234 },
        { id: 'seats-1', customer_id: customer, meter: 'seats', quantity: 3 },
      ],
    });
    expect(byApi.status).toBe(202);
    expect(byApi.body).toMatchObject({ received: 3, stored: 3, duplicates: 0 });
    const onTopic = (events: unknown[]) =>
      platform.infrastructure.bus.publishRaw(
        'usage.events',
        customer,
        JSON.stringify({ organization: org.id, livemode: false, events }),
      );
    await onTopic([
      { id: 'topic-1', customer_id: customer, meter: 'api_calls', quantity: 766, timestamp: '2026-02-09T00:00:00Z' },
      { id: 'topic-2', customer_id: customer, meter: 'seats', quantity: 5 },
    ]);
    await onTopic([{ id: 'api-1', customer_id: customer, meter: 'api_calls', quantity: 1000 }]); // a repeat
    await eventually(async () => {
      const usage = (await send('GET', `/customers/${customer}/usage`)).body;
      expect(usage.meters).toEqual([
        { meter: 'api_calls', aggregation: 'sum', quantity: 2000, events: 3 },
        { meter: 'seats', aggregation: 'max', quantity: 5, events: 2 },
      ]);
    }, 30000);
    // The merchant reads it on the customer's page of the dashboard too.
    await createUser(platform.gatewayUrl, org.id, 'owner@metered.example', 'owner', 'a long enough password 1');
    const owner = await signedIn(platform.gatewayUrl, 'owner@metered.example', 'a long enough password 1');
    const page = (await owner.get(`/dashboard/${org.id}/sandbox/customers/${customer}`)).html;
    expect(page).toContain('<h2>Usage</h2>');
    expect(page).toMatch(/<code>api_calls<\/code><\/td>\s*<td>Sum<\/td>\s*<td>2,000<\/td>\s*<td>3<\/td>/);
    expect(page).toMatch(/<code>seats<\/code><\/td>\s*<td>Maximum<\/td>\s*<td>5<\/td>\s*<td>2<\/td>/);
    // And the customer in the portal, priced as the period's invoice will bill it.
    const portal = await send('POST', '/portal/sessions', {
      customer_id: customer,
      return_url: 'https://merchant.example/account',
    });
    const portalPage = await (await fetch(portal.body.url)).text();
    expect(portalPage).toContain('<dt>Usage this period: API calls</dt><dd>2,000 (NT$20)</dd>');
    expect(portalPage).toContain('<dt>Usage this period: Seats in use</dt><dd>5 (NT$600)</dd>');
    expect(portalPage).toContain(`id="usage-note-${subscription.id}"`);
    expect(portalPage).toContain('<dt>Next payment</dt><dd>NT$199 + NT$620 on 28 Feb 2026</dd>');

    await advance(clock, '2026-03-02T00:00:00Z');
    const renewal = (await invoicesOf(subscription.id)).find(
      (invoice: { period_start: string }) => invoice.period_start === '2026-02-28T10:00:00.000Z',
    );
    expect(renewal).toMatchObject({ status: 'paid', subtotal: 199 + 20 + 600, amount_paid: 819, amount_due: 0 });
    expect(renewal.lines.map((line: { kind: string; amount: number }) => [line.kind, line.amount])).toEqual([
      ['subscription', 199],
      ['usage', 20],
      ['usage', 600],
    ]);
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE');

    // Canceled at its period's end: no renewal follows, and the last period's usage is billed on a
    // final invoice that the saved card pays as the period ends.
    expect((await send('POST', `/subscriptions/${subscription.id}/cancel`, {})).body.cancel_at_period_end).toBe(true);
    const last = await send('POST', '/usage_events', {
      events: [{ id: 'api-3', customer_id: customer, meter: 'api_calls', quantity: 250 }],
    });
    expect(last.body).toMatchObject({ stored: 1 });
    await advance(clock, '2026-04-01T00:00:00Z');
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('CANCELED');
    const after = (await invoicesOf(subscription.id)).filter(
      (invoice: { created_at: string }) => invoice.created_at > '2026-03-01T00:00:00Z',
    );
    expect(after).toEqual([
      expect.objectContaining({
        status: 'paid',
        period_start: '2026-02-28T10:00:00.000Z',
        period_end: '2026-03-31T10:00:00.000Z',
        amount_paid: 3,
        lines: [expect.objectContaining({ kind: 'usage', meter: 'api_calls', quantity: 250, amount: 3 })],
      }),
    ]);
    await eventually(() =>
      expect(
        receiver.events.filter((event) => event.type === 'invoice.paid' && event.data.object.id === after[0].id),
      ).toHaveLength(1),
    );
  });

  it('bills the usage on a final invoice at once when the customer cancels now in the portal', async () => {
    const { org, client, send, subscribeOnClock, advance, invoicesOf } = await lifecycleOrganization(
      platform,
      receiver,
    );
    const prices = [{ meter: 'api_calls', unit_amount: 1, package_size: 100 }];
    await client.createProduct(org.id, plan({ slug: 'metered', price: 199, metered_prices: prices }));
    await send('POST', '/meters', { key: 'api_calls', name: 'API calls', aggregation: 'sum' });
    const config = await client.admin('POST', `/organizations/${org.id}/portal_configurations`, {
      environment: 'SANDBOX',
      features: { cancel: { mode: 'immediately' } },
    });
    expect(config.status).toBe(201);
    const { subscription, clock } = await subscribeOnClock('leaving@example.com', '4242424242424242', {
      product_slug: 'metered',
    });
    await advance(clock, '2026-02-10T10:00:00Z');
    // The usage the period's invoice will bill, on the portal's main page (in zh-TW here): none, then some.
    const read = await send('POST', '/portal/sessions', {
      customer_id: subscription.customer_id,
      return_url: 'https://merchant.example/account',
      locale: 'zh-TW',
    });
    const mainPage = async () => (await fetch(read.body.url)).text();
    expect(await mainPage()).toContain('<dt>本期用量</dt><dd>尚無</dd>');
    const usage = await send('POST', '/usage_events', {
      events: [{ id: 'leaving-1', customer_id: subscription.customer_id, meter: 'api_calls', quantity: 450 }],
    });
    expect(usage.body).toMatchObject({ stored: 1 });
    expect(await mainPage()).toContain('<dt>本期用量：API calls</dt><dd>450（NT$5）</dd>');

    const portal = await send('POST', '/portal/sessions', {
      customer_id: subscription.customer_id,
      return_url: 'https://merchant.example/account',
      configuration_id: config.body.id,
      locale: 'zh-TW',
    });
    const cancelUrl = `${portal.body.url}/subscriptions/${subscription.id}/cancel`;
    const confirm = await (await fetch(cancelUrl)).text();
    expect(confirm).toContain('<p id="usage-billed">尚未計費的用量將立即開立最終帳單');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(confirm)![1]!;
    const done = await fetch(cancelUrl, {
      method: 'POST',
      body: new URLSearchParams({ csrf_token: csrf }),
      redirect: 'manual',
    });
    expect(done.headers.get('location')).toMatch(/\?notice=canceled$/);
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('CANCELED');
    // Billed now: the portal no longer shows it as to come.
    expect(await mainPage()).not.toContain('本期用量');

    // Opened with the cancellation, its period ending then; charged on the saved card by the next sweep.
    await advance(clock, '2026-02-10T10:01:00Z');
    await eventually(async () => {
      const final = (await invoicesOf(subscription.id)).filter((invoice: { lines: { kind: string }[] }) =>
        invoice.lines.some((line) => line.kind === 'usage'),
      );
      expect(final).toEqual([
        expect.objectContaining({
          status: 'paid',
          period_start: '2026-01-31T10:00:00.000Z',
          period_end: '2026-02-10T10:00:00.000Z',
          amount_paid: 5,
          lines: [expect.objectContaining({ kind: 'usage', meter: 'api_calls', quantity: 450, amount: 5 })],
        }),
      ]);
    }, 30000);
  });
});
