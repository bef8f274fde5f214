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
import { InvoicesNumberedAtEnd } from '../invoices/numbered-at-end';
import { recordCheckoutRefund } from '../invoices/refund-consumer';
import { takeBackRefundedCredits } from './credit-refunds';
import { provisionFromCheckout } from './checkout-completed';

/**
 * Billing's consumer group on `checkout.events` and its own `billing.events`: each paid
 * checkout is provisioned exactly once, its effects committed with the inbox row, so a
 * redelivered event changes nothing. Refunds (`refund.updated`) run in the same group, so an
 * order's refund reaches its invoice (or takes back its credits) after the completion that recorded it. A paid invoice
 * (`invoice.paid`) asks for its e-invoice; `einvoiceAsked` runs once the effects of an event that
 * asked an e-invoice for something were handled (the e-invoice worker's nudge).
 */
export async function startConsumers(
  context: ServiceContext,
  einvoiceAsked: () => void = () => {},
): Promise<Array<() => Promise<void>>> {
  const { store, infrastructure, logger } = context;
  // The group is the service's schema: `billing` in production, one per test schema.
  const groupId = store.tables.schema.replaceAll('"', '');
  // The events whose handling asked an e-invoice for something, until their transaction ends.
  const asking = new Set<string>();
  const handle = async (event: DomainEventEnvelope, tx: EventStoreTransaction, invoices: InvoicesNumberedAtEnd) => {
    const now = context.now();
    const asked = () => void asking.add(event.id);
    if (event.type === CHECKOUT_PUBLIC_EVENTS.CheckoutSessionCompleted) {
      return provisionFromCheckout(store, tx, event, now, logger, asked, invoices);
    }
    // The rest may read an invoice that a completion before them in the batch opened.
    await invoices.record(tx);
    switch (event.type) {
      case CHECKOUT_PUBLIC_EVENTS.RefundSucceeded:
        await recordCheckoutRefund(store, tx, event, logger);
        await takeBackRefundedCredits(store, tx, event, context.now);
        if (await einvoiceForRefund(store, tx, event, now)) asked();
        return;
      case BILLING_PUBLIC_EVENTS.InvoicePaid:
        if (await einvoiceForPaidInvoice(store, tx, event, now, logger)) asked();
        return;
    }
  };
  /** Events in turn in one transaction, their paid invoices numbered and recorded at its end. */
  const handleInTurn = async (events: DomainEventEnvelope[], tx: EventStoreTransaction) => {
    const invoices = new InvoicesNumberedAtEnd(store.tables.schema);
    for (const event of events) await handle(event, tx, invoices);
    await invoices.record(tx);
  };
  const nudgeFor = (messages: ConsumedMessage[]) => {
    const asked = messages.filter((message) => asking.delete(message.value.id));
    if (asked.length > 0) einvoiceAsked();
  };
  const record = exactlyOnce(store, groupId, (event, tx) => handleInTurn([event], tx), {
    only: [
      CHECKOUT_PUBLIC_EVENTS.CheckoutSessionCompleted,
      CHECKOUT_PUBLIC_EVENTS.RefundSucceeded,
      BILLING_PUBLIC_EVENTS.InvoicePaid,
    ],
    batchEffect: (messages, tx) =>
      handleInTurn(
        messages.map((message) => message.value),
        tx,
      ),
  });
  const subscription = await infrastructure.bus.subscribe({
    groupId,
    topics: [CHECKOUT_TOPIC, BILLING_TOPIC],
    handler: Object.assign(
      async (message: ConsumedMessage) => {
        try {
          await record(message);
        } finally {
          nudgeFor([message]);
        }
      },
      {
        batch: async (messages: ConsumedMessage[]) => {
          try {
            await record.batch(messages);
          } finally {
            nudgeFor(messages);
          }
        },
      },
    ),
  });
  return [() => subscription.stop()];
}
