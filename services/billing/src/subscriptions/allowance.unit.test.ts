import type { Subscription } from '@billing/contracts';
import type { SubscriptionEvent } from './subscription';
import { allowanceEndedBySwitch, allowanceField, allowanceGrant, paidPeriodStarted, planAllowance } from './allowance';

const subscription: Subscription = {
  object: 'subscription',
  id: 'sub_1',
  customer_id: 'cus_1',
  product: { id: 'prod_1', name: 'Pro', slug: 'pro' },
  status: 'ACTIVE',
  price: 299,
  currency: 'TWD',
  interval: 'month',
  interval_count: 1,
  current_period_start: '2026-01-31T10:00:00.000Z',
  current_period_end: '2026-02-28T10:00:00.000Z',
  trial_end: null,
  cancel_at_period_end: false,
  canceled_at: null,
  checkout_session_id: 'cs_1',
  test_clock: null,
  billing_cycle_anchor: '2026-01-31T10:00:00.000Z',
  discount: null,
  credit_allowance: { amount: 100, expires_after_days: null, rollover: false },
  created_at: '2026-01-31T10:00:00.000Z',
  updated_at: '2026-01-31T10:00:00.000Z',
  livemode: false,
};
const start = new Date(subscription.current_period_start);
const periodEnd = new Date(subscription.current_period_end);
const DAY_MS = 24 * 3600 * 1000;
const withAllowance = (allowance: Subscription['credit_allowance']) => ({
  ...subscription,
  credit_allowance: allowance,
});

describe("a plan's credit allowance", () => {
  it('is held with rollover said, false when the plan did not say', () => {
    expect(planAllowance({ amount: 100, expires_after_days: null })).toEqual({
      amount: 100,
      expires_after_days: null,
      rollover: false,
    });
    expect(planAllowance({ amount: 5, expires_after_days: 30, rollover: true })).toEqual({
      amount: 5,
      expires_after_days: 30,
      rollover: true,
    });
    expect(planAllowance(null)).toBeNull();
    expect(planAllowance(undefined)).toBeNull();
  });

  it('is left off a subscription that has none and whose plan has none, and cleared by a plan without one', () => {
    expect(allowanceField(null)).toEqual({});
    expect(allowanceField({ amount: 1, expires_after_days: null })).toEqual({
      credit_allowance: { amount: 1, expires_after_days: null, rollover: false },
    });
    expect(allowanceField(undefined, subscription.credit_allowance)).toEqual({ credit_allowance: null });
  });

  it("without rollover expires at the period's end, once per period start", () => {
    expect(allowanceGrant(subscription, start)).toEqual({
      amount: 100,
      expiresAt: periodEnd,
      idempotencyKey: 'allowance:sub_1:2026-01-31T10:00:00.000Z',
    });
  });

  it('without rollover expires after its days when that comes before the period ends', () => {
    const grant = allowanceGrant(withAllowance({ amount: 100, expires_after_days: 7, rollover: false }), start);
    expect(grant?.expiresAt).toEqual(new Date(start.getTime() + 7 * DAY_MS));
    const later = allowanceGrant(withAllowance({ amount: 100, expires_after_days: 90, rollover: false }), start);
    expect(later?.expiresAt).toEqual(periodEnd);
  });

  it('with rollover lasts past the period: never, or its days after the grant', () => {
    expect(
      allowanceGrant(withAllowance({ amount: 100, expires_after_days: null, rollover: true }), start)?.expiresAt,
    ).toBeNull();
    const dated = allowanceGrant(withAllowance({ amount: 100, expires_after_days: 90, rollover: true }), start);
    expect(dated?.expiresAt).toEqual(new Date(start.getTime() + 90 * DAY_MS));
  });

  it('grants nothing without an allowance, or for a period already over when it was paid', () => {
    expect(allowanceGrant(withAllowance(null), start)).toBeNull();
    expect(allowanceGrant(withAllowance(undefined), start)).toBeNull();
    expect(allowanceGrant(subscription, periodEnd)).toBeNull();
    // Rolled over, it is still worth granting late.
    expect(
      allowanceGrant(withAllowance({ amount: 1, expires_after_days: null, rollover: true }), periodEnd),
    ).not.toBeNull();
  });
});

describe('the events that start a paid period', () => {
  const activated = (object: Subscription): SubscriptionEvent => ({
    type: 'SubscriptionActivated',
    data: {
      subscription_id: 'sub_1',
      organization: 'org_1',
      environment: 'SANDBOX',
      checkout_session_id: 'cs_1',
      order_id: 'ord_1',
      object,
    },
  });
  const updated = (previous?: Record<string, unknown>): SubscriptionEvent => ({
    type: 'SubscriptionUpdated',
    data: { subscription_id: 'sub_1', object: subscription, previous_attributes: previous },
  });

  it('a paid start, a trial inside a paid first period, and every paid renewal', () => {
    expect(paidPeriodStarted(activated(subscription))).toBe(subscription);
    const paidTrial = { ...subscription, status: 'TRIAL' as const, trial_end: '2026-02-07T10:00:00.000Z' };
    expect(paidPeriodStarted(activated(paidTrial))).toBe(paidTrial);
    const renewed: SubscriptionEvent = {
      type: 'SubscriptionRenewed',
      data: { subscription_id: 'sub_1', invoice_id: 'in_1', object: subscription },
    };
    expect(paidPeriodStarted(renewed)).toBe(subscription);
  });

  it('not a free trial: its first paid period is the renewal at its end', () => {
    const freeTrial = { ...subscription, status: 'TRIAL' as const, trial_end: subscription.current_period_end };
    expect(paidPeriodStarted(activated(freeTrial))).toBeNull();
  });

  it('a switch only when it starts a new period, not a change within the period', () => {
    expect(paidPeriodStarted(updated({ current_period_start: '2026-01-01T00:00:00.000Z', price: 199 }))).toBe(
      subscription,
    );
    expect(paidPeriodStarted(updated({ price: 199 }))).toBeNull();
    expect(paidPeriodStarted(updated())).toBeNull();
    const pastDue: SubscriptionEvent = {
      type: 'SubscriptionPastDue',
      data: { subscription_id: 'sub_1', invoice_id: 'in_1', object: subscription },
    };
    expect(paidPeriodStarted(pastDue)).toBeNull();
  });

  it("a switch into a new period ends the old period's allowance, unless it rolled over", () => {
    const oldStart = '2026-01-01T00:00:00.000Z';
    // The same allowance before and after: previous_attributes leaves it out.
    const endsOld = [`allowance:sub_1:${oldStart}`, `allowance:sub_1:${oldStart}:prod_1`];
    expect(allowanceEndedBySwitch(updated({ current_period_start: oldStart }))).toEqual(endsOld);
    // Switched from a plan with a reset allowance to one without: the old one still ends.
    const toNone: SubscriptionEvent = {
      type: 'SubscriptionUpdated',
      data: {
        subscription_id: 'sub_1',
        object: { ...subscription, credit_allowance: null },
        previous_attributes: { current_period_start: oldStart, credit_allowance: subscription.credit_allowance },
      },
    };
    expect(allowanceEndedBySwitch(toNone)).toEqual(endsOld);
    const rolled = { amount: 100, expires_after_days: null, rollover: true };
    expect(allowanceEndedBySwitch(updated({ current_period_start: oldStart, credit_allowance: rolled }))).toEqual([]);
    expect(allowanceEndedBySwitch(updated({ current_period_start: oldStart, credit_allowance: null }))).toEqual([]);
    // A change within the period, and other events, end nothing.
    expect(allowanceEndedBySwitch(updated({ price: 199 }))).toEqual([]);
    expect(allowanceEndedBySwitch(activated(subscription))).toEqual([]);
  });

  it('given a switch whose new period starts at the instant the old one did, when it is granted, then under a key of its plan', () => {
    const start = subscription.current_period_start;
    const toPro: SubscriptionEvent = {
      type: 'SubscriptionUpdated',
      data: {
        subscription_id: 'sub_1',
        object: subscription,
        previous_attributes: { current_period_start: start, product: { id: 'prod_0', name: 'Basic', slug: 'basic' } },
      },
    };
    expect(paidPeriodStarted(toPro)).toBe(subscription);
    // The period's own grant (the old plan's) ends, as would one made by an earlier such switch to it.
    expect(allowanceEndedBySwitch(toPro)).toEqual([`allowance:sub_1:${start}`, `allowance:sub_1:${start}:prod_0`]);
    expect(allowanceGrant(subscription, new Date(start), toPro)?.idempotencyKey).toBe(
      `allowance:sub_1:${start}:prod_1`,
    );
    // A switch into a later period, and a renewal, keep the period's own key.
    expect(
      allowanceGrant(subscription, new Date(start), updated({ current_period_start: '2026-01-01T00:00:00.000Z' }))
        ?.idempotencyKey,
    ).toBe(`allowance:sub_1:${start}`);
  });
});
