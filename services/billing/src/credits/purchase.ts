import type { CheckoutSessionCompletedData } from '@billing/contracts';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { grantInTransaction } from './grant-in-transaction';
import { recordCreditPurchase } from './refund';

const DAY_MS = 24 * 60 * 60_000;

/**
 * A paid CREDITS product grants the buyer what it declared when it was sold (the session's
 * product, not today's catalog), once per order: a redelivered `checkout.completed` grants
 * nothing more. The credits expire `expires_after_days` after `now`, the payment's time (a test
 * clock's for a customer on one). What the order paid is kept beside it, so that a refund takes
 * back its share (`../provisioning/credit-refunds.ts`). See docs/credits.md.
 */
export async function grantPurchasedCredits(
  tx: EventStoreTransaction,
  store: EventStore,
  tenant: Tenant,
  customerId: string,
  sale: Pick<CheckoutSessionCompletedData, 'order_id' | 'product' | 'amount_total'>,
  now: Date,
): Promise<void> {
  const credits = sale.product?.type === 'CREDITS' ? sale.product.credits : null;
  if (!credits) return;
  const days = credits.expires_after_days;
  await grantInTransaction(
    tx,
    store,
    tenant,
    customerId,
    {
      amount: credits.amount,
      source: 'purchase',
      sourceId: sale.order_id,
      expiresAt: days === null ? null : new Date(now.getTime() + days * DAY_MS),
      idempotencyKey: purchaseGrantKey(sale.order_id),
    },
    now,
  );
  await recordCreditPurchase(tx, store.tables.schema, {
    ...tenant,
    orderId: sale.order_id,
    customerId,
    amountPaid: sale.amount_total,
    credits: credits.amount,
  });
}

/** The idempotency key of an order's grant: it grants once, and its refunds take back from it. */
export const purchaseGrantKey = (orderId: string) => `order:${orderId}`;
