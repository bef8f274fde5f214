import { type Environment, type SubscriptionSchedule, notFound } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { DueSubscription } from '../../subscriptions/queries';
import { findSchedule } from '../../subscriptions/switch-read-model';
import { onSubscription } from './commands';
import { clockOf, loadState } from './facts';

// The subscription's one pending schedule (a switch at the end of its period): read, canceled,
// and applied by the due work when its effective date comes.

/** `GET /v1/subscriptions/{id}/schedule`: the pending schedule, else the latest; 404 when none ever. */
export async function getSchedule(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  subscriptionId: string,
): Promise<SubscriptionSchedule> {
  const tenant = { organization, environment };
  await loadState(context, tenant, subscriptionId);
  const schedule = await findSchedule(context.store.database, context.store.tables.schema, tenant, subscriptionId);
  if (!schedule) throw notFound(`Subscription ${subscriptionId} has no schedule`);
  return schedule;
}

/** `DELETE /v1/subscriptions/{id}/schedule`: cancels the pending schedule; 404 when none is pending. */
export async function cancelSchedule(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  subscriptionId: string,
): Promise<SubscriptionSchedule> {
  const tenant = { organization, environment };
  const state = await loadState(context, tenant, subscriptionId);
  const now = await clockOf(context, tenant, state.subscription);
  const { events } = await onSubscription(context, tenant, {
    type: 'CancelSchedule',
    data: { subscriptionId, ...tenant, now },
  });
  const canceled = events.find((e) => e.type === 'SubscriptionScheduleCanceled');
  return (canceled!.data as { object: SubscriptionSchedule }).object;
}

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
