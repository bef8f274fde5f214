import { type Subscription, taipeiDateOf } from '@billing/contracts';
import { type MetricsChange, metricsChangeOn } from '@billing/runtime';
import { monthlyEquivalent } from '../proration/proration';

/** What billing's metrics read of a subscription. */
export type SubscriptionFigures = Pick<
  Subscription,
  'status' | 'price' | 'interval' | 'interval_count' | 'trial_end' | 'created_at' | 'updated_at'
>;

/**
 * Billing's part of the dashboard's metrics (docs/dashboard-api.md), as the per-day values of
 * one subscription's life: active from the Taipei day it started; in MRR at its plan's
 * `monthly_equivalent` from the day its trial ends (at once without one); new on its first day;
 * both ended, and churned, on the day it was canceled (a canceled subscription changes no more:
 * its last update is when it ended).
 */
export function subscriptionMetrics(subscription: SubscriptionFigures): MetricsChange[] {
  const started = taipeiDateOf(subscription.created_at);
  const trialEnds = subscription.trial_end ? taipeiDateOf(subscription.trial_end) : started;
  const paying = trialEnds > started ? trialEnds : started;
  const ended = subscription.status === 'CANCELED' ? taipeiDateOf(subscription.updated_at) : null;
  const monthly = monthlyEquivalent(subscription);
  const life: MetricsChange[] = [{ date: started, active_subscriptions: 1, new_subscriptions: 1 }];
  if (ended === null || paying < ended) life.push({ date: paying, mrr: monthly });
  if (ended !== null) {
    life.push({ date: ended, active_subscriptions: -1, churned_subscriptions: 1 });
    if (paying < ended) life.push({ date: ended, mrr: -monthly });
  }
  return life;
}

/**
 * What a subscription's change adds to the metrics, on the Taipei day of the change (its
 * `updated_at`): days before keep what they showed, so MRR history stays at the price each day
 * had. `before` is null for a new subscription.
 */
export function subscriptionMetricsChange(
  before: SubscriptionFigures | null,
  after: SubscriptionFigures,
): MetricsChange[] {
  return metricsChangeOn(
    taipeiDateOf(after.updated_at),
    before ? subscriptionMetrics(before) : [],
    subscriptionMetrics(after),
  );
}
