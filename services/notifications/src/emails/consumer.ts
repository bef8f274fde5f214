import { exactlyOnce } from '@billing/bus';
import { type ServiceContext, topicOf } from '@billing/runtime';
import { buyerLocaleOf, emailRequestOf, reminderOf, settledRefOf } from './from-event';
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

/**
 * Queues the emails that checkout's and billing's events ask for, in the consumer's inbox
 * transaction (its own group): a redelivered event queues nothing, and the outbox holds one
 * email per event and kind whatever happens. `onQueued` wakes the sender.
 */
export async function startEmailConsumer(context: ServiceContext, onQueued: () => void): Promise<() => Promise<void>> {
  const { store, infrastructure, now } = context;
  const schema = store.tables.schema;
  const groupId = `${schema.replaceAll('"', '')}-emails`;
  let queued = false;
  const handler = exactlyOnce(
    store,
    groupId,
    async (event, tx) => {
      const buyer = buyerLocaleOf(event);
      if (buyer) await rememberBuyerLocale(tx, schema, event, buyer);
      const settled = settledRefOf(event);
      if (settled) await dropReminders(tx, schema, settled);
      const request = emailRequestOf(event);
      if (!request) return;
      const orderId = typeof event.data.order_id === 'string' ? event.data.order_id : null;
      const refundOrder = (event.data.object as { order_id?: unknown } | undefined)?.order_id;
      const order_id = orderId ?? (typeof refundOrder === 'string' ? refundOrder : null);
      await queueEmail(tx, schema, event, { ...request, order_id }, now());
      const reminder = reminderOf(request, now());
      if (reminder) await queueEmail(tx, schema, event, { ...reminder, order_id }, now());
      queued = true;
    },
    { only: EMAIL_EVENT_TYPES },
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
