import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

/**
 * Cancellation through the gateway (issue 13, part 5), on the injected clock: at period end
 * (access until `current_period_end`, then CANCELED), resume, and now.
 */
describe('canceling and resuming subscriptions through the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;
  let clock = Date.parse('2026-01-31T10:00:00.000Z');

  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );
  const slow = <T>(check: () => Promise<T>) => eventually(check, 30000, 100);

  /** A paid monthly plan for a new buyer; the subscription billing starts for it. */
  async function subscribe(email: string, fields: Record<string, unknown> = {}) {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cancel',
      customer_email: email,
      ...fields,
    });
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    return slow(async () => {
      const read = await send('GET', `/checkout/sessions/${session.body.id}`);
      const found = await send('GET', `/subscriptions/${read.body.subscription_id}`);
      expect(found.status).toBe(200);
      return found.body as { id: string; current_period_end: string };
    });
  }

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      now: () => new Date(clock),
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000', BILLING_TRIAL_SWEEP_INTERVAL_MS: '100' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    await client.createProduct(org.id, plan({ slug: 'pro', price: 299 }));
  });
  afterAll(() => platform.stop());

  it('cancels at period end: access until current_period_end, then CANCELED', async () => {
    const subscription = await subscribe('end@example.com');
    expect(subscription.current_period_end).toBe('2026-02-28T10:00:00.000Z');
    clock = Date.parse('2026-02-10T08:00:00.000Z');
    const canceling = await send('POST', `/subscriptions/${subscription.id}/cancel`, {});
    expect(canceling.body).toMatchObject({
      status: 'ACTIVE',
      cancel_at_period_end: true,
      canceled_at: '2026-02-10T08:00:00.000Z',
    });
    const entitled = await send('GET', '/customers/entitlements?email=end@example.com');
    expect(entitled.body.entitlements).toHaveLength(1);

    clock = Date.parse('2026-02-28T10:00:00.000Z');
    const ended = await slow(async () => {
      const read = await send('GET', `/subscriptions/${subscription.id}`);
      expect(read.body.status).toBe('CANCELED');
      return read.body;
    });
    expect(ended).toMatchObject({ cancel_at_period_end: false, canceled_at: '2026-02-10T08:00:00.000Z' });
    expect((await send('GET', '/customers/entitlements?email=end@example.com')).body).toMatchObject({
      entitlements: [],
      customer: { email: 'end@example.com' },
      subscription: null,
    });
    expect((await send('POST', `/subscriptions/${subscription.id}/resume`)).status).toBe(409);
    expect((await send('POST', `/subscriptions/${subscription.id}/cancel`, { at_period_end: false })).status).toBe(409);
  });

  it('resumes a pending cancellation, so the period end passes with the subscription ACTIVE', async () => {
    clock = Date.parse('2026-03-01T09:00:00.000Z');
    const resuming = await subscribe('resume@example.com');
    const witness = await subscribe('witness@example.com');
    expect((await send('POST', `/subscriptions/${resuming.id}/cancel`)).body.cancel_at_period_end).toBe(true);
    expect((await send('POST', `/subscriptions/${witness.id}/cancel`)).body.cancel_at_period_end).toBe(true);
    const resumed = await send('POST', `/subscriptions/${resuming.id}/resume`);
    expect(resumed.body).toMatchObject({ status: 'ACTIVE', cancel_at_period_end: false, canceled_at: null });
    clock = Date.parse(resuming.current_period_end) + 60_000;
    // The witness, due at the same instant, ends: a sweep has run past the period end.
    await slow(async () => expect((await send('GET', `/subscriptions/${witness.id}`)).body.status).toBe('CANCELED'));
    expect((await send('GET', `/subscriptions/${resuming.id}`)).body.status).toBe('ACTIVE');
  });

  it('cancels now on request, and refuses bad input, other tenants and the Publishable Key', async () => {
    const subscription = await subscribe('now@example.com');
    expect((await send('POST', `/subscriptions/${subscription.id}/cancel`, { at_period_end: 'no' })).status).toBe(422);
    expect((await send('POST', `/subscriptions/${subscription.id}/cancel`, { when: 'now' })).status).toBe(422);
    expect((await send('POST', '/subscriptions/sub_missing/cancel', {})).status).toBe(404);
    expect(
      (await send('POST', `/subscriptions/${subscription.id}/cancel`, {}, org.api_keys.production.secret_key)).status,
    ).toBe(404);
    expect(
      (await send('POST', `/subscriptions/${subscription.id}/cancel`, {}, org.api_keys.sandbox.publishable_key)).status,
    ).toBe(401);
    const canceled = await send('POST', `/subscriptions/${subscription.id}/cancel`, { at_period_end: false });
    expect(canceled.body).toMatchObject({ status: 'CANCELED', cancel_at_period_end: false });
  });

  it('cancels a subscription on a test clock at the clock’s time, not the service’s', async () => {
    const testClock = await send('POST', '/test_clocks', { frozen_time: '2026-03-10T08:00:00Z' });
    expect(testClock.status).toBe(201);
    const subscription = await subscribe('clock@example.com', { test_clock: testClock.body.id });
    expect(subscription.current_period_end).toBe('2026-04-10T08:00:00.000Z');
    const pending = await send('POST', `/subscriptions/${subscription.id}/cancel`, { at_period_end: true });
    expect(pending.body).toMatchObject({ cancel_at_period_end: true, updated_at: '2026-03-10T08:00:00.000Z' });
    const resumed = await send('POST', `/subscriptions/${subscription.id}/resume`, {});
    expect(resumed.body).toMatchObject({ cancel_at_period_end: false, updated_at: '2026-03-10T08:00:00.000Z' });
    const canceled = await send('POST', `/subscriptions/${subscription.id}/cancel`, { at_period_end: false });
    expect(canceled.body).toMatchObject({ status: 'CANCELED', canceled_at: '2026-03-10T08:00:00.000Z' });
  });
});
