import { type Invoice, type Subscription, ApiError } from '@billing/contracts';
import { type EventStoreTransaction, handleCommand, handleCommandInTransaction } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import {
  type ChargeOutcome,
  chargeSavedCard,
  chargesRecorded,
  paymentPending,
  savedCardOf,
} from '../../charges/charge';
import { type InvoiceCommand, type OpenInvoice, invoiceAggregate, invoiceStream } from '../../invoices/invoice';
import { renewalInvoiceId } from '../../invoices/ids';
import { invoiceChargeKey } from '../../invoices/payment';
import { findInvoice, nextInvoiceNumber, projectInvoices } from '../../invoices/read-model';
import { type SubscriptionCommand, nextPeriodEndOf, subscriptionAggregate } from '../../subscriptions/decide';
import { periodDiscount } from '../../subscriptions/discount';
import { type DueSubscription, findSubscription } from '../../subscriptions/queries';
import { projectSubscriptions } from '../../subscriptions/read-model';
import { subscriptionStream } from '../../subscriptions/subscription';
import { billingSettingsOf } from '../../settings/settings';
import { timeOn } from '../../test-clocks/read-model';
import { afterSwitch, heldBySwitch, withCustomerBalance } from './switches';

const DAY_MS = 24 * 3600 * 1000;

/**
 * Dunning: after failed attempt `attempt` (1-based) of an invoice opened (and first charged) at
 * `openedAt`, the next try comes `retryDays[attempt - 1]` days after it (the organization's
 * billing settings, default 3, 5 and 7); null: that was the last.
 */
export function nextRetryAt(openedAt: string, attempt: number, retryDays: readonly number[]): Date | null {
  const days = retryDays[attempt - 1];
  return days === undefined ? null : new Date(Date.parse(openedAt) + days * DAY_MS);
}

/**
 * Renews a subscription whose period has ended, or retries its open invoice (dunning), at `at`
 * (the service clock, or its test clock). Every step is idempotent and recorded before the
 * next, so two engines or a crash anywhere charge once: the invoice is opened once (its id is
 * derived), each charge is keyed by invoice and attempt (a repeated key answers the first
 * charge), an attempt is recorded once, and the subscription moves only for its period.
 * Returns whether it did something. `batch.ts` takes the plain path of this (open,
 * charge attempt 1, paid, renewed) for many subscriptions at once: keep the two in step.
 */
export async function renewDue(context: ServiceContext, item: DueSubscription, at: Date): Promise<boolean> {
  const tenant: Tenant = { organization: item.organization, environment: item.environment };
  const subscription = await findSubscription(context.store.database, context.store.tables.schema, tenant, item.id);
  if (!subscription || !isDue(subscription, at)) return false;
  const periodStart = subscription.current_period_end;
  const invoiceId = renewalInvoiceId(subscription.id, periodStart);
  const invoice =
    (await findInvoice(context.store.database, context.store.tables.schema, tenant, invoiceId)) ??
    (await openInvoice(context, tenant, subscription, invoiceId, at));
  // A plan switch is charging: it ends soon, in a new period or as it was; then look again.
  if (!invoice) return afterSwitch(context, tenant, subscription.id, () => renewDue(context, item, at));
  if (invoice.status === 'paid') return settle(context, tenant, subscription, invoice, at);
  if (invoice.status !== 'open') return endForNonPayment(context, tenant, subscription, at);
  if (invoice.attempt_count > 0 && subscription.status !== 'PAST_DUE') {
    await onSubscription(context, tenant, {
      type: 'MarkPastDue',
      data: { subscriptionId: subscription.id, invoiceId, now: at },
    });
  }
  if (invoice.next_payment_attempt && Date.parse(invoice.next_payment_attempt) > at.getTime()) return false;
  // Dunning ended with the subscription left PAST_DUE: only a new card tries again (new-card.ts).
  if (invoice.attempt_count > 0 && !invoice.next_payment_attempt) {
    // The last attempt was recorded, and the end that follows it was not (a crash): end it now.
    const settings = await billingSettingsOf(context.store, tenant.organization, tenant.environment);
    if (settings.dunning.after_final_failure === 'past_due') return false;
    await onInvoice(context, tenant, invoiceId, { type: 'MarkUncollectible', data: { now: at } });
    return endForNonPayment(context, tenant, subscription, at);
  }

  const attempt = invoice.attempt_count + 1;
  const outcome = await charge(context, tenant, subscription.customer_id, invoice, attempt);
  if (outcome.status === 'unknown') throw unknownOutcome(invoiceId, attempt);
  const settings =
    outcome.status === 'declined'
      ? await billingSettingsOf(context.store, tenant.organization, tenant.environment)
      : null;
  const nextAttemptAt = settings ? nextRetryAt(invoice.created_at, attempt, settings.dunning.retry_days) : null;
  const { state } = await onInvoice(context, tenant, invoiceId, {
    type: 'RecordPaymentAttempt',
    data: { attempt, outcome, nextAttemptAt, now: at },
  });
  await chargesRecorded(context, [invoiceChargeKey(invoiceId, attempt)]);
  const recorded = state.status === 'Existing' ? state.invoice : invoice;
  if (recorded.status === 'paid') return settle(context, tenant, subscription, recorded, at);
  if (nextAttemptAt === null && settings?.dunning.after_final_failure !== 'past_due') {
    await onInvoice(context, tenant, invoiceId, { type: 'MarkUncollectible', data: { now: at } });
    return endForNonPayment(context, tenant, subscription, at);
  }
  await onSubscription(context, tenant, {
    type: 'MarkPastDue',
    data: { subscriptionId: subscription.id, invoiceId, now: at },
  });
  return true;
}

/**
 * A new default card was saved: charges the open invoice of a PAST_DUE subscription at once
 * with it, as attempt `attempt_count + 1` (key `<invoice>:<attempt>`, so a repeat never charges
 * twice), at `at` (the subscription's clock). Paid: the subscription enters the period, ACTIVE,
 * as a paid retry does (`invoice.paid`, `subscription.renewed`). Declined: the attempt is
 * counted and the scheduled retry, if any, stays. Returns the invoice as recorded.
 */
export async function retryOpenInvoice(
  context: ServiceContext,
  tenant: Tenant,
  subscription: Subscription,
  invoice: Invoice,
  at: Date,
): Promise<Invoice> {
  if (invoice.status !== 'open' || subscription.status !== 'PAST_DUE') return invoice;
  const attempt = invoice.attempt_count + 1;
  const outcome = await charge(context, tenant, subscription.customer_id, invoice, attempt);
  // Left open as it was: the reconciler records the charge once its outcome is known.
  if (outcome.status === 'unknown') return invoice;
  const nextAttemptAt =
    outcome.status === 'declined' && invoice.next_payment_attempt ? new Date(invoice.next_payment_attempt) : null;
  const { state } = await onInvoice(context, tenant, invoice.id, {
    type: 'RecordPaymentAttempt',
    data: { attempt, outcome, nextAttemptAt, now: at },
  });
  await chargesRecorded(context, [invoiceChargeKey(invoice.id, attempt)]);
  const recorded = state.status === 'Existing' ? state.invoice : invoice;
  if (recorded.status === 'paid') await settle(context, tenant, subscription, recorded, at);
  return recorded;
}

/** The renewal's charge got no answer: nothing is recorded, and the scheduler asks the same key again. */
function unknownOutcome(invoiceId: string, attempt: number): ApiError {
  return paymentPending(`The charge of invoice ${invoiceId}, attempt ${attempt}, got no answer; it is asked again`);
}

/** Live, not canceling at period end, and its period over (PAST_DUE: its open invoice decides). */
export function isDue(subscription: Subscription, at: Date): boolean {
  if (subscription.status === 'CANCELED' || subscription.cancel_at_period_end) return false;
  return Date.parse(subscription.current_period_end) <= at.getTime();
}

async function openInvoice(
  context: ServiceContext,
  tenant: Tenant,
  subscription: Subscription,
  invoiceId: string,
  at: Date,
): Promise<Invoice | null> {
  const { store } = context;
  const { schema } = store.tables;
  const state = await store
    .transaction(async (tx) => {
      const existing = await findInvoice(tx, schema, tenant, invoiceId);
      if (existing) return { invoice: existing };
      // Plan switching locks the same row to start a switch (engine/switching/commands.ts).
      if (await heldBySwitch(tx, schema, subscription)) return { invoice: null };
      const number = await nextInvoiceNumber(tx, schema, tenant);
      // The number's row lock queues every opener of the organization's invoices: one that
      // opened this invoice while we waited has committed. Then roll back, giving the number back.
      const meanwhile = await findInvoice(tx, schema, tenant, invoiceId);
      if (meanwhile) throw new OpenedMeanwhile(meanwhile);
      const command = openRenewalInvoice(subscription, invoiceId, tenant, number, at);
      await withCustomerBalance(tx, store, tenant, command);
      const { state: opened } = await handleCommandInTx(context, tx, tenant, invoiceId, command);
      if (opened.status === 'Empty') throw new Error(`invoice ${invoiceId} not opened`);
      return { invoice: opened.invoice };
    })
    .catch((error: unknown) => {
      if (error instanceof OpenedMeanwhile) return { invoice: error.invoice };
      throw error;
    });
  return state.invoice;
}

/** Rolls back the opening of an invoice that another engine opened first. */
class OpenedMeanwhile extends Error {
  constructor(readonly invoice: Invoice) {
    super(`invoice ${invoice.id} was opened meanwhile`);
  }
}

/** The command that opens the invoice of the subscription's next period (its plan's line, its coupon's discount). */
export function openRenewalInvoice(
  subscription: Subscription,
  invoiceId: string,
  tenant: Tenant,
  number: string,
  at: Date,
): OpenInvoice {
  const start = subscription.current_period_end;
  const end = nextPeriodEndOf(subscription);
  const every =
    subscription.interval_count === 1
      ? subscription.interval
      : `${subscription.interval_count} ${subscription.interval}s`;
  return {
    type: 'OpenInvoice',
    data: {
      invoiceId,
      number,
      ...tenant,
      customerId: subscription.customer_id,
      subscriptionId: subscription.id,
      lines: [
        {
          description: `${subscription.product.name} (every ${every})`,
          amount: subscription.price,
          period: { start, end },
          kind: 'subscription',
        },
      ],
      discountAmount: periodDiscount(subscription, start, end),
      periodStart: start,
      periodEnd: end,
      now: at,
    },
  };
}

/**
 * Charges the customer's saved card for attempt `attempt`, keyed `<invoice>:<attempt>`, noted
 * as pending until its outcome is recorded. An outcome that is not known is never "declined":
 * `unknown`, and the invoice is left as it was for the reconciler (docs/lost-answers.md).
 */
async function charge(
  context: ServiceContext,
  tenant: Tenant,
  customerId: string,
  invoice: Invoice,
  attempt: number,
): Promise<ChargeOutcome> {
  if (invoice.amount_due === 0) return { status: 'succeeded' };
  const card = await savedCardOf(context, customerId);
  if (!card) return { status: 'declined', code: 'no_payment_method', message: 'The customer has no saved card' };
  return chargeSavedCard(context, tenant, {
    card,
    amount: invoice.amount_due,
    key: invoiceChargeKey(invoice.id, attempt),
    pending: { purpose: 'invoice', subject: invoice.id, attempt },
  });
}

/**
 * The reconciler learned the outcome of attempt `attempt` of invoice `invoiceId` after its
 * answer was lost: a charge that succeeded is recorded as that attempt, and the subscription
 * enters the paid period, as a paid renewal; a decline is left for the next scheduled attempt,
 * which asks the same key and records it with its dunning step. An attempt recorded meanwhile
 * (the scheduler asked again) changes nothing.
 */
export async function recordLateInvoiceCharge(
  context: ServiceContext,
  tenant: Tenant,
  invoiceId: string,
  attempt: number,
  outcome: { status: 'succeeded' } | { status: 'declined'; code: string; message: string },
): Promise<void> {
  const { database, tables } = context.store;
  const invoice = await findInvoice(database, tables.schema, tenant, invoiceId);
  if (!invoice || invoice.status !== 'open' || invoice.attempt_count >= attempt || outcome.status !== 'succeeded')
    return;
  const subscription = invoice.subscription_id
    ? await findSubscription(database, tables.schema, tenant, invoice.subscription_id)
    : null;
  const at = subscription
    ? await timeOn(database, tables.schema, tenant, subscription.test_clock, context.now)
    : context.now();
  const { state } = await onInvoice(context, tenant, invoiceId, {
    type: 'RecordPaymentAttempt',
    data: { attempt, outcome, nextAttemptAt: null, now: at },
  });
  if (subscription && state.status === 'Existing' && state.invoice.status === 'paid') {
    await settle(context, tenant, subscription, state.invoice, at);
  }
}

/** The invoice of the next period is paid: the subscription enters it (once). */
async function settle(context: ServiceContext, tenant: Tenant, subscription: Subscription, invoice: Invoice, at: Date) {
  await onSubscription(context, tenant, {
    type: 'RenewPaid',
    data: { subscriptionId: subscription.id, periodStart: invoice.period_start, invoiceId: invoice.id, now: at },
  });
  return true;
}

async function endForNonPayment(context: ServiceContext, tenant: Tenant, subscription: Subscription, at: Date) {
  await onSubscription(context, tenant, {
    type: 'CancelForNonPayment',
    data: { subscriptionId: subscription.id, now: at },
  });
  return true;
}

function onInvoice(context: ServiceContext, tenant: Tenant, invoiceId: string, command: InvoiceCommand) {
  const { store } = context;
  return handleCommand(store, invoiceStream(invoiceId), invoiceAggregate, command, {
    ...tenant,
    occurredAt: command.data.now,
    project: (tx, events) => projectInvoices(tx, store.tables.schema, events),
  });
}

function handleCommandInTx(
  context: ServiceContext,
  tx: EventStoreTransaction,
  tenant: Tenant,
  invoiceId: string,
  command: InvoiceCommand,
) {
  const { store } = context;
  return handleCommandInTransaction(tx, store, invoiceStream(invoiceId), invoiceAggregate, command, {
    ...tenant,
    occurredAt: command.data.now,
    project: (inner, events) => projectInvoices(inner, store.tables.schema, events),
  });
}

function onSubscription(context: ServiceContext, tenant: Tenant, command: SubscriptionCommand) {
  const { store } = context;
  return handleCommand(store, subscriptionStream(command.data.subscriptionId), subscriptionAggregate, command, {
    ...tenant,
    occurredAt: command.data.now,
    project: (tx, events) => projectSubscriptions(tx, store.tables.schema, events),
  });
}
