import { type RunningService, foldAllMetricsChanges, migrateDailyMetrics } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingMetricsHistory } from '../../../services/billing/dist/metrics/history';
import { checkoutMetricsHistory } from '../../../services/checkout/dist/metrics/history';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(120000);

/** 2026-03-01 10:00 in Taipei: the platform's clock and the test clock's start. */
const START = new Date('2026-03-01T02:00:00Z');

/**
 * The dashboard's metrics (docs/dashboard-api.md): subscriptions and payments bought, renewed,
 * switched and canceled on a test clock, counted by Taipei day in billing's and checkout's daily
 * projections.
 */
describe('dashboard metrics', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let other: CreatedOrganization;
  /** The platform's clock (the test clock's subscriptions live on the clock's time). */
  let now = START;
  const send = jsonApi(
    () => platform.gatewayUrl,
    () => org.api_keys.sandbox.secret_key,
  );
  const metrics = (organization: string, query: string) =>
    client.admin('GET', `/organizations/${organization}/metrics?${query}`);

  const buy = async (slug: string, card: string, testClock?: string, email = `${slug}@example.com`) => {
    const created = await send('POST', '/checkout/sessions', {
      product_slug: slug,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      ...(testClock ? { test_clock: testClock } : {}),
    });
    expect(created.status).toBe(201);
    const pay = (number: string) =>
      fetch(`${platform.gatewayUrl}/checkout/${created.body.id}`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({ email, card_number: number, exp: '12/34', cvc: '123' }),
      });
    expect((await pay(card)).status).toBe(303);
    return created.body.id as string;
  };
  const subscriptionOf = (sessionId: string) =>
    eventually(async () => {
      const session = await send('GET', `/checkout/sessions/${sessionId}`);
      const subscription = await send('GET', `/subscriptions/${session.body.subscription_id}`);
      expect(subscription.status).toBe(200);
      return subscription.body;
    });
  const advance = async (clock: string, to: string) => {
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
    await eventually(async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'));
  };

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      now: () => now,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Acme');
    other = await client.createOrganization('Other');
    await client.createProduct(org.id, plan({ slug: 'monthly', price: 300 }));
    await client.createProduct(org.id, plan({ slug: 'yearly', price: 2400, interval: 'year' }));
    await client.createProduct(org.id, {
      environment: 'SANDBOX',
      name: 'Ebook',
      slug: 'ebook',
      type: 'ONE_TIME',
      price: 500,
      currency: 'TWD',
    });
  });
  afterAll(() => platform.stop());

  it('counts each Taipei day exactly, zeros included', async () => {
    const clock = (await send('POST', '/test_clocks', { frozen_time: START.toISOString() })).body.id as string;
    const monthly = await subscriptionOf(await buy('monthly', '4242424242424242', clock));
    const yearly = await subscriptionOf(await buy('yearly', '4242424242424242', clock));
    // Pays now; its renewal is declined.
    await subscriptionOf(await buy('monthly', '4000000000000341', clock, 'declines-later@example.com'));
    await buy('ebook', '4242424242424242');
    // Declined on the page, then paid: one failed payment, one payment.
    const declinedFirst = await send('POST', '/checkout/sessions', {
      product_slug: 'ebook',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    const page = (card: string) =>
      fetch(`${platform.gatewayUrl}/checkout/${declinedFirst.body.id}`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({ email: 'late@example.com', card_number: card, exp: '12/34', cvc: '123' }),
      });
    await page('4000000000000002');
    expect((await page('4242424242424242')).status).toBe(303);

    await advance(clock, '2026-03-10T04:00:00Z');
    const canceled = await send('POST', `/subscriptions/${yearly.id}/cancel`, { at_period_end: false });
    expect(canceled.body.status).toBe('CANCELED');
    // The monthly renewals fall due on 2026-04-01 10:00 Taipei.
    await advance(clock, '2026-04-01T03:00:00Z');
    await eventually(async () => {
      const invoices = await send('GET', `/invoices?subscription_id=${monthly.id}`);
      expect(invoices.body.data).toHaveLength(2);
    });

    const answer = await metrics(org.id, 'environment=SANDBOX&from=2026-02-28&to=2026-04-02');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      object: 'metrics',
      environment: 'SANDBOX',
      currency: 'TWD',
      from: '2026-02-28',
      to: '2026-04-02',
    });
    const series = answer.body.series as Array<Record<string, number | string>>;
    expect(series).toHaveLength(34);
    const day = (date: string) => series.find((entry) => entry.date === date);
    const quiet = { new_subscriptions: 0, churned_subscriptions: 0, payments_count: 0, payments_amount: 0 };
    expect(day('2026-02-28')).toEqual({
      date: '2026-02-28',
      mrr: 0,
      active_subscriptions: 0,
      ...quiet,
      failed_payments_count: 0,
    });
    expect(day('2026-03-01')).toEqual({
      date: '2026-03-01',
      mrr: 300 + 200 + 300,
      active_subscriptions: 3,
      new_subscriptions: 3,
      churned_subscriptions: 0,
      payments_count: 5,
      payments_amount: 300 + 2400 + 300 + 500 + 500,
      failed_payments_count: 1,
    });
    expect(day('2026-03-09')).toEqual({
      date: '2026-03-09',
      mrr: 800,
      active_subscriptions: 3,
      ...quiet,
      failed_payments_count: 0,
    });
    expect(day('2026-03-10')).toEqual({
      date: '2026-03-10',
      mrr: 600,
      active_subscriptions: 2,
      ...quiet,
      churned_subscriptions: 1,
      failed_payments_count: 0,
    });
    expect(day('2026-03-31')).toEqual({
      date: '2026-03-31',
      mrr: 600,
      active_subscriptions: 2,
      ...quiet,
      failed_payments_count: 0,
    });
    expect(day('2026-04-01')).toEqual({
      date: '2026-04-01',
      mrr: 600,
      active_subscriptions: 2,
      ...quiet,
      payments_count: 1,
      payments_amount: 300,
      failed_payments_count: 1,
    });
    const totals = (field: string) => series.reduce((sum, entry) => sum + Number(entry[field]), 0);
    expect([totals('new_subscriptions'), totals('churned_subscriptions'), totals('payments_count')]).toEqual([3, 1, 6]);
    expect(totals('failed_payments_count')).toBe(2);

    // Another organization sees none of it; Production is another book.
    const theirs = await metrics(other.id, 'environment=SANDBOX&from=2026-02-28&to=2026-04-02');
    expect(
      theirs.body.series.every((entry: Record<string, unknown>) => entry.payments_count === 0 && entry.mrr === 0),
    ).toBe(true);
    const production = await metrics(org.id, 'environment=PRODUCTION&from=2026-03-01&to=2026-03-01');
    expect(production.body.series).toEqual([expect.objectContaining({ active_subscriptions: 0, payments_count: 0 })]);
  });

  it('keeps each day at the price it had through a plan switch, the same once folded; a first start fills it from the read models', async () => {
    const shop = await client.createOrganization('Switcher');
    await client.createProduct(shop.id, plan({ slug: 'basic', price: 300 }));
    const pro = await client.createProduct(shop.id, plan({ slug: 'pro', price: 500 }));
    const sendAs = jsonApi(
      () => platform.gatewayUrl,
      () => shop.api_keys.sandbox.secret_key,
    );
    const clock = (await sendAs('POST', '/test_clocks', { frozen_time: START.toISOString() })).body.id as string;
    const created = await sendAs('POST', '/checkout/sessions', {
      product_slug: 'basic',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      test_clock: clock,
    });
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${created.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({
        email: 'grows@example.com',
        card_number: '4242424242424242',
        exp: '12/34',
        cvc: '123',
      }),
    });
    expect(paid.status).toBe(303);
    const subscriptionId = await eventually(async () => {
      const session = await sendAs('GET', `/checkout/sessions/${created.body.id}`);
      // Provisioned by billing before the clock moves on.
      expect((await sendAs('GET', `/subscriptions/${session.body.subscription_id}`)).status).toBe(200);
      return session.body.subscription_id as string;
    });
    expect(
      (await sendAs('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-03-15T04:00:00Z' })).status,
    ).toBe(200);
    await eventually(async () => expect((await sendAs('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'));
    // Billing hears of the new plan from the catalog's events.
    await eventually(async () => {
      const preview = await sendAs(
        'GET',
        `/subscriptions/${subscriptionId}/switch-preview?target_product_id=${pro.body.id}`,
      );
      expect(preview.status).toBe(200);
    });
    const switched = await sendAs('POST', `/subscriptions/${subscriptionId}/switch`, {
      target_product_id: pro.body.id,
    });
    expect(switched.status).toBe(200);

    const range = 'environment=SANDBOX&from=2026-03-14&to=2026-03-16';
    const recorded = await eventually(async () => {
      const answer = await metrics(shop.id, range);
      expect(answer.body.series[1].payments_count).toBe(1);
      return answer.body;
    });
    const [before, on] = recorded.series as Array<Record<string, number>>;
    expect(before).toMatchObject({ mrr: 300, active_subscriptions: 1, payments_count: 0 });
    expect(on).toMatchObject({ mrr: 500, active_subscriptions: 1, new_subscriptions: 0 });
    expect(on!.payments_amount).toBeGreaterThan(0);
    expect(on!.payments_amount).toBeLessThan(500);

    const services = [
      [platform.billing!.service, billingMetricsHistory],
      [platform.checkout!.service, checkoutMetricsHistory],
    ] as const;
    const { database } = platform.infrastructure;
    const schemaOf = (service: RunningService) => service.context.store.tables.schema;
    for (const [service] of services) await foldAllMetricsChanges(database, schemaOf(service));
    expect((await metrics(shop.id, range)).body).toEqual(recorded);
    const whole = 'environment=SANDBOX&from=2026-02-28&to=2026-04-02';
    const firstOrganization = (await metrics(org.id, whole)).body;

    // A platform that had history before the projection: its first start records it, once.
    for (const [service, history] of services) {
      const schema = schemaOf(service);
      await database.exec(`TRUNCATE ${schema}.metrics_changes, ${schema}.metrics_days, ${schema}.metrics_projection`);
      await migrateDailyMetrics(service.context.store, database, (tx) => history(tx, schema));
      await migrateDailyMetrics(service.context.store, database, (tx) => history(tx, schema));
    }
    expect((await metrics(org.id, whole)).body).toEqual(firstOrganization);
    // Before the projection, history had the subscriptions' prices of today.
    const filled = (await metrics(shop.id, range)).body.series as Array<Record<string, number>>;
    expect(filled.map((day) => [day.mrr, day.payments_count])).toEqual([
      [500, 0],
      [500, 1],
      [500, 0],
    ]);
  });

  it("answers the same series to a merchant's tools: GET /v1/analytics/metrics by day and by month", async () => {
    const admin = (await metrics(org.id, 'environment=SANDBOX&from=2026-02-28&to=2026-04-02')).body;
    const byDay = await send('GET', '/analytics/metrics?from=2026-02-28&to=2026-04-02');
    expect(byDay.status).toBe(200);
    expect(byDay.body).toMatchObject({
      object: 'analytics.metrics',
      interval: 'day',
      time_zone: 'Asia/Taipei',
      currency: 'TWD',
      from: '2026-02-28',
      to: '2026-04-02',
      livemode: false,
    });
    expect(byDay.body.data).toEqual(
      admin.series.map(({ date, payments_amount, ...day }: Record<string, number | string>) => ({
        period_start: date,
        period_end: date,
        ...day,
        revenue: payments_amount,
      })),
    );
    const byMonth = await send('GET', '/analytics/metrics?from=2026-02-28&to=2026-04-02&interval=month');
    const sum = (month: string, field: string) =>
      admin.series
        .filter((day: { date: string }) => day.date.startsWith(month))
        .reduce((total: number, day: Record<string, number>) => total + day[field]!, 0);
    const lastOf = (date: string) => admin.series.find((day: { date: string }) => day.date === date);
    expect(byMonth.body.data).toEqual(
      (
        [
          ['2026-02', '2026-02-28', '2026-02-28'],
          ['2026-03', '2026-03-01', '2026-03-31'],
          ['2026-04', '2026-04-01', '2026-04-02'],
        ] as const
      ).map(([month, start, end]) => ({
        period_start: start,
        period_end: end,
        mrr: lastOf(end).mrr,
        active_subscriptions: lastOf(end).active_subscriptions,
        new_subscriptions: sum(month, 'new_subscriptions'),
        churned_subscriptions: sum(month, 'churned_subscriptions'),
        revenue: sum(month, 'payments_amount'),
        payments_count: sum(month, 'payments_count'),
        failed_payments_count: sum(month, 'failed_payments_count'),
      })),
    );
    expect(byMonth.body.data[1].revenue).toBeGreaterThan(0);
    // Another organization's key reads its own book; a Publishable Key and bad ranges are refused.
    const theirs = await fetch(`${platform.gatewayUrl}/v1/analytics/metrics?from=2026-03-01&to=2026-03-31`, {
      headers: { authorization: `Bearer ${other.api_keys.sandbox.secret_key}` },
    }).then((r) => r.json() as Promise<{ data: Array<{ revenue: number }> }>);
    expect(theirs.data.every((day) => day.revenue === 0)).toBe(true);
    const publishable = await fetch(`${platform.gatewayUrl}/v1/analytics/metrics`, {
      headers: { authorization: `Bearer ${org.api_keys.sandbox.publishable_key}` },
    });
    expect(publishable.status).toBe(401);
    for (const query of [
      'from=2026-3-1',
      'interval=week',
      'from=2026-03-02&to=2026-03-01',
      'from=2024-01-01&to=2026-03-01',
    ]) {
      const bad = await send('GET', `/analytics/metrics?${query}`);
      expect([query, bad.status, bad.body.error.code]).toEqual([query, 400, 'bad_request']);
    }
  });

  it('defaults to the 30 days ending today in Taipei', async () => {
    now = new Date('2026-03-10T17:30:00Z');
    const answer = await metrics(org.id, 'environment=SANDBOX');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ from: '2026-02-10', to: '2026-03-11' });
    expect(answer.body.series).toHaveLength(30);
  });

  it('refuses bad ranges with 400 and unknown organizations with 404', async () => {
    for (const [query, parameter] of [
      ['from=2026-03-01&to=2026-03-02', 'environment'],
      ['environment=SANDBOX&from=2026-3-1', 'from'],
      ['environment=SANDBOX&to=2026-02-30', 'to'],
      ['environment=SANDBOX&from=2026-03-02&to=2026-03-01', 'from'],
      ['environment=SANDBOX&from=2025-01-01&to=2026-03-01', 'from'],
      ['environment=SANDBOX&from=2020-01-01', 'from'],
    ]) {
      const bad = await metrics(org.id, query!);
      expect({ query, status: bad.status, path: bad.body.error?.details?.[0]?.path }).toEqual({
        query,
        status: 400,
        path: parameter,
      });
    }
    expect((await metrics('org_missing', 'environment=SANDBOX')).status).toBe(404);
  });
});
