import { type Invoice, type SavedPaymentMethod, type Subscription, notFound } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { type ChargeOutcome, savedCardOf } from '../../charges/charge';
import { findSubscription } from '../../subscriptions/queries';
import { customerAggregate } from '../../customers/aggregate';
import { customerStream } from '../../customers/customer';
import { invoicesTable } from '../../invoices/read-model';
import { subscriptionsTable } from '../../subscriptions/read-model';
import { timeOn } from '../../test-clocks/read-model';
import { chargeAttempts, recordAttempts } from './attempts';

/** What `PUT /internal/customers/{id}/default_payment_method` and `setDefaultPaymentMethod` answer. */
export type DefaultPaymentMethodSet = {
  object: 'default_payment_method';
  customer_id: string;
  payment_method: SavedPaymentMethod;
  /** The open invoices of the customer's PAST_DUE subscriptions, as the retry with the new card left them. */
  retried_invoices: Invoice[];
};

/**
 * Makes `paymentMethod` the card the customer's renewals charge (`CustomerPaymentMethodSaved`
 * on the customer's stream), then retries at once, with it, every open invoice of the
 * customer's PAST_DUE subscriptions (`retryOpenInvoice`): paid, the subscription is ACTIVE
 * again. For the customer portal, in process, and behind the internal route. An unknown
 * customer (or another organization's or environment's) is 404.
 */
export async function setDefaultPaymentMethod(
  context: ServiceContext,
  tenant: Tenant,
  customerId: string,
  paymentMethod: SavedPaymentMethod,
): Promise<DefaultPaymentMethodSet> {
  const { store } = context;
  const { schema } = store.tables;
  const history = await store.readStream(customerStream(customerId));
  const current = customerAggregate.fold(history);
  if (
    current.status === 'Empty' ||
    current.organization !== tenant.organization ||
    current.environment !== tenant.environment
  ) {
    throw notFound(`No such customer: ${customerId}`);
  }
  const savedAt = await timeOn(store.database, schema, tenant, current.customer.test_clock, context.now);
  await customerAggregate.handle(
    store,
    customerId,
    { type: 'SavePaymentMethod', data: { customerId, ...tenant, now: savedAt, paymentMethod } },
    { ...tenant, occurredAt: savedAt },
  );

  const retried: Invoice[] = [];
  for (const { subscription, invoice } of await openInvoicesOfPastDue(context, customerId)) {
    const at = await timeOn(store.database, schema, tenant, subscription.test_clock, context.now);
    retried.push(await retryOpenInvoice(context, tenant, subscription, invoice, at));
  }
  return {
    object: 'default_payment_method',
    customer_id: customerId,
    payment_method: paymentMethod,
    retried_invoices: retried,
  };
}

async function openInvoicesOfPastDue(context: ServiceContext, customerId: string) {
  const { schema } = context.store.tables;
  const { rows } = await context.store.database.query<{ subscription: Subscription; invoice: Invoice }>(
    `SELECT s.document AS subscription, i.document AS invoice
     FROM ${subscriptionsTable(schema)} s JOIN ${invoicesTable(schema)} i ON i.subscription_id = s.id
     WHERE s.customer_id = $1 AND s.status = 'PAST_DUE' AND i.status = 'open'
     ORDER BY i.created_at, i.id`,
    [customerId],
  );
  return rows;
}

/**
 * A new default card was saved: charges the open invoice of a PAST_DUE subscription at once
 * with it, as attempt `attempt_count + 1` (key `<invoice>:<attempt>`, so a repeat never charges
 * twice), at `at` (the subscription's clock). Paid: the subscription enters the period, ACTIVE,
 * as a paid retry does (`invoice.paid`, `subscription.renewed`). Declined: the attempt is
 * counted and the scheduled retry, if any, stays. Returns the invoice as recorded.
 */
async function retryOpenInvoice(
  context: ServiceContext,
  tenant: Tenant,
  subscription: Subscription,
  invoice: Invoice,
  at: Date,
): Promise<Invoice> {
  if (invoice.status !== 'open' || subscription.status !== 'PAST_DUE') return invoice;
  const attempt = invoice.attempt_count + 1;
  const card = await savedCardOf(context, subscription.customer_id);
  const outcome = (await chargeAttempts(context, tenant, [{ tenant, card, invoice, attempt }]))[0]!;
  // Left open as it was: the reconciler records the charge once its outcome is known (a new card
  // is a card: a transfer to wait for is the renewal's, not this retry's).
  if (outcome.status === 'unknown' || outcome.status === 'pending') return invoice;
  return recordRetry(context, tenant, subscription.id, invoice, outcome, at);
}

/** The retry's answer recorded as attempt `attempt_count + 1`: paid, or declined with the scheduled retry left as it was. */
async function recordRetry(
  context: ServiceContext,
  tenant: Tenant,
  subscriptionId: string,
  invoice: Invoice,
  outcome: Extract<ChargeOutcome, { status: 'succeeded' | 'declined' }>,
  at: Date,
): Promise<Invoice> {
  const nextAttemptAt =
    outcome.status === 'declined' && invoice.next_payment_attempt ? new Date(invoice.next_payment_attempt) : null;
  const attempt = invoice.attempt_count + 1;
  const [recorded] = await recordAttempts(context, [
    { tenant, subscriptionId, invoice, attempt, outcome, nextAttemptAt, unpaid: null, now: at },
  ]);
  return recorded!;
}

/**
 * The next attempt of an overdue invoice, charged elsewhere with a new card and declined (the
 * portal's PAYUNi fields, which charge the invoice themselves): counted as a declined retry, so
 * the next card is charged under a key of its own.
 */
export async function recordDeclinedRetry(
  context: ServiceContext,
  tenant: Tenant,
  invoice: Invoice,
  declined: { code: string; message: string },
): Promise<Invoice> {
  const { store } = context;
  const subscription = invoice.subscription_id
    ? await findSubscription(store.database, store.tables.schema, tenant, invoice.subscription_id)
    : undefined;
  if (!subscription || invoice.status !== 'open') return invoice;
  const at = await timeOn(store.database, store.tables.schema, tenant, subscription.test_clock, context.now);
  return recordRetry(context, tenant, subscription.id, invoice, { status: 'declined', ...declined }, at);
}
