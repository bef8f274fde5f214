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

/**
 * The idempotency key of the allowance granted for the period starting at `periodStart`; with
 * `productId`, of a switch to that plan whose new period starts at the very instant the period it
 * replaced did (a switch right after subscribing on a frozen test clock), which the key of that
 * period's own grant would otherwise refuse as a repeat.
 */
const allowanceKey = (subscriptionId: string, periodStart: string, productId?: string) =>
  `allowance:${subscriptionId}:${periodStart}${productId ? `:${productId}` : ''}`;

/** A switch whose new period starts at the instant the one it replaced did. */
function restartedAtOnce(event: SubscriptionEvent): boolean {
  if (event.type !== 'SubscriptionUpdated') return false;
  return event.data.previous_attributes?.current_period_start === event.data.object.current_period_start;
}

/**
 * A switch into a new period ends the old period's allowance unless it rolled over (the new
 * plan's is granted for the new period): the keys its grant may have (the period's own, or that
 * of a switch to the old plan at the period's first instant; ending a key no grant has does
 * nothing). Empty: nothing ends.
 */
export function allowanceEndedBySwitch(event: SubscriptionEvent): string[] {
  if (event.type !== 'SubscriptionUpdated') return [];
  const previous = event.data.previous_attributes;
  if (!previous || typeof previous.current_period_start !== 'string') return [];
  const before = (
    'credit_allowance' in previous ? previous.credit_allowance : event.data.object.credit_allowance
  ) as Subscription['credit_allowance'];
  if (!before || before.rollover) return [];
  const { id, product } = event.data.object;
  const previousProduct = ('product' in previous ? previous.product : product) as Subscription['product'];
  const start = previous.current_period_start;
  return [allowanceKey(id, start), allowanceKey(id, start, previousProduct.id)];
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
 * after `expires_after_days`, if set. Keyed by the period's start: each period grants once
 * (a switch that restarts the period at its first instant: once per plan switched to).
 */
export function allowanceGrant(
  subscription: Subscription,
  now: Date,
  event?: SubscriptionEvent,
): AllowanceGrant | null {
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
    idempotencyKey: allowanceKey(
      subscription.id,
      subscription.current_period_start,
      event && restartedAtOnce(event) ? subscription.product.id : undefined,
    ),
  };
}
