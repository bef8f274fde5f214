import { eventually } from '@billing/testing';
import { chargeSavedCard, savedCardOf } from '@billing/billing/dist/charges/charge';
import { onSubscription } from '@billing/billing/dist/engine/switching/commands';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

/**
 * A switch whose process crashed after holding the subscription (docs/plan-switching.md,
 * "Concurrency and crashes"): until the hold outlasts BILLING_SWITCH_HOLD_MS (8 s here) a preview
 * says the switch is in progress and charges nothing; then billing's sweep settles it, asking the
 * charge again with the same key: a charge made before the crash is recorded, never made twice;
 * a card that declines releases the hold unchanged.
 */
describe('a plan switch interrupted between its hold and its recording', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;
  const products: Record<string, string> = {};
  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );

  async function subscribeOnDay10(email: string, card: string) {
    const clock = (await send('POST', '/test_clocks', { frozen_time: '2026-04-01T00:00:00Z' })).body.id;
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: email,
      test_clock: clock,
    });
    await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: card, exp: '12/34', cvc: '123' }),
    });
    const subscription = await eventually(async () => {
      const read = await send('GET', `/checkout/sessions/${session.body.id}`);
      const found = await send('GET', `/subscriptions/${read.body.subscription_id}`);
      expect(found.status).toBe(200);
      return found.body;
    });
    await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-04-10T12:00:00Z' });
    await eventually(async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'));
    return subscription;
  }

  /** What a crashed switch left: the hold (as performSwitch records it) and, if `charged`, the charge. */
  async function crashAfterHold(subscription: any, charged: boolean) {
    const context = platform.billing!.service.context;
    const tenant = { organization: org.id, environment: 'SANDBOX' as const };
    const invoiceId = `in_crash${Math.random().toString(36).slice(2, 12)}`;
    const now = new Date('2026-04-10T12:00:00.000Z');
    const period = { start: now.toISOString(), end: '2026-05-10T12:00:00.000Z' };
    await onSubscription(context, tenant, {
      type: 'StartSwitch',
      data: {
        subscriptionId: subscription.id,
        ...tenant,
        now,
        switchId: `sw_${invoiceId.slice(3)}`,
        invoiceId,
        target: {
          id: products.business!,
          name: 'business',
          slug: 'business',
          price: 599,
          interval: 'month',
          interval_count: 1,
        },
        amount: 400,
        periodStart: subscription.current_period_start,
        recording: {
          lines: [
            {
              description: 'Unused time',
              amount: -199,
              period: { start: subscription.current_period_start, end: subscription.current_period_end },
              kind: 'proration',
            },
            { description: 'business (every month)', amount: 599, period, kind: 'subscription' },
          ],
          amount_discount: 0,
          balance_change: 0,
        },
        heldAt: new Date(),
      },
    });
    if (charged) {
      const card = await savedCardOf(context, subscription.customer_id);
      const charge = { card: card!, amount: 400, key: `${invoiceId}:1`, pending: null };
      // The simulator's answer names its trade: the charge key.
      expect(await chargeSavedCard(context, tenant, charge)).toEqual({
        status: 'succeeded',
        processor: 'sandbox',
        processor_reference: charge.key,
      });
    }
    return invoiceId;
  }
  async function chargeKeysOf(invoiceId: string) {
    const store = platform.checkout!.service.context.store;
    const { rows } = await store.database.query<{ idempotency_key: string; status: string }>(
      `SELECT idempotency_key, result->>'status' AS status FROM ${store.tables.schema}.sandbox_charges
       WHERE split_part(idempotency_key, ':', 1) = $1`,
      [invoiceId],
    );
    return rows;
  }

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: {
        RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000',
        BILLING_SWITCH_HOLD_MS: '8000',
        BILLING_TRIAL_SWEEP_INTERVAL_MS: '200',
      },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    products.pro = (await client.createProduct(org.id, plan({ slug: 'pro', name: 'pro', price: 299 }))).body.id;
    products.business = (
      await client.createProduct(org.id, plan({ slug: 'business', name: 'business', price: 599 }))
    ).body.id;
    products.basic = (await client.createProduct(org.id, plan({ slug: 'basic', name: 'basic', price: 199 }))).body.id;
  });
  afterAll(() => platform.stop());

  it('records a switch charged before the crash, charging nothing more', async () => {
    const subscription = await subscribeOnDay10('crash-charged@example.com', '4242424242424242');
    const invoiceId = await crashAfterHold(subscription, true);
    const preview = `/subscriptions/${subscription.id}/switch-preview?target_product_id=${products.basic}`;
    const held = await send('GET', preview);
    expect(held.body).toMatchObject({ can_proceed: false, blocking_reason: 'switch_in_progress' });
    const seen = await eventually(async () => {
      const again = await send('GET', preview);
      expect(again.body.can_proceed).toBe(true);
      return again;
    }, 30_000);
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toMatchObject({
      price: 599,
      current_period_start: '2026-04-10T12:00:00.000Z',
      current_period_end: '2026-05-10T12:00:00.000Z',
    });
    expect((await send('GET', `/invoices/${invoiceId}`)).body).toMatchObject({ status: 'paid', total: 400 });
    expect(await chargeKeysOf(invoiceId)).toEqual([{ idempotency_key: `${invoiceId}:1`, status: 'succeeded' }]);
    expect(seen.body).toMatchObject({ can_proceed: true, current_plan: { product_id: products.business } });
  });

  it('releases the hold of a switch whose card declines, the subscription unchanged', async () => {
    const subscription = await subscribeOnDay10('crash-declined@example.com', '4000000000000341');
    const invoiceId = await crashAfterHold(subscription, false);
    const preview = `/subscriptions/${subscription.id}/switch-preview?target_product_id=${products.business}`;
    const held = await send('GET', preview);
    expect(held.body).toMatchObject({ can_proceed: false, blocking_reason: 'switch_in_progress' });
    expect(await chargeKeysOf(invoiceId)).toEqual([]);
    const seen = await eventually(async () => {
      const again = await send('GET', preview);
      expect(again.body.can_proceed).toBe(true);
      return again;
    }, 30_000);
    expect(seen.body).toMatchObject({ can_proceed: true, current_plan: { product_id: products.pro } });
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toEqual(subscription);
    expect((await send('GET', `/invoices/${invoiceId}`)).status).toBe(404);
  });
});
