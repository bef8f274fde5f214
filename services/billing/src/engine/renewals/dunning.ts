import type { Invoice } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { invoiceAggregate } from '../../invoices/aggregate';
import type { InvoiceCommand } from '../../invoices/invoice';
import { billingSettingsOf } from '../../settings/aggregate';
import { subscriptionAggregate } from '../../subscriptions/aggregate';
import type { SubscriptionCommand } from '../../subscriptions/decide';
import type { AttemptRecord } from './attempts';
import type { Renewal } from './open';

// Dunning: a declined renewal is tried again on the organization's schedule, the subscription
// PAST_DUE meanwhile; after the last try it ends, or stays PAST_DUE until a new card pays
// (new-card.ts), as the organization's billing settings say (docs/billing-settings.md).

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
 * What a renewal attempt's answer leads to: a decline is tried again at `nextRetryAt`, the
 * subscription PAST_DUE meanwhile; the last one makes the invoice uncollectible and ends the
 * subscription, unless the organization keeps it PAST_DUE (`after_final_failure`).
 */
export async function afterAnswer(
  context: ServiceContext,
  tenant: Tenant,
  invoice: Invoice,
  attempt: number,
  outcome: AttemptRecord['outcome'],
): Promise<Pick<AttemptRecord, 'nextAttemptAt' | 'unpaid'>> {
  const settings =
    outcome.status === 'declined'
      ? await billingSettingsOf(context.store, tenant.organization, tenant.environment)
      : null;
  const nextAttemptAt = settings ? nextRetryAt(invoice.created_at, attempt, settings.dunning.retry_days) : null;
  const ends = nextAttemptAt === null && settings?.dunning.after_final_failure !== 'past_due';
  return { nextAttemptAt, unpaid: ends ? 'end' : 'past_due' };
}

/**
 * How a renewal goes on from its invoice as it is: paid, the subscription enters the period
 * (`changed`); closed unpaid, it ends; an attempt failed, it is PAST_DUE; the next attempt not
 * due yet: nothing now (`unchanged`); otherwise the next attempt is charged (`charge`).
 */
export async function nextStep(
  context: ServiceContext,
  { tenant, subscription }: Renewal,
  invoice: Invoice,
  at: Date,
): Promise<'changed' | 'unchanged' | 'charge'> {
  const subscriptionId = subscription.id;
  if (invoice.status === 'paid') {
    const periodStart = invoice.period_start;
    await onSubscription(context, tenant, {
      type: 'RenewPaid',
      data: { subscriptionId, periodStart, invoiceId: invoice.id, now: at },
    });
    return 'changed';
  }
  const end = async () => {
    await onSubscription(context, tenant, { type: 'CancelForNonPayment', data: { subscriptionId, now: at } });
    return 'changed' as const;
  };
  if (invoice.status !== 'open') return end();
  if (invoice.attempt_count > 0 && subscription.status !== 'PAST_DUE') {
    await onSubscription(context, tenant, {
      type: 'MarkPastDue',
      data: { subscriptionId, invoiceId: invoice.id, now: at },
    });
  }
  if (invoice.next_payment_attempt && Date.parse(invoice.next_payment_attempt) > at.getTime()) return 'unchanged';
  // Dunning ended with the subscription left PAST_DUE: only a new card tries again (new-card.ts).
  if (invoice.attempt_count > 0 && !invoice.next_payment_attempt) {
    // The last attempt was recorded, and the end that follows it was not (a crash): end it now.
    const settings = await billingSettingsOf(context.store, tenant.organization, tenant.environment);
    if (settings.dunning.after_final_failure === 'past_due') return 'unchanged';
    await onInvoice(context, tenant, invoice.id, { type: 'MarkUncollectible', data: { now: at } });
    return end();
  }
  return 'charge';
}

function onInvoice(context: ServiceContext, tenant: Tenant, invoiceId: string, command: InvoiceCommand) {
  const { store } = context;
  return invoiceAggregate.handle(store, invoiceId, command, { ...tenant, occurredAt: command.data.now });
}

function onSubscription(context: ServiceContext, tenant: Tenant, command: SubscriptionCommand) {
  const { store } = context;
  return subscriptionAggregate.handle(store, command.data.subscriptionId, command, {
    ...tenant,
    occurredAt: command.data.now,
  });
}
