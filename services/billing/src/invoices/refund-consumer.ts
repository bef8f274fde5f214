import { type DomainEventEnvelope, RefundSucceededData } from '@billing/contracts';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import type { Logger, Tenant } from '@billing/service';
import { invoiceAggregate } from './aggregate';
import { findInvoice, findInvoiceByOrder } from './read-model';

/**
 * `refund.updated` from checkout with a succeeded refund: the invoice it names, or the one its
 * order paid, adds it to `amount_refunded` (`InvoiceRefunded`, public `invoice.refunded`). Run
 * in billing's consumer group on `checkout.events`, after the `checkout.completed` that
 * recorded the invoice (one order's events share a partition). A refund of an order without an
 * invoice (a one-time purchase) changes nothing here.
 */
export async function recordCheckoutRefund(
  store: EventStore,
  tx: EventStoreTransaction,
  event: DomainEventEnvelope,
  logger?: Logger,
): Promise<void> {
  const parsed = RefundSucceededData.safeParse(event.data);
  if (!parsed.success) {
    logger?.warn({ event_id: event.id }, 'refund.updated without a refund; skipped');
    return;
  }
  const { object: refund, succeeded_at } = parsed.data;
  if (refund.status !== 'succeeded') return;
  const { schema } = store.tables;
  const tenant: Tenant = { organization: event.organization, environment: event.environment };
  const invoice = refund.invoice_id
    ? await findInvoice(tx, schema, tenant, refund.invoice_id)
    : refund.order_id
      ? await findInvoiceByOrder(tx, schema, tenant, refund.order_id)
      : undefined;
  if (!invoice) return;
  const at = new Date(succeeded_at);
  await invoiceAggregate.handleInTransaction(
    tx,
    store,
    invoice.id,
    { type: 'RecordInvoiceRefund', data: { refundId: refund.id, amount: refund.amount, now: at } },
    { ...tenant, occurredAt: at },
  );
}
