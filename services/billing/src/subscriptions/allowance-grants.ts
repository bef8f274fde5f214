import type { EventStore, EventStoreTransaction, RecordedEvent } from '@billing/eventstore';
import { subscriptionEvents } from './subscription';
import { allowanceEndedBySwitch, allowanceGrant, paidPeriodStarted } from './allowance';
import { endGrantInTransaction, grantInTransaction } from '../credits/grant-in-transaction';

/**
 * Grants the allowance of every paid period that subscription events start, in their append's
 * transaction: the subscription aggregate's read models run this, so every path that pays a
 * period (checkout, a direct start, renewals, dunning, a new card, the reconciler, a switch)
 * grants, and a period recorded once grants once. A switch into a new period first ends what is
 * left of the old period's allowance, unless it rolled over. `now` is the event's time: the
 * subscription's, a test clock's for a customer on one.
 */
export async function grantPeriodAllowances(
  tx: EventStoreTransaction,
  store: EventStore,
  events: RecordedEvent[],
): Promise<void> {
  for (const recorded of events) {
    const event = subscriptionEvents.of(recorded);
    const subscription = event && paidPeriodStarted(event);
    if (!subscription) continue;
    const now = new Date(recorded.occurred_at);
    const tenant = { organization: recorded.organization, environment: recorded.environment };
    for (const ended of allowanceEndedBySwitch(event)) {
      await endGrantInTransaction(tx, store, tenant, subscription.customer_id, ended, now);
    }
    const grant = allowanceGrant(subscription, now, event);
    if (!grant) continue;
    await grantInTransaction(
      tx,
      store,
      tenant,
      subscription.customer_id,
      {
        amount: grant.amount,
        source: 'allowance',
        sourceId: subscription.id,
        expiresAt: grant.expiresAt,
        idempotencyKey: grant.idempotencyKey,
      },
      now,
    );
  }
}
