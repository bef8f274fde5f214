import {
  BILLING_PUBLIC_EVENTS,
  BILLING_TOPIC,
  CHECKOUT_PUBLIC_EVENTS,
  CHECKOUT_TOPIC,
  type DomainEventEnvelope,
} from '@billing/contracts';
import { type ConsumedMessage, exactlyOnce } from '@billing/bus';
import type { EventStoreTransaction } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { einvoiceForPaidInvoice, einvoiceForRefund } from '../einvoices/request';
import { recordCheckoutRefund } from '../invoices/refund-consumer';
import { provisionFromCheckout } from './checkout-completed';

/**
 * Billing's consumer group on `checkout.events` and its own `billing.events`: each paid
 * checkout is provisioned exactly once, its effects committed with the inbox row, so a
 * redelivered event changes nothing. Refunds (`refund.updated`) run in the same group, so an
 * order's refund reaches its invoice after the completion that recorded it. A paid invoice
 * (`invoice.paid`) asks for its e-invoice; `afterEach` runs once an event's effects committed
 * (the e-invoice worker's nudge).
 */
export async function startConsumers(
  context: ServiceContext,
  afterEach: (event: DomainEventEnvelope) => void = () => {},
): Promise<Array<() => Promise<void>>> {
  const { store, infrastructure, logger } = context;
  // The group is the service's schema: `billing` in production, one per test schema.
  const groupId = store.tables.schema.replaceAll('"', '');
  const handle = async (event: DomainEventEnvelope, tx: EventStoreTransaction) => {
    const now = context.now();
    switch (event.type) {
      case CHECKOUT_PUBLIC_EVENTS.RefundSucceeded:
        await recordCheckoutRefund(store, tx, event, logger);
        return einvoiceForRefund(store, tx, event, now);
      case BILLING_PUBLIC_EVENTS.InvoicePaid:
        return einvoiceForPaidInvoice(store, tx, event, now, logger);
      default:
        return provisionFromCheckout(store, tx, event, now, logger);
    }
  };
  const record = exactlyOnce(store, groupId, handle, {
    only: [
      CHECKOUT_PUBLIC_EVENTS.CheckoutSessionCompleted,
      CHECKOUT_PUBLIC_EVENTS.RefundSucceeded,
      BILLING_PUBLIC_EVENTS.InvoicePaid,
    ],
  });
  const subscription = await infrastructure.bus.subscribe({
    groupId,
    topics: [CHECKOUT_TOPIC, BILLING_TOPIC],
    handler: Object.assign(
      async (message: ConsumedMessage) => {
        await record(message);
        afterEach(message.value);
      },
      {
        batch: async (messages: ConsumedMessage[]) => {
          await record.batch(messages);
          for (const message of messages) afterEach(message.value);
        },
      },
    ),
  });
  return [() => subscription.stop()];
}
