import { type Invoice, type Subscription, notFound } from '@billing/contracts';
import type { EventStoreTransaction } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { savedCardOf } from '../../charges/charge';
import { invoiceAggregate } from '../../invoices/aggregate';
import { finalInvoiceId } from '../../invoices/ids';
import type { OpenInvoice } from '../../invoices/invoice';
import { findInvoice, findInvoicesById, nextInvoiceNumbers } from '../../invoices/read-model';
import { subscriptionAggregate } from '../../subscriptions/aggregate';
import { billsUsage, usageStart } from '../../subscriptions/metered';
import { type DueSubscription, findSubscription } from '../../subscriptions/queries';
import { chargeAttempts, recordAttempts, recordPaymentPending } from './attempts';
import { afterAnswer } from './dunning';
import { awaitingTransfer, unknownOutcome } from './renew';
import { withCustomerBalance } from './switches';
import { timeOn } from '../../test-clocks/read-model';
import { claimUsageLines } from './usage-lines';

// The end of a subscription canceled at its period's end: no renewal invoice follows, so the
// usage of its last period is billed on a final invoice (docs/usage.md), charged on the saved
// card and retried on the organization's dunning schedule, with the subscription left ended.

const tenantOf = (item: DueSubscription): Tenant => ({
  organization: item.organization,
  environment: item.environment,
});

/**
 * Ends a subscription canceled at period end whose period is over: first its last period's usage
 * is opened as its final invoice (when it has metered usage not billed yet), then it ends. Each
 * step is idempotent, so a run cut short between them is finished by the next.
 */
export async function endCanceledPeriod(context: ServiceContext, item: DueSubscription, at: Date): Promise<boolean> {
  const { store } = context;
  const tenant = tenantOf(item);
  const subscription = await findSubscription(store.database, store.tables.schema, tenant, item.id);
  if (!subscription) return false;
  const ending =
    subscription.status !== 'CANCELED' &&
    subscription.cancel_at_period_end &&
    Date.parse(subscription.current_period_end) <= at.getTime();
  const opened = ending && (await openFinalInvoice(context, tenant, subscription, at));
  const { events } = await subscriptionAggregate.handle(
    store,
    item.id,
    { type: 'EndCanceledPeriod', data: { subscriptionId: item.id, now: at } },
    { ...tenant, occurredAt: at },
  );
  return opened || events.length > 0;
}

/**
 * Opens the final invoice in one transaction: the customer's usage of the subscription's metered
 * prices before the period's end, not billed and not paid by credits, is claimed for it and
 * billed as on a renewal, with the customer's balance; no such usage, no invoice. Another engine
 * that opens it first holds the usage's rows, so this one claims nothing and opens nothing.
 */
async function openFinalInvoice(context: ServiceContext, tenant: Tenant, subscription: Subscription, at: Date) {
  if (!billsUsage(subscription)) return false;
  return context.store.transaction((tx) =>
    openFinalInvoiceIn(tx, context, tenant, subscription, { at, periodEnd: subscription.current_period_end }),
  );
}

/** `openFinalInvoice` in the caller's transaction, the invoice's period ending at `periodEnd`. */
async function openFinalInvoiceIn(
  tx: EventStoreTransaction,
  context: ServiceContext,
  tenant: Tenant,
  subscription: Subscription,
  { at, periodEnd }: { at: Date; periodEnd: string },
): Promise<boolean> {
  const { store } = context;
  const { schema } = store.tables;
  const invoiceId = finalInvoiceId(subscription.id);
  if ((await findInvoicesById(tx, schema, [invoiceId])).length > 0) return false;
  const lines = await claimUsageLines(tx, schema, tenant, subscription, invoiceId);
  if (lines.length === 0) return false;
  const [number] = await nextInvoiceNumbers(tx, schema, tenant, 1);
  const command: OpenInvoice = {
    type: 'OpenInvoice',
    data: {
      invoiceId,
      number: number!,
      ...tenant,
      customerId: subscription.customer_id,
      subscriptionId: subscription.id,
      lines,
      discountAmount: 0,
      periodStart: usageStart(subscription),
      periodEnd,
      now: at,
    },
  };
  await withCustomerBalance(tx, store, tenant, command);
  const events = invoiceAggregate.decide(command, invoiceAggregate.initialState());
  const appended = await tx.append(invoiceAggregate.stream(invoiceId), events, {
    expectedVersion: 0,
    ...tenant,
    occurredAt: at,
  });
  await invoiceAggregate.project?.(tx, schema, appended.events, store);
  return true;
}

/**
 * Cancels a subscription now and bills its usage not billed yet on its final invoice at once
 * (`invoice_now`, as Stripe's), in one transaction: both happen, or neither. The final invoice is
 * then charged as one at a period's end (`chargeFinalInvoice`). Without metered usage to bill it
 * is a cancellation now. Refusals are the cancellation's (409 for one canceled already).
 */
export async function cancelNowWithFinalInvoice(context: ServiceContext, tenant: Tenant, id: string): Promise<void> {
  const { store } = context;
  const { schema } = store.tables;
  await store.transaction(async (tx) => {
    const subscription = await findSubscription(tx, schema, tenant, id);
    if (!subscription) throw notFound(`No such subscription: ${id}`);
    // On the subscription's test clock when it is on one, as every change asked of it.
    const at = await timeOn(tx, schema, tenant, subscription.test_clock, context.now);
    const who = { subscriptionId: id, ...tenant, now: at };
    await subscriptionAggregate.handleInTransaction(
      tx,
      store,
      id,
      { type: 'CancelSubscription', data: { ...who, atPeriodEnd: false } },
      { ...tenant, occurredAt: at },
    );
    if (billsUsage(subscription)) {
      await openFinalInvoiceIn(tx, context, tenant, subscription, { at, periodEnd: at.toISOString() });
    }
  });
}

/**
 * Charges the next attempt of an ended subscription's final invoice on the customer's saved
 * card, keyed by invoice and attempt as renewals are: paid, or declined and tried again on the
 * dunning schedule (after the last, uncollectible unless the organization keeps invoices open).
 * The subscription stays ended either way. A transfer to wait for is shown on the invoice; an
 * answer that is lost is asked again under the same key by the next sweep, never read as a
 * decline.
 */
export async function chargeFinalInvoice(context: ServiceContext, item: DueSubscription, at: Date): Promise<boolean> {
  const { store } = context;
  const tenant = tenantOf(item);
  const invoice = await findInvoice(store.database, store.tables.schema, tenant, finalInvoiceId(item.id));
  if (!invoice || !isDue(invoice, at)) return false;
  const attempt = invoice.attempt_count + 1;
  const card = await savedCardOf(context, invoice.customer_id);
  const [outcome] = await chargeAttempts(context, tenant, [{ tenant, card, invoice, attempt }]);
  if (outcome!.status === 'pending') {
    await recordPaymentPending(context, tenant, invoice, attempt, outcome!.payment_instructions, at);
    throw awaitingTransfer(invoice.id, attempt);
  }
  if (outcome!.status === 'unknown') throw unknownOutcome(invoice.id, attempt);
  const { nextAttemptAt, unpaid } = await afterAnswer(context, tenant, invoice, attempt, outcome!);
  await recordAttempts(context, [
    {
      tenant,
      subscriptionId: null,
      invoice,
      attempt,
      outcome: outcome!,
      nextAttemptAt,
      unpaid: unpaid === 'end' ? 'end' : null,
      now: at,
    },
  ]);
  return true;
}

const isDue = (invoice: Invoice, at: Date) =>
  invoice.status === 'open' &&
  invoice.next_payment_attempt !== null &&
  Date.parse(invoice.next_payment_attempt) <= at.getTime();
