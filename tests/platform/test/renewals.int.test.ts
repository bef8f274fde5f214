import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

/**
 * Renewals and dunning through the gateway, on Sandbox test clocks (issue 13): the saved card
 * is charged at each period end; a card that declines later leaves the subscription PAST_DUE,
 * is retried 3, 5 and 7 days after the first failure, and then the subscription is CANCELED.
 */
describe('renewals and dunning through the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;

  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );

  /** A test clock at 31 January, and a plan (monthly `pro` by default) bought on it with `card`. */
  async function subscribeOnClock(email: string, card: string, fields: Record<string, unknown> = {}) {
    const clock = (await send('POST', '/test_clocks', { frozen_time: '2026-01-31T10:00:00Z' })).body;
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: email,
      test_clock: clock.id,
      ...fields,
    });
    expect(session.status).toBe(201);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: card, exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    const subscription = await eventually(async () => {
      const read = await send('GET', `/checkout/sessions/${session.body.id}`);
      const found = await send('GET', `/subscriptions/${read.body.subscription_id}`);
      expect(found.status).toBe(200);
      return found.body;
    });
    return { clock: clock.id as string, subscription, session: session.body };
  }
  const invoicesOf = async (subscriptionId: string) =>
    (await send('GET', `/invoices?subscription_id=${subscriptionId}`)).body.data.reverse();
  const couponCode = async (code: string, coupon: Record<string, unknown>) => {
    const created = await send('POST', '/coupons', {
      name: code,
      discount_type: 'PERCENTAGE',
      discount_amount: 20,
      ...coupon,
    });
    expect(created.status).toBe(201);
    expect(
      (await send('POST', '/promotion-codes', { coupon_id: created.body.id, code, max_redemptions_per_customer: 5 }))
        .status,
    ).toBe(201);
  };

  async function advance(clock: string, to: string) {
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
    await eventually(async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'));
  }

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    await client.createProduct(org.id, plan({ slug: 'pro', price: 299 }));
    await client.createProduct(org.id, plan({ slug: 'trial', price: 500, trial_days: 14 }));
  });
  afterAll(() => platform.stop());

  it('renews a plan bought on 31 January on 28 February and 31 March, charging the saved card each time', async () => {
    const { clock, subscription } = await subscribeOnClock('renews@example.com', '4242424242424242');
    expect(subscription.current_period_end).toBe('2026-02-28T10:00:00.000Z');

    await advance(clock, '2026-04-01T00:00:00Z');
    const renewed = (await send('GET', `/subscriptions/${subscription.id}`)).body;
    expect(renewed).toMatchObject({
      status: 'ACTIVE',
      current_period_start: '2026-03-31T10:00:00.000Z',
      current_period_end: '2026-04-30T10:00:00.000Z',
    });
    const invoices = (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data;
    expect(invoices.map((i: any) => [i.status, i.period_start, i.total, i.attempt_count])).toEqual([
      ['paid', '2026-03-31T10:00:00.000Z', 299, 1],
      ['paid', '2026-02-28T10:00:00.000Z', 299, 1],
      ['paid', '2026-01-31T10:00:00.000Z', 299, 1],
    ]);
    expect(invoices[1].paid_at).toBe('2026-02-28T10:00:00.000Z');
  });

  it('takes a ...0341 card PAST_DUE, retries it 3, 5 and 7 days after the first failure, then cancels', async () => {
    const { clock, subscription } = await subscribeOnClock('declines@example.com', '4000000000000341');
    await advance(clock, '2026-03-01T00:00:00Z');
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('PAST_DUE');
    const entitlements = await send('GET', '/customers/entitlements?email=declines@example.com');
    expect(entitlements.body.entitlements).toEqual([expect.objectContaining({ status: 'past_due' })]);
    const [open] = (await send('GET', `/invoices?subscription_id=${subscription.id}&status=open`)).body.data;
    expect(open).toMatchObject({ attempt_count: 1, amount_due: 299, next_payment_attempt: '2026-03-03T10:00:00.000Z' });

    await advance(clock, '2026-03-04T00:00:00Z');
    expect((await send('GET', `/invoices/${open.id}`)).body).toMatchObject({
      attempt_count: 2,
      next_payment_attempt: '2026-03-05T10:00:00.000Z',
    });
    await advance(clock, '2026-03-08T00:00:00Z');
    expect((await send('GET', `/invoices/${open.id}`)).body).toMatchObject({
      status: 'uncollectible',
      attempt_count: 4,
      next_payment_attempt: null,
    });
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toMatchObject({
      status: 'CANCELED',
      canceled_at: '2026-03-07T10:00:00.000Z',
    });
  });

  it('says plainly on the hosted page that a trial charges nothing today', async () => {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'trial',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    expect(session.body).toMatchObject({ amount: 0, requires_payment_method: true });
    const page = await (await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`)).text();
    for (const text of ['Free trial', '14 days', 'NT$500', 'Due today', 'NT$0', 'Start 14-day free trial']) {
      expect(page).toContain(text);
    }
  });

  it('charges a trial plan nothing at checkout and its price at trial_end', async () => {
    const { clock, subscription, session } = await subscribeOnClock('trial@example.com', '4242424242424242', {
      product_slug: 'trial',
    });
    expect(session.amount).toBe(0);
    expect(subscription).toMatchObject({
      status: 'TRIAL',
      trial_end: '2026-02-14T10:00:00.000Z',
      current_period_end: '2026-02-14T10:00:00.000Z',
    });
    await advance(clock, '2026-02-15T00:00:00Z');
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toMatchObject({
      status: 'ACTIVE',
      current_period_start: '2026-02-14T10:00:00.000Z',
      current_period_end: '2026-03-14T10:00:00.000Z',
    });
    const invoices = await invoicesOf(subscription.id);
    expect(invoices.map((i: any) => [i.total, i.amount_paid, i.period_start])).toEqual([
      [0, 0, '2026-01-31T10:00:00.000Z'],
      [500, 500, '2026-02-14T10:00:00.000Z'],
    ]);
  });

  it('applies a 20% once coupon to the first invoice only, and a repeating 3 to three', async () => {
    await couponCode('ONCE20', { duration: 'once' });
    await couponCode('REP20', { duration: 'repeating', duration_in_months: 3 });
    const once = await subscribeOnClock('once@example.com', '4242424242424242', { promotion_code: 'ONCE20' });
    const repeating = await subscribeOnClock('rep@example.com', '4242424242424242', { promotion_code: 'REP20' });
    for (const { clock } of [once, repeating]) await advance(clock, '2026-06-01T00:00:00Z');
    const totals = async (subscriptionId: string) => (await invoicesOf(subscriptionId)).map((i: any) => i.total);
    // 299 less 20% rounded down (59): 240; the checkout paid the first period.
    expect(await totals(once.subscription.id)).toEqual([240, 299, 299, 299, 299]);
    expect(await totals(repeating.subscription.id)).toEqual([240, 240, 240, 299, 299]);
  });
});
