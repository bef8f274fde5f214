import type { ProductCredits, Subscription } from '@billing/contracts';
import type { SubscriptionEvent } from './subscription';

// A plan's credit allowance (docs/credits.md, "Plan allowances"): the rules, without I/O.

const DAY_MS = 24 * 60 * 60_000;

/** The allowance a subscription holds for a plan's `credits`: rollover said, false when the plan did not. */
export function planAllowance(credits: ProductCredits | null | undefined): Subscription['credit_allowance'] {
  if (!credits) return null;
  return {
    amount: credits.amount,
    expires_after_days: credits.expires_after_days,
    rollover: credits.rollover ?? false,
  };
}

/**
 * `credit_allowance` of a subscription moving to a plan with these `credits`: left out when
 * neither the plan nor the subscription (`held`) has one, so that a subscription without an
 * allowance reads as it did before allowances existed.
 */
export function allowanceField(
  credits: ProductCredits | null | undefined,
  held?: Subscription['credit_allowance'],
): Pick<Subscription, 'credit_allowance'> {
  const allowance = planAllowance(credits);
  return allowance || held ? { credit_allowance: allowance } : {};
}

/**
 * The subscription as it enters a paid period, or null: a start that was paid (not a free
 * trial, which is the first period without a charge), a paid renewal, or a switch that starts
 * a period of the new plan.
 */
export function paidPeriodStarted(event: SubscriptionEvent): Subscription | null {
  switch (event.type) {
    case 'SubscriptionActivated':
      return inFreeTrial(event.data.object) ? null : event.data.object;
    case 'SubscriptionRenewed':
      return event.data.object;
    case 'SubscriptionUpdated':
      return event.data.previous_attributes && 'current_period_start' in event.data.previous_attributes
        ? event.data.object
        : null;
    default:
      return null;
  }
}

/** The idempotency key of the allowance granted for the period starting at `periodStart`. */
const allowanceKey = (subscriptionId: string, periodStart: string) => `allowance:${subscriptionId}:${periodStart}`;

/**
 * A switch into a new period ends the old period's allowance unless it rolled over (the new
 * plan's is granted for the new period): the key of the grant to end, or null.
 */
export function allowanceEndedBySwitch(event: SubscriptionEvent): string | null {
  if (event.type !== 'SubscriptionUpdated') return null;
  const previous = event.data.previous_attributes;
  if (!previous || typeof previous.current_period_start !== 'string') return null;
  const before = (
    'credit_allowance' in previous ? previous.credit_allowance : event.data.object.credit_allowance
  ) as Subscription['credit_allowance'];
  if (!before || before.rollover) return null;
  return allowanceKey(event.data.object.id, previous.current_period_start);
}

/** A trial that lasts the whole first period was not charged; one inside a paid period was. */
const inFreeTrial = (s: Subscription) =>
  s.status === 'TRIAL' && s.trial_end !== null && Date.parse(s.trial_end) >= Date.parse(s.current_period_end);

/** What the period's allowance grants, made at `now` (the subscription's time). */
export type AllowanceGrant = { amount: number; expiresAt: Date | null; idempotencyKey: string };

/**
 * The grant of the subscription's current period, or null when its plan has no allowance or
 * the grant would be over already (a period paid after its end). Without rollover it expires
 * at the period's end, or `expires_after_days` after now if that is sooner; with rollover only
 * after `expires_after_days`, if set. Keyed by the period's start: each period grants once.
 */
export function allowanceGrant(subscription: Subscription, now: Date): AllowanceGrant | null {
  const allowance = subscription.credit_allowance;
  if (!allowance) return null;
  const afterDays =
    allowance.expires_after_days === null ? null : now.getTime() + allowance.expires_after_days * DAY_MS;
  const periodEnd = Date.parse(subscription.current_period_end);
  const expires = allowance.rollover ? afterDays : Math.min(periodEnd, afterDays ?? periodEnd);
  if (expires !== null && expires <= now.getTime()) return null;
  return {
    amount: allowance.amount,
    expiresAt: expires === null ? null : new Date(expires),
    idempotencyKey: allowanceKey(subscription.id, subscription.current_period_start),
  };
}
