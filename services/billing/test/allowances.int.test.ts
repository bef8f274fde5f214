import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingService } from '../src';
import { renewDue } from '../src/engine/renewals/renew';
import { invoiceAggregate } from '../src/invoices/aggregate';
import { caller, client, eventsOf, feeds, newOrg } from './helpers';

/**
 * A plan's credit allowance is granted for every paid period, in the transaction that starts
 * the period, whichever path paid it, once per period (docs/credits.md, "Plan allowances").
 */
jest.setTimeout(120_000);

const DAY = 24 * 3600 * 1000;
let running: ServiceUnderTest;
beforeAll(async () => {
  running = await startServiceForTest(billingService, {
    now: () => new Date('2026-11-21T08:00:00.000Z'),
    config: { BILLING_TRIAL_SWEEP_INTERVAL_MS: '3600000' },
  });
});
afterAll(() => running.stop());

const { call } = client(() => running);
const { product, paid } = feeds(() => running);

/** A new organization's customer subscribed to a plan granting `credits`, on a test clock from 31 January. */
async function subscribedOnClock(plan: Record<string, unknown>, trialDays?: number) {
  const org = newOrg();
  const clock = (await call('POST', '/v1/test_clocks', caller(org), { frozen_time: '2026-01-31T10:00:00Z' })).body;
  const productId = await product(org, { price: 0, ...plan });
  await paid(org, {
    product_id: productId,
    customer_email: 'allowance@example.com',
    test_clock: clock.id,
    amount_subtotal: 0,
    amount_total: 0,
    ...(trialDays === undefined ? {} : { trial_days: trialDays }),
  });
  const subscription = await eventually(async () => {
    const list = await call('GET', '/v1/subscriptions', caller(org));
    expect(list.body.subscriptions).toHaveLength(1);
    return list.body.subscriptions[0];
  });
  const path = `/v1/customers/${subscription.customer_id}/credits`;
  return {
    org,
    subscription,
    credits: async () => (await call('GET', path, caller(org))).body,
    ledger: async () => (await call('GET', `${path}/ledger?limit=100`, caller(org))).body.data,
    advanceTo: async (at: string) => {
      await call('POST', `/v1/test_clocks/${clock.id}/advance`, caller(org), { frozen_time: at });
      await eventually(async () =>
        expect((await call('GET', `/v1/test_clocks/${clock.id}`, caller(org))).body.status).toBe('ready'),
      );
    },
  };
}

const entries = (ledger: Array<{ type: string; amount: number; created_at: string }>) =>
  ledger.map((e) => `${e.type}:${e.amount}@${e.created_at.slice(0, 10)}`).reverse();

describe("a plan's credit allowance", () => {
  it('is granted with the paid first period and each renewal, each expiring at its period end', async () => {
    const s = await subscribedOnClock({ credits: { amount: 100, expires_after_days: null } });
    expect(s.subscription.credit_allowance).toEqual({ amount: 100, expires_after_days: null, rollover: false });
    expect(await s.credits()).toMatchObject({
      balance: 100,
      grants: [
        {
          amount: 100,
          remaining: 100,
          source: 'allowance',
          source_id: s.subscription.id,
          expires_at: '2026-02-28T10:00:00.000Z',
        },
      ],
    });

    await s.advanceTo(new Date(Date.parse('2026-02-28T10:00:00Z') + 2 * DAY).toISOString());
    expect(await s.credits()).toMatchObject({
      balance: 100,
      grants: [{ amount: 100, expires_at: '2026-03-31T10:00:00.000Z' }],
    });
    expect(entries(await s.ledger())).toEqual([
      'grant:100@2026-01-31',
      'expiry:-100@2026-02-28',
      'grant:100@2026-02-28',
    ]);
    const granted = await eventsOf(running, 'CreditsGranted', s.org);
    expect(granted.map((e) => e.data.idempotency_key)).toEqual([
      `allowance:${s.subscription.id}:2026-01-31T10:00:00.000Z`,
      `allowance:${s.subscription.id}:2026-02-28T10:00:00.000Z`,
    ]);
  });

  it('rolled over adds up, and a free trial grants from the first paid period on', async () => {
    const s = await subscribedOnClock({ credits: { amount: 100, expires_after_days: null, rollover: true } }, 7);
    expect(s.subscription).toMatchObject({ status: 'TRIAL', current_period_end: '2026-02-07T10:00:00.000Z' });
    expect((await s.credits()).balance).toBe(0);

    await s.advanceTo('2026-03-08T10:00:00Z');
    expect(entries(await s.ledger())).toEqual(['grant:100@2026-02-07', 'grant:100@2026-03-07']);
    expect(await s.credits()).toMatchObject({ balance: 200, grants: [{ expires_at: null }, { expires_at: null }] });
  });

  it('is granted once when a late payment renews the period, however often the engine looks', async () => {
    const org = newOrg();
    await paid(org, {
      product_id: await product(org, { credits: { amount: 30, expires_after_days: 10 } }),
      customer_email: 'late@example.com',
    });
    const subscription = await eventually(async () => {
      const list = await call('GET', '/v1/subscriptions', caller(org));
      expect(list.body.subscriptions).toHaveLength(1);
      return list.body.subscriptions[0];
    });
    // No saved card: the renewal is declined and the subscription PAST_DUE.
    const at = new Date(subscription.current_period_end);
    const item = { id: subscription.id, organization: org, environment: 'SANDBOX' as const, due_at: at };
    await renewDue(running.service.context, item, at);
    const [open] = (await call('GET', `/v1/invoices?subscription_id=${subscription.id}&status=open`, caller(org))).body
      .data;
    expect(await eventsOf(running, 'CreditsGranted', org)).toHaveLength(1);

    // The retry's answer comes late; the engine follows it, then looks again.
    const paidAt = new Date(at.getTime() + 3 * DAY);
    await invoiceAggregate.handle(
      running.service.context.store,
      open.id,
      {
        type: 'RecordPaymentAttempt',
        data: { attempt: 2, outcome: { status: 'succeeded' }, nextAttemptAt: null, now: paidAt },
      },
      { organization: org, environment: 'SANDBOX', occurredAt: paidAt },
    );
    expect(await renewDue(running.service.context, item, paidAt)).toBe(true);
    await renewDue(running.service.context, item, paidAt);
    const granted = await eventsOf(running, 'CreditsGranted', org);
    expect(granted.map((e) => [e.data.amount, e.data.source, e.data.granted_at, e.data.expires_at])).toEqual([
      [
        30,
        'allowance',
        subscription.current_period_start,
        new Date(Date.parse(subscription.current_period_start) + 10 * DAY).toISOString(),
      ],
      [30, 'allowance', paidAt.toISOString(), new Date(paidAt.getTime() + 10 * DAY).toISOString()],
    ]);
    expect(granted[1]!.data.idempotency_key).toBe(`allowance:${subscription.id}:${open.period_start}`);
  });
});
