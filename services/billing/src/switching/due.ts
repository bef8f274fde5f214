import type { ServiceContext } from '@billing/runtime';
import type { DueSubscription } from '../subscriptions/queries';
import { onSubscription } from './perform';

/**
 * Applies the subscription's pending schedule (the plan changes, periods of the new plan count
 * from the effective date), before the renewal due at the same instant, which then bills the
 * new plan. A subscription canceled or canceling meanwhile has its schedule canceled instead.
 */
export async function applyDueSchedule(context: ServiceContext, item: DueSubscription, at: Date): Promise<boolean> {
  const { events } = await onSubscription(
    context,
    { organization: item.organization, environment: item.environment },
    { type: 'ApplySchedule', data: { subscriptionId: item.id, now: at } },
  );
  return events.length > 0;
}
