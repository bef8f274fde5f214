import type { ScheduledPlan, Subscription, SwitchPlan, SwitchPreview, SwitchProration } from '@billing/contracts';

/** The preview as the facts decide it; the environment's `livemode` is added where it is answered. */
export type PlannedPreview = Omit<SwitchPreview, 'livemode'>;
import { periodEnd } from '../calendar/period';
import {
  type ProrationBehavior,
  type ProrationPolicy,
  type SwitchType,
  type Treatment,
  executionModeOf,
  switchTypeOf,
  treatmentOf,
} from './classify';
import { type PlanPrice, monthlyEquivalent, periodDays, prorate, unusedCredit } from './proration';

/** Everything a preview and a switch are computed from, read by `engine/switching/facts.ts`. */
export type SwitchFacts = {
  subscription: Subscription;
  target: ScheduledPlan;
  /** What the customer paid for the current period, after discounts and refunds (TWD). */
  paid: number;
  /** The new plan's full-period price after the subscription's coupon, if still valid at `now`. */
  charge: number;
  /** The subscription's time: its test clock's, or the service's. */
  now: Date;
  policy: ProrationPolicy;
  prorationBehavior?: ProrationBehavior;
  /** `blockingReasonOf` the subscription's state (past_due, canceled, pending_schedule, ...), or null. */
  blockingReason: string | null;
  hasPaymentMethod: boolean;
};

export type PlannedSwitch = {
  preview: PlannedPreview;
  type: SwitchType;
  treatment: Treatment;
  /** Charged on the saved card now (`prorate` with a positive net), else 0. */
  chargeNow: number;
  /** Added to the customer's balance (signed: positive is credit, negative is owed at the next renewal). */
  balanceChange: number;
};

const priceOf = (plan: { price: number; interval: PlanPrice['interval']; interval_count: number }): PlanPrice => ({
  price: plan.price,
  interval: plan.interval,
  interval_count: plan.interval_count,
});

export function switchPlanOf(plan: { id: string; name: string } & PlanPrice): SwitchPlan {
  return {
    product_id: plan.id,
    product_name: plan.name,
    amount: plan.price,
    currency: 'TWD',
    interval: plan.interval,
    interval_count: plan.interval_count,
    monthly_equivalent: monthlyEquivalent(plan),
  };
}

/**
 * The switch preview and what the switch does, pure (docs/plan-switching.md):
 * - `prorate`: credit for the unused days of `paid`, charge the full new period, net = charge -
 *   credit, now; a new period starts now (`next_billing_date` one new interval later);
 * - `defer`: credit and charge both for the unused days only (the period goes on), their net
 *   added to the next renewal;
 * - `swap` and `schedule`: no proration (`proration: null`, `proration_behavior: none`).
 */
export function planSwitch(facts: SwitchFacts): PlannedSwitch {
  const { subscription, target, now } = facts;
  const current = priceOf(subscription);
  const next = priceOf(target);
  const type = switchTypeOf(current, next);
  const inTrial = subscription.status === 'TRIAL';
  const treatment = treatmentOf({
    type,
    current,
    target: next,
    inTrial,
    policy: facts.policy,
    prorationBehavior: facts.prorationBehavior,
  });
  const at = now.toISOString();
  let proration: SwitchProration | null = null;
  let chargeNow = 0;
  let balanceChange = 0;
  let nextBilling = subscription.current_period_end;
  const describe = (unused: number, total: number) =>
    `Unused time on ${subscription.product.name}: ${unused} of ${total} days of ${facts.paid} TWD paid`;
  if (treatment === 'prorate') {
    const amounts = prorate({
      paid: facts.paid,
      charge: facts.charge,
      periodStart: subscription.current_period_start,
      periodEnd: subscription.current_period_end,
      now,
    });
    proration = { ...amounts, credit_description: describe(amounts.unused_days, amounts.total_days_in_period) };
    chargeNow = Math.max(0, amounts.net_amount);
    balanceChange = Math.max(0, -amounts.net_amount);
    nextBilling = periodEnd(now, target.interval, target.interval_count).toISOString();
  } else if (treatment === 'defer') {
    const days = periodDays(subscription.current_period_start, subscription.current_period_end, now);
    const credit = unusedCredit(facts.paid, days.unused_days, days.total_days_in_period);
    const charge =
      days.total_days_in_period > 0 ? Math.floor((facts.charge * days.unused_days) / days.total_days_in_period) : 0;
    proration = {
      credit_amount: credit,
      charge_amount: charge,
      net_amount: charge - credit,
      ...days,
      credit_description: describe(days.unused_days, days.total_days_in_period),
    };
    balanceChange = credit - charge;
  }
  const requiresPayment = chargeNow > 0;
  const blocking = facts.blockingReason ?? (requiresPayment && !facts.hasPaymentMethod ? 'no_payment_method' : null);
  const preview: PlannedPreview = {
    object: 'switch_preview',
    subscription_id: subscription.id,
    switch_type: type,
    execution_mode: executionModeOf(treatment),
    current_plan: switchPlanOf({ id: subscription.product.id, name: subscription.product.name, ...current }),
    new_plan: switchPlanOf({ id: target.id, name: target.name, ...next }),
    proration,
    effective_date: treatment === 'schedule' ? subscription.current_period_end : at,
    next_billing_date: nextBilling,
    proration_behavior: proration ? 'create_prorations' : 'none',
    requires_payment: requiresPayment,
    can_proceed: blocking === null,
    blocking_reason: blocking,
    is_in_trial: inTrial,
    trial_end: subscription.trial_end,
  };
  return { preview, type, treatment, chargeNow, balanceChange };
}
