import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingService } from '../src';
import { endCanceledPeriod } from '../src/engine/renewals/final-invoice';
import { usageEventsTable } from '../src/usage/events/store';
import { caller, client, feeds, newOrg } from './helpers';

/** Meters, usage events, the credits they spend and the renewal invoices that bill them (docs/usage.md). */
jest.setTimeout(120_000);

let running: ServiceUnderTest;
beforeAll(async () => {
  running = await startServiceForTest(billingService, {
    now: () => new Date('2026-11-21T08:00:00.000Z'),
    config: { BILLING_TRIAL_SWEEP_INTERVAL_MS: '3600000', BILLING_USAGE_TOPIC: 'on' },
  });
});
afterAll(() => running.stop());

const { call } = client(() => running);
const { product, paid } = feeds(() => running);

async function meter(org: string, body: Record<string, unknown>) {
  const reply = await call('POST', '/v1/meters', caller(org), { name: String(body.key), ...body });
  expect(reply.status).toBe(201);
  return reply.body;
}

/** A new organization's customer on a test clock frozen at 31 January 10:00, subscribed to `plan`. */
async function subscribedOnClock(plan: Record<string, unknown>) {
  const org = newOrg();
  const clock = (await call('POST', '/v1/test_clocks', caller(org), { frozen_time: '2026-01-31T10:00:00Z' })).body;
  const productId = await product(org, plan);
  await paid(org, { product_id: productId, customer_email: 'usage@example.com', test_clock: clock.id });
  const subscription = await eventually(async () => {
    const list = await call('GET', '/v1/subscriptions', caller(org));
    expect(list.body.subscriptions).toHaveLength(1);
    return list.body.subscriptions[0];
  });
  const customer: string = subscription.customer_id;
  return {
    org,
    customer,
    subscription,
    report: (events: Array<Record<string, unknown>>) =>
      call('POST', '/v1/usage_events', caller(org), { events: events.map((e) => ({ customer_id: customer, ...e })) }),
    advanceTo: async (at: string) => {
      await call('POST', `/v1/test_clocks/${clock.id}/advance`, caller(org), { frozen_time: at });
      await eventually(async () =>
        expect((await call('GET', `/v1/test_clocks/${clock.id}`, caller(org))).body.status).toBe('ready'),
      );
    },
    invoices: async () =>
      (await call('GET', `/v1/invoices?subscription_id=${subscription.id}`, caller(org))).body.data as Array<{
        lines: Array<Record<string, unknown>>;
        period_start: string;
        amount_due: number;
        status: string;
      }>,
  };
}

describe('meters', () => {
  it('are created once per key, listed in key order, and refuse credits on a max meter', async () => {
    const org = newOrg();
    const created = await meter(org, { key: 'seats', name: 'Seats', aggregation: 'max' });
    expect(created).toMatchObject({
      object: 'meter',
      key: 'seats',
      name: 'Seats',
      aggregation: 'max',
      credits_per_unit: null,
      status: 'active',
      created_at: '2026-11-21T08:00:00.000Z',
      updated_at: '2026-11-21T08:00:00.000Z',
      livemode: false,
    });
    expect(created.id).toMatch(/^mtr_/);
    await meter(org, { key: 'api_calls', aggregation: 'sum', credits_per_unit: 2 });

    const again = await call('POST', '/v1/meters', caller(org), { key: 'seats', name: 'x', aggregation: 'sum' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
    const maxWithCredits = await call('POST', '/v1/meters', caller(org), {
      key: 'peak',
      name: 'Peak',
      aggregation: 'max',
      credits_per_unit: 1,
    });
    expect(maxWithCredits.status).toBe(422);
    expect(maxWithCredits.body.error.details[0].path).toBe('credits_per_unit');
    const badKey = await call('POST', '/v1/meters', caller(org), { key: 'no spaces', name: 'x', aggregation: 'sum' });
    expect(badKey.status).toBe(422);

    const list = await call('GET', '/v1/meters', caller(org));
    expect(list.body.data.map((m: { key: string }) => m.key)).toEqual(['api_calls', 'seats']);
    expect((await call('GET', '/v1/meters', caller(newOrg()))).body.data).toEqual([]);
  });

  it('are renamed, deactivated (their events refused, those stored kept) and reactivated; nothing else changes', async () => {
    const s = await subscribedOnClock({});
    const calls = await meter(s.org, { key: 'calls', name: 'Calls', aggregation: 'sum' });
    const path = `/v1/meters/${calls.id}`;
    expect((await s.report([{ id: 'before', meter: 'calls', quantity: 5 }])).body.stored).toBe(1);

    const renamed = await call('POST', path, caller(s.org), { name: '  API calls ' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...calls, name: 'API calls' });
    for (const body of [{ aggregation: 'max' }, { name: '' }, { name: 'x', key: 'other' }]) {
      const refused = await call('POST', path, caller(s.org), body);
      expect([refused.status, refused.body.error.code]).toEqual([422, 'validation_error']);
    }

    const deactivated = await call('POST', `${path}/deactivate`, caller(s.org), {});
    expect(deactivated.body).toMatchObject({ id: calls.id, name: 'API calls', status: 'inactive' });
    expect((await call('POST', `${path}/deactivate`, caller(s.org), {})).body).toEqual(deactivated.body);
    const refused = await s.report([
      { id: 'ok', meter: 'calls', quantity: 1 },
      { id: 'after', meter: 'calls', quantity: 7 },
    ]);
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([
      { path: 'events.0.meter', code: 'meter_inactive', message: expect.stringContaining('calls is deactivated') },
    ]);
    const usage = (await call('GET', `/v1/customers/${s.customer}/usage`, caller(s.org))).body;
    expect(usage.meters).toEqual([{ meter: 'calls', aggregation: 'sum', quantity: 5, events: 1 }]);
    expect((await call('GET', path, caller(s.org))).body.status).toBe('inactive');

    expect((await call('POST', `${path}/reactivate`, caller(s.org), {})).body.status).toBe('active');
    expect((await s.report([{ id: 'after', meter: 'calls', quantity: 7 }])).body.stored).toBe(1);

    // Another organization's meter, or none, is not found.
    for (const [who, id] of [
      [newOrg(), calls.id],
      [s.org, 'mtr_missing'],
    ]) {
      expect((await call('GET', `/v1/meters/${id}`, caller(who!))).status).toBe(404);
      expect((await call('POST', `/v1/meters/${id}/deactivate`, caller(who!), {})).status).toBe(404);
    }
    expect((await call('GET', path, caller(s.org))).body.status).toBe('active');
  });
});

describe('usage events', () => {
  it('are stored once per id, refused whole when one names what is not there, and summed per meter', async () => {
    const s = await subscribedOnClock({});
    await meter(s.org, { key: 'api_calls', aggregation: 'sum' });
    await meter(s.org, { key: 'seats', aggregation: 'max' });
    await meter(s.org, { key: 'logins', aggregation: 'count' });

    const single = await call('POST', '/v1/usage_events', caller(s.org), {
      id: 'evt-1',
      customer_id: s.customer,
      meter: 'api_calls',
      quantity: 1000,
    });
    expect(single.status).toBe(202);
    expect(single.body).toEqual({ object: 'usage_report', received: 1, stored: 1, duplicates: 0, livemode: false });

    const batch = await s.report([
      { id: 'evt-1', meter: 'api_calls', quantity: 1000 },
      { id: 'evt-2', meter: 'api_calls', quantity: 234, timestamp: '2026-01-31T09:00:00Z' },
      { id: 'evt-3', meter: 'seats', quantity: 3 },
      { id: 'evt-4', meter: 'seats', quantity: 5 },
      { id: 'evt-5', meter: 'logins', quantity: 7 },
      { id: 'evt-6', meter: 'logins' },
    ]);
    expect(batch.status).toBe(202);
    expect(batch.body).toMatchObject({ received: 6, stored: 5, duplicates: 1 });

    const refusals: Array<[Record<string, unknown>, string, string]> = [
      [{ id: 'x-1', meter: 'nope' }, 'events.1.meter', 'unknown_meter'],
      [{ id: 'x-1', meter: 'seats', customer_id: 'cus_nobody' }, 'events.1.customer_id', 'unknown_customer'],
      [
        { id: 'x-1', meter: 'seats', timestamp: '2025-12-01T00:00:00Z' },
        'events.1.timestamp',
        'timestamp_out_of_range',
      ],
      [
        { id: 'x-1', meter: 'seats', timestamp: '2026-01-31T10:06:00Z' },
        'events.1.timestamp',
        'timestamp_out_of_range',
      ],
      [{ id: 'x-1', meter: 'seats', quantity: -1 }, 'events.1.quantity', 'too_small'],
    ];
    for (const [event, path, code] of refusals) {
      const refused = await s.report([{ id: 'ok-1', meter: 'seats', quantity: 1 }, event]);
      expect(refused.status).toBe(422);
      expect(refused.body.error.details[0]).toMatchObject({ path, code });
    }
    const one = await call('POST', '/v1/usage_events', caller(s.org), {
      id: 'x-2',
      customer_id: s.customer,
      meter: '',
    });
    expect(one.body.error.details[0]).toMatchObject({ path: 'meter', code: 'invalid_format' });
    const other = await call('POST', '/v1/usage_events', caller(newOrg()), {
      id: 'evt-9',
      customer_id: s.customer,
      meter: 'api_calls',
    });
    expect(other.status).toBe(422);

    const summary = await call('GET', `/v1/customers/${s.customer}/usage`, caller(s.org));
    expect(summary.body).toMatchObject({
      object: 'usage_summary',
      to: '2026-01-31T10:05:00.000Z',
      meters: [
        { meter: 'api_calls', aggregation: 'sum', quantity: 1234, events: 2 },
        { meter: 'logins', aggregation: 'count', quantity: 2, events: 2 },
        { meter: 'seats', aggregation: 'max', quantity: 5, events: 2 },
      ],
    });
    const window = `from=2026-01-31T09:30:00Z&to=2026-01-31T10:00:01Z`;
    const later = await call('GET', `/v1/customers/${s.customer}/usage?${window}`, caller(s.org));
    expect(later.body.meters[0]).toMatchObject({ meter: 'api_calls', quantity: 1000, events: 1 });
    expect((await call('GET', `/v1/customers/cus_nobody/usage`, caller(s.org))).status).toBe(404);
  });

  it('come 1,000 to a report, whose body may pass the 100kb of other requests; 1,001 are refused', async () => {
    const s = await subscribedOnClock({});
    await meter(s.org, { key: 'api_calls', aggregation: 'sum' });
    const events = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ id: `${'x'.repeat(200)}-${i}`, meter: 'api_calls', quantity: 2 }));
    const full = await s.report(events(1000));
    expect(full.status).toBe(202);
    expect(full.body).toMatchObject({ received: 1000, stored: 1000, duplicates: 0 });
    const tooMany = await s.report(events(1001));
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error.details[0]).toMatchObject({ path: 'events', code: 'too_big' });
    const summary = await call('GET', `/v1/customers/${s.customer}/usage`, caller(s.org));
    expect(summary.body.meters[0]).toMatchObject({ quantity: 2000, events: 1000 });
  });

  it('are billed on the renewal invoice by the meters of the plan, late ones on the next', async () => {
    const s = await subscribedOnClock({
      price: 299,
      metered_prices: [
        { meter: 'api_calls', unit_amount: 1, package_size: 100 },
        { meter: 'seats', unit_amount: 120, package_size: 1 },
      ],
    });
    await meter(s.org, { key: 'api_calls', aggregation: 'sum' });
    await meter(s.org, { key: 'seats', aggregation: 'max' });
    await meter(s.org, { key: 'unpriced', aggregation: 'sum' });
    await s.advanceTo('2026-02-20T10:00:00Z');
    expect(
      (
        await s.report([
          { id: 'a-1', meter: 'api_calls', quantity: 1000 },
          { id: 'a-2', meter: 'api_calls', quantity: 234, timestamp: '2026-02-01T00:00:00Z' },
          { id: 's-1', meter: 'seats', quantity: 3 },
          { id: 's-2', meter: 'seats', quantity: 5, timestamp: '2026-02-10T00:00:00Z' },
          { id: 'u-1', meter: 'unpriced', quantity: 50 },
        ])
      ).body.stored,
    ).toBe(5);

    await s.advanceTo('2026-02-28T10:00:01Z');
    const renewal = (await s.invoices()).find((i) => i.period_start === '2026-02-28T10:00:00.000Z')!;
    expect(renewal.lines).toEqual([
      expect.objectContaining({ kind: 'subscription', amount: 299 }),
      expect.objectContaining({
        kind: 'usage',
        meter: 'api_calls',
        quantity: 1234,
        amount: 13,
        period: { start: '2026-01-31T10:00:00.000Z', end: '2026-02-28T10:00:00.000Z' },
      }),
      expect.objectContaining({ kind: 'usage', meter: 'seats', quantity: 5, amount: 600 }),
    ]);

    // Reported after its period was billed, and a repeat of an event billed already: the late one
    // waits, unbilled, for the next renewal (the platform test pays that one).
    const late = await s.report([
      { id: 'a-3', meter: 'api_calls', quantity: 100, timestamp: '2026-02-27T00:00:00Z' },
      { id: 'a-1', meter: 'api_calls', quantity: 1000 },
    ]);
    expect(late.body).toMatchObject({ stored: 1, duplicates: 1 });
    const { rows } = await running.infrastructure.database.query<{ id: string; billed: boolean }>(
      `SELECT id, invoice_id IS NOT NULL AS billed FROM ${usageEventsTable(running.service.context.store.tables.schema)}
       WHERE organization = $1 ORDER BY id`,
      [s.org],
    );
    expect(rows).toEqual([
      { id: 'a-1', billed: true },
      { id: 'a-2', billed: true },
      { id: 'a-3', billed: false },
      { id: 's-1', billed: true },
      { id: 's-2', billed: true },
      { id: 'u-1', billed: false },
    ]);
  });
});

describe('usage of the last period', () => {
  it('is billed on a final invoice when the subscription ends at its period end, tried on the dunning schedule', async () => {
    const s = await subscribedOnClock({ price: 299, metered_prices: [{ meter: 'calls', unit_amount: 2 }] });
    await meter(s.org, { key: 'calls', aggregation: 'sum' });
    await s.advanceTo('2026-02-10T10:00:00Z');
    const reported = await s.report([
      { id: 'c-1', meter: 'calls', quantity: 40 },
      { id: 'c-2', meter: 'calls', quantity: 2 },
    ]);
    expect(reported.body.stored).toBe(2);
    const cancel = await call('POST', `/v1/subscriptions/${s.subscription.id}/cancel`, caller(s.org), {});
    expect(cancel.body.cancel_at_period_end).toBe(true);

    await s.advanceTo('2026-02-28T10:00:01Z');
    const subscription = (await call('GET', `/v1/subscriptions/${s.subscription.id}`, caller(s.org))).body;
    expect(subscription.status).toBe('CANCELED');
    const final = () => s.invoices().then((all) => all.filter((i) => i.lines.some((line) => line.kind === 'usage')));
    // This customer has no saved card: the first attempt, right at the period's end, is declined.
    expect(await final()).toEqual([
      expect.objectContaining({
        status: 'open',
        subscription_id: s.subscription.id,
        period_start: '2026-01-31T10:00:00.000Z',
        period_end: '2026-02-28T10:00:00.000Z',
        lines: [
          expect.objectContaining({
            kind: 'usage',
            meter: 'calls',
            quantity: 42,
            amount: 84,
            period: { start: '2026-01-31T10:00:00.000Z', end: '2026-02-28T10:00:00.000Z' },
          }),
        ],
        amount_due: 84,
        attempt_count: 1,
        next_payment_attempt: '2026-03-03T10:00:00.000Z',
      }),
    ]);
    expect((await s.invoices()).filter((i) => i.period_start === '2026-02-28T10:00:00.000Z')).toEqual([]);

    // Run again (a second engine, or one after a crash): nothing more is opened or ended.
    const item = { id: s.subscription.id, organization: s.org, environment: 'SANDBOX' as const, due_at: new Date() };
    expect(await endCanceledPeriod(running.service.context, item, new Date('2026-02-28T10:00:00Z'))).toBe(false);

    await s.advanceTo('2026-03-03T10:00:01Z');
    expect(await final()).toEqual([
      expect.objectContaining({ attempt_count: 2, next_payment_attempt: '2026-03-05T10:00:00.000Z' }),
    ]);
    await s.advanceTo('2026-03-08T00:00:00Z');
    expect(await final()).toEqual([
      expect.objectContaining({ status: 'uncollectible', attempt_count: 4, next_payment_attempt: null }),
    ]);
    expect((await call('GET', `/v1/subscriptions/${s.subscription.id}`, caller(s.org))).body.status).toBe('CANCELED');
  });

  it('is billed on a final invoice at once when the subscription is canceled now with invoice_now; both or neither', async () => {
    const s = await subscribedOnClock({ price: 299, metered_prices: [{ meter: 'calls', unit_amount: 2 }] });
    await meter(s.org, { key: 'calls', aggregation: 'sum' });
    await s.advanceTo('2026-02-10T10:00:00Z');
    expect((await s.report([{ id: 'n-1', meter: 'calls', quantity: 15 }])).body.stored).toBe(1);
    const cancel = (body: Record<string, unknown>) =>
      call('POST', `/v1/subscriptions/${s.subscription.id}/cancel`, caller(s.org), body);

    // invoice_now belongs to a cancellation now: with one at the period's end it is refused, nothing changed.
    const refused = await cancel({ invoice_now: true });
    expect([refused.status, refused.body.error.details]).toEqual([
      422,
      [expect.objectContaining({ path: 'invoice_now' })],
    ]);
    expect((await call('GET', `/v1/subscriptions/${s.subscription.id}`, caller(s.org))).body.status).toBe('ACTIVE');

    const canceled = await cancel({ at_period_end: false, invoice_now: true });
    expect([canceled.status, canceled.body.status]).toEqual([200, 'CANCELED']);
    const final = (await s.invoices()).filter((i) => i.lines.some((line) => line.kind === 'usage'));
    expect(final).toEqual([
      expect.objectContaining({
        status: 'open',
        period_start: '2026-01-31T10:00:00.000Z',
        period_end: '2026-02-10T10:00:00.000Z',
        lines: [expect.objectContaining({ kind: 'usage', meter: 'calls', quantity: 15, amount: 30 })],
        amount_due: 30,
      }),
    ]);
    // Canceled already: refused (409) and nothing more is opened.
    expect((await cancel({ at_period_end: false, invoice_now: true })).status).toBe(409);
    expect((await s.invoices()).filter((i) => i.lines.some((line) => line.kind === 'usage'))).toHaveLength(1);
    // The final invoice is charged as one at a period's end (no saved card here: declined, retried).
    await s.advanceTo('2026-02-10T10:00:30Z');
    await eventually(async () => {
      const [invoice] = (await s.invoices()).filter((i) => i.lines.some((line) => line.kind === 'usage'));
      expect(invoice).toMatchObject({ attempt_count: 1 });
    });
  });

  it('opens no final invoice when the last period has no usage to bill', async () => {
    const s = await subscribedOnClock({ price: 299, metered_prices: [{ meter: 'calls', unit_amount: 2 }] });
    await meter(s.org, { key: 'calls', aggregation: 'sum' });
    await call('POST', `/v1/subscriptions/${s.subscription.id}/cancel`, caller(s.org), {});
    await s.advanceTo('2026-03-10T00:00:00Z');
    expect((await call('GET', `/v1/subscriptions/${s.subscription.id}`, caller(s.org))).body.status).toBe('CANCELED');
    expect((await s.invoices()).map((i) => i.period_start)).toEqual(['2026-01-31T10:00:00.000Z']);
  });
});

describe('usage that spends credits', () => {
  it("spends the customer's credits as it arrives, once per event, and bills what the balance could not pay", async () => {
    const s = await subscribedOnClock({ metered_prices: [{ meter: 'tokens', unit_amount: 5, package_size: 1 }] });
    await meter(s.org, { key: 'tokens', aggregation: 'sum', credits_per_unit: 2 });
    const grant = { amount: 100, reason: 'prepaid' };
    expect((await call('POST', `/v1/customers/${s.customer}/credits/grants`, caller(s.org), grant)).status).toBe(201);

    await s.report([
      { id: 't-1', meter: 'tokens', quantity: 30 },
      { id: 't-2', meter: 'tokens', quantity: 30 },
      { id: 't-3', meter: 'tokens', quantity: 10 },
    ]);
    const balance = async () =>
      (await call('GET', `/v1/customers/${s.customer}/credits`, caller(s.org))).body.balance as number;
    // 140 credits in all is more than 100: each alone, in order: 60 spent, 60 refused (40 left), 20 spent.
    await eventually(async () => expect(await balance()).toBe(20));
    const states = async () =>
      (
        await running.infrastructure.database.query<{ id: string; credits_state: string }>(
          `SELECT id, credits_state FROM ${usageEventsTable(running.service.context.store.tables.schema)}
           WHERE organization = $1 ORDER BY id`,
          [s.org],
        )
      ).rows;
    await eventually(async () =>
      expect(await states()).toEqual([
        { id: 't-1', credits_state: 'spent' },
        { id: 't-2', credits_state: 'unpaid' },
        { id: 't-3', credits_state: 'spent' },
      ]),
    );
    const ledger = (await call('GET', `/v1/customers/${s.customer}/credits/ledger`, caller(s.org))).body.data;
    expect(ledger.filter((e: { type: string }) => e.type === 'spend').map((e: { amount: number }) => e.amount)).toEqual(
      [-20, -60],
    );

    // A repeat stores and spends nothing; a small report is spent as one.
    await s.report([
      { id: 't-1', meter: 'tokens', quantity: 30 },
      { id: 't-4', meter: 'tokens', quantity: 2 },
      { id: 't-5', meter: 'tokens', quantity: 3 },
    ]);
    await eventually(async () => expect(await balance()).toBe(10));
    const reserved = await call('POST', `/v1/customers/${s.customer}/credits/spend`, caller(s.org), {
      amount: 1,
      idempotency_key: 'usage_event:t-5',
    });
    expect(reserved.status).toBe(422);
    expect(reserved.body.error.details[0].path).toBe('idempotency_key');

    await s.advanceTo('2026-02-28T10:00:01Z');
    const renewal = (await s.invoices()).find((i) => i.period_start === '2026-02-28T10:00:00.000Z')!;
    expect(renewal.lines.filter((line) => line.kind === 'usage')).toEqual([
      expect.objectContaining({ meter: 'tokens', quantity: 30, amount: 150 }),
    ]);
  });
});

describe('the usage topic', () => {
  it('stores the events of its messages as the API does, and parks a message it cannot take', async () => {
    const s = await subscribedOnClock({});
    await meter(s.org, { key: 'api_calls', aggregation: 'sum' });
    const { bus } = running.infrastructure;
    const message = (events: unknown[]) =>
      JSON.stringify({
        organization: s.org,
        livemode: false,
        events: events.map((e) => ({ customer_id: s.customer, ...(e as object) })),
      });
    await bus.publishRaw('usage.events', s.customer, 'not json');
    await bus.publishRaw('usage.events', s.customer, message([{ id: 'k-1', meter: 'nope' }]));
    await bus.publishRaw('usage.events', s.customer, message([{ id: 'k-2', meter: 'api_calls', quantity: 40 }]));
    await bus.publishRaw('usage.events', s.customer, message([{ id: 'k-2', meter: 'api_calls', quantity: 40 }]));
    await eventually(async () => {
      const summary = await call('GET', `/v1/customers/${s.customer}/usage`, caller(s.org));
      expect(summary.body.meters).toEqual([{ meter: 'api_calls', aggregation: 'sum', quantity: 40, events: 1 }]);
    });
  });
});
