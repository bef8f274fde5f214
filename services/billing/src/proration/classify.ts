import { type PlanPrice, compareMonthly } from './proration';

// How a switch is carried out, pure (docs/plan-switching.md).

export type SwitchType = 'UPGRADE' | 'DOWNGRADE' | 'PERIOD_CHANGE' | 'CROSSGRADE';
export type ExecutionMode = 'immediate' | 'scheduled';
export type ProrationBehavior = 'create_prorations' | 'none';

/** The organization's proration policy per environment (admin API); the defaults are the spec's. */
export type ProrationPolicy = {
  upgrade: 'prorate_now' | 'bill_at_next_renewal';
  downgrade: 'at_period_end' | 'now_with_credit';
};
export const DEFAULT_PRORATION_POLICY: ProrationPolicy = { upgrade: 'prorate_now', downgrade: 'at_period_end' };

/**
 * What happens to the subscription:
 * - `prorate`: now; a new period of the new plan starts now, the customer pays
 *   `net_amount = charge - credit` at once (a negative net becomes customer balance);
 * - `defer`: now; the period goes on, and the difference for its unused days
 *   (`net_amount`) is billed with the next renewal (through the customer balance);
 * - `swap`: now; the period goes on and nothing is charged or credited; the next renewal
 *   bills the new plan (crossgrade, a trial, or `proration_behavior: none`);
 * - `schedule`: at the end of the period, by a pending schedule; the renewal bills the new plan.
 */
export type Treatment = 'prorate' | 'defer' | 'swap' | 'schedule';

/**
 * Same interval and interval count: compared by monthly equivalent, higher is `UPGRADE`, lower
 * `DOWNGRADE`, equal `CROSSGRADE`. Any other interval (or count) is `PERIOD_CHANGE`.
 */
export function switchTypeOf(current: PlanPrice, target: PlanPrice): SwitchType {
  if (current.interval !== target.interval || current.interval_count !== target.interval_count) {
    return 'PERIOD_CHANGE';
  }
  const order = compareMonthly(target, current);
  return order > 0 ? 'UPGRADE' : order < 0 ? 'DOWNGRADE' : 'CROSSGRADE';
}

/**
 * A period change goes by the direction of the full-period price: a target period that costs
 * more than the current one (month to year) is an upward change, immediate and prorated; one
 * that costs the same or less (year to month) waits for the end of the period.
 */
export function periodChangeIsUpward(current: PlanPrice, target: PlanPrice): boolean {
  return target.price > current.price;
}

/**
 * The treatment of a switch: in a trial, always `swap` (now, nothing charged, `trial_end`
 * kept); `proration_behavior: none` turns every immediate switch into `swap`. Otherwise by type
 * and policy: `UPGRADE` prorated now (`prorate_now`) or `defer` (`bill_at_next_renewal`);
 * `DOWNGRADE` `schedule` (`at_period_end`) or `prorate` (`now_with_credit`); `CROSSGRADE`
 * `swap`; `PERIOD_CHANGE` `prorate` upward, `schedule` otherwise.
 */
export function treatmentOf(input: {
  type: SwitchType;
  current: PlanPrice;
  target: PlanPrice;
  inTrial: boolean;
  policy: ProrationPolicy;
  prorationBehavior?: ProrationBehavior;
}): Treatment {
  const { type, policy } = input;
  if (input.inTrial) return 'swap';
  let treatment: Treatment;
  switch (type) {
    case 'UPGRADE':
      treatment = policy.upgrade === 'prorate_now' ? 'prorate' : 'defer';
      break;
    case 'DOWNGRADE':
      treatment = policy.downgrade === 'now_with_credit' ? 'prorate' : 'schedule';
      break;
    case 'CROSSGRADE':
      treatment = 'swap';
      break;
    case 'PERIOD_CHANGE':
      treatment = periodChangeIsUpward(input.current, input.target) ? 'prorate' : 'schedule';
      break;
  }
  if (input.prorationBehavior === 'none' && treatment !== 'schedule') return 'swap';
  return treatment;
}

export const executionModeOf = (treatment: Treatment): ExecutionMode =>
  treatment === 'schedule' ? 'scheduled' : 'immediate';
