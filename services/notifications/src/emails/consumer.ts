import { exactlyOnce } from '@billing/bus';
import type { DomainEventEnvelope } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import { type ServiceContext, positiveNumberSetting, topicOf } from '@billing/runtime';
import {
  DEFAULT_EINVOICE_WAIT_MS,
  EINVOICE_SETTINGS_CONFIGURED,
  receiptWithEinvoice,
  recordEinvoicing,
  releaseReceipt,
} from './einvoice-wait';
import { buyerLocaleOf, einvoiceOutcomeOf, emailRequestOf, reminderOf, settledRefOf } from './from-event';
import { dropReminders, queueEmail, rememberBuyerLocale } from './outbox';

/** The public events that ask for an email to a buyer (`emailRequestOf`). */
export const EMAIL_EVENT_TYPES = [
  'checkout.completed',
  'invoice.paid',
  'invoice.payment_failed',
  'invoice.refunded',
  'refund.updated',
  'subscription.trial_will_end',
  'subscription.canceled',
  'subscription.renewal_upcoming',
  'checkout.async_payment_pending',
  'invoice.payment_action_required',
  'checkout.expired',
  'checkout.async_payment_expired',
];

/** What a receipt waits for: whether an organization issues e-invoices, and each one's outcome. */
const EINVOICE_EVENT_TYPES = ['einvoice.issued', 'einvoice.failed', EINVOICE_SETTINGS_CONFIGURED];

/**
 * Queues the emails that checkout's and billing's events ask for, in the consumer's inbox
 * transaction (its own group): a redelivered event queues nothing, and the outbox holds one
 * email per event and kind whatever happens. A receipt may wait for its e-invoice
 * (`einvoice-wait.ts`), whose events release it. `onQueued` wakes the sender.
 */
export async function startEmailConsumer(context: ServiceContext, onQueued: () => void): Promise<() => Promise<void>> {
  const { store, infrastructure, config, now } = context;
  const schema = store.tables.schema;
  const groupId = `${schema.replaceAll('"', '')}-emails`;
  const einvoiceWaitMs = positiveNumberSetting(config, 'EMAIL_EINVOICE_WAIT_MS', DEFAULT_EINVOICE_WAIT_MS);
  let queued = false;

  /** Queues what the event asks for; answers whether it queued anything. */
  const queueEmailsOf = async (event: DomainEventEnvelope, tx: SqlExecutor): Promise<boolean> => {
    const buyer = buyerLocaleOf(event);
    if (buyer) await rememberBuyerLocale(tx, schema, event, buyer);
    const settled = settledRefOf(event);
    if (settled) await dropReminders(tx, schema, settled);
    const request = emailRequestOf(event);
    if (!request) return false;
    const orderId = typeof event.data.order_id === 'string' ? event.data.order_id : null;
    const refundOrder = (event.data.object as { order_id?: unknown } | undefined)?.order_id;
    const order_id = orderId ?? (typeof refundOrder === 'string' ? refundOrder : null);
    const email = await receiptWithEinvoice(tx, schema, event, request, now(), einvoiceWaitMs);
    await queueEmail(tx, schema, event, { ...email, order_id }, now());
    const reminder = reminderOf(request, now());
    if (reminder) await queueEmail(tx, schema, event, { ...reminder, order_id }, now());
    return true;
  };

  const handler = exactlyOnce(
    store,
    groupId,
    async (event, tx) => {
      if (event.type === EINVOICE_SETTINGS_CONFIGURED) return recordEinvoicing(tx, schema, event);
      const einvoice = einvoiceOutcomeOf(event);
      if (einvoice) {
        if (await releaseReceipt(tx, schema, event, einvoice, now())) queued = true;
      } else if (await queueEmailsOf(event, tx)) queued = true;
    },
    { only: [...EMAIL_EVENT_TYPES, ...EINVOICE_EVENT_TYPES] },
  );
  const wakeAfter =
    <A extends unknown[]>(fn: (...args: A) => Promise<void>) =>
    async (...args: A) => {
      await fn(...args);
      if (queued) {
        queued = false;
        onQueued();
      }
    };
  const subscription = await infrastructure.bus.subscribe({
    groupId,
    topics: [topicOf('checkout'), topicOf('billing')],
    handler: Object.assign(wakeAfter(handler), { batch: wakeAfter(handler.batch) }),
  });
  return () => subscription.stop();
}
