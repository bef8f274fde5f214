import { type DomainEventEnvelope, RefundSucceededData, newId } from '@billing/contracts';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { ledgerCommandInTransaction } from '../credits/grant-in-transaction';
import { creditPurchaseForUpdate, creditsToTakeBack, recordPurchaseRefund } from '../credits/refund';
import { purchaseGrantKey } from '../credits/purchase';
import { findCustomer } from '../customers/queries';
import { timeOn } from '../test-clocks/read-model';

/**
 * A succeeded refund of a CREDITS order takes back the refunded share of its credits (docs/credits.md),
 * from the order's own grant, as far as it has credits left: the rest was spent or expired, and
 * other grants are never touched. Run in billing's consumer transaction with the inbox row; a
 * refund seen already changes nothing.
 */
export async function takeBackRefundedCredits(
  store: EventStore,
  tx: EventStoreTransaction,
  event: DomainEventEnvelope,
  now: () => Date,
): Promise<void> {
  const parsed = RefundSucceededData.safeParse(event.data);
  if (!parsed.success || parsed.data.object.status !== 'succeeded' || !parsed.data.object.order_id) return;
  const refund = parsed.data.object;
  const orderId = parsed.data.object.order_id;
  const { schema } = store.tables;
  const tenant: Tenant = { organization: event.organization, environment: event.environment };
  const purchase = await creditPurchaseForUpdate(tx, schema, tenant, orderId);
  if (!purchase || purchase.refund_ids.includes(refund.id)) return;
  const refunded = purchase.refunded + refund.amount;
  const owed =
    creditsToTakeBack(Number(purchase.credits), refunded, purchase.amount_paid) - Number(purchase.taken_back);
  const take =
    owed > 0 ? await takeBack(store, tx, tenant, purchase.customer_id, owed, { ...refund, orderId }, now) : 0;
  await recordPurchaseRefund(tx, schema, {
    orderId,
    refundId: refund.id,
    refundedInAll: refunded,
    takenBack: take,
  });
}

/**
 * Takes back up to `owed` credits from the order's grant, as many as it has left at the
 * customer's time; answers how many.
 */
async function takeBack(
  store: EventStore,
  tx: EventStoreTransaction,
  tenant: Tenant,
  customerId: string,
  owed: number,
  refund: { id: string; orderId: string },
  now: () => Date,
): Promise<number> {
  const { schema } = store.tables;
  const customer = await findCustomer(tx, schema, tenant, { by: 'id', value: customerId });
  const at = await timeOn(tx, schema, tenant, customer?.test_clock, now);
  const events = await ledgerCommandInTransaction(tx, store, tenant, at, (settings) => ({
    type: 'AdjustCredits',
    data: {
      customerId,
      now: at,
      adjustmentId: newId('creditAdjustment'),
      amount: owed,
      reason: `Refund ${refund.id} of order ${refund.orderId}`,
      fromGrantKey: purchaseGrantKey(refund.orderId),
      ...settings,
    },
  }));
  return events.reduce((taken, event) => taken + (event.type === 'CreditsAdjusted' ? Number(event.data.amount) : 0), 0);
}
