import { type Subscription, conflict } from '@billing/contracts';
import { type EventStoreTransaction, isRetryableWriteError } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { renewalInvoiceId } from '../../invoices/ids';
import { invoicesTable } from '../../invoices/read-model';
import { switchingAggregate } from '../../subscriptions/aggregate';
import { subscriptionsTable } from '../../subscriptions/read-model';
import type { SwitchingCommand } from '../../subscriptions/switch-decide';

// Switching's commands on the subscription's stream: in the switch's own transaction, after
// locking the subscription's row as a renewal locks it, or alone, retried on a version conflict.

/**
 * Locks the subscription's row for the switch's transaction, as a renewal locks it to open
 * its invoice; a renewal invoice of the period that is ending exists already: the renewal
 * went first, and this switch is 409 (preview again).
 */
export async function lockForSwitch(tx: EventStoreTransaction, context: ServiceContext, subscription: Subscription) {
  const { schema } = context.store.tables;
  await tx.query(`SELECT id FROM ${subscriptionsTable(schema)} WHERE id = $1 FOR UPDATE`, [subscription.id]);
  const renewal = renewalInvoiceId(subscription.id, subscription.current_period_end);
  const { rows } = await tx.query(`SELECT 1 FROM ${invoicesTable(schema)} WHERE id = $1`, [renewal]);
  if (rows.length > 0) {
    throw conflict(`Subscription ${subscription.id} is renewing: preview the switch again`, [
      { blocking_reason: 'renewing' },
    ]);
  }
}

/** Runs the transaction; another writer of the subscription meanwhile is 409. */
export async function inTransaction<T>(
  context: ServiceContext,
  work: (tx: EventStoreTransaction) => Promise<T>,
): Promise<T> {
  try {
    return await context.store.transaction(work);
  } catch (error) {
    if (isRetryableWriteError(error)) {
      throw conflict('The subscription changed meanwhile: preview the switch again', [{ blocking_reason: 'changed' }]);
    }
    throw error;
  }
}

/** In the caller's transaction (the switch's own, after `lockForSwitch`). */
export function run(tx: EventStoreTransaction, context: ServiceContext, tenant: Tenant, command: SwitchingCommand) {
  return switchingAggregate.handleInTransaction(tx, context.store, command.data.subscriptionId, command, {
    ...tenant,
    occurredAt: command.data.now,
  });
}

/** Outside a transaction, retried on a version conflict (decided again on the new history). */
export function onSubscription(context: ServiceContext, tenant: Tenant, command: SwitchingCommand) {
  return switchingAggregate.handle(context.store, command.data.subscriptionId, command, {
    ...tenant,
    occurredAt: command.data.now,
  });
}
