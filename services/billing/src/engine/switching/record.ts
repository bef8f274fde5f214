import type { ChargeTrade, InvoiceLine, ScheduledPlan, Subscription } from '@billing/contracts';
import { type EventStoreTransaction, handleCommandInTransaction } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { customerBalanceAggregate } from '../../customers/aggregate';
import { apportionCredit } from '../../invoices/credit';
import { invoiceAggregate } from '../../invoices/aggregate';
import { invoiceChargeKey } from '../../invoices/payment';
import { nextInvoiceNumber } from '../../invoices/read-model';
import type { PlannedSwitch } from '../../proration/preview';
import { run } from './commands';
import { paidInvoicesOfPeriod } from './facts';

// What a switch records, in its transaction: the new plan, the paid proration invoice, the credit
// of the unused period taken from the period's paid invoices, and the customer balance.

/** What recording a held switch needs, kept with the hold so that a later settlement can record it. */
export type SwitchRecording = { lines: InvoiceLine[]; amount_discount: number; balance_change: number };

/** The new plan from `now` and the paid proration invoice (and any balance), in the caller's transaction. */
export async function recordProratedSwitch(
  tx: EventStoreTransaction,
  context: ServiceContext,
  tenant: Tenant,
  input: {
    subscription: Subscription;
    switchId: string;
    held: boolean;
    invoiceId: string;
    target: ScheduledPlan;
    amount: number;
    recording: SwitchRecording;
    /** Who charged the switch and under what trade (none: nothing charged, or not named). */
    charge?: ChargeTrade;
    now: Date;
  },
): Promise<void> {
  const { subscription, switchId, invoiceId, now } = input;
  const credit = creditOfLines(input.recording.lines);
  await recordSwitchCredit(tx, context, tenant, subscription, credit, switchId, now);
  const { state: switched } = await run(tx, context, tenant, {
    type: 'SwitchPlanNow',
    data: {
      subscriptionId: subscription.id,
      ...tenant,
      now,
      switchId: input.held ? switchId : null,
      target: input.target,
      newPeriod: true,
      periodStart: subscription.current_period_start,
    },
  });
  if (switched.status !== 'Existing') throw new Error(`subscription ${subscription.id} vanished`);
  const period = { start: switched.subscription.current_period_start, end: switched.subscription.current_period_end };
  await invoiceAggregate.handleInTransaction(
    tx,
    context.store,
    invoiceId,
    {
      type: 'RecordPaidInvoice',
      data: {
        invoiceId,
        number: await nextInvoiceNumber(tx, context.store.tables.schema, tenant),
        ...tenant,
        customerId: subscription.customer_id,
        subscriptionId: subscription.id,
        orderId: null,
        checkoutSessionId: null,
        lines: input.recording.lines,
        amountDiscount: input.recording.amount_discount,
        amountTotal: input.amount,
        periodStart: period.start,
        periodEnd: period.end,
        paidAt: now.toISOString(),
        charge: input.charge,
        now,
      },
    },
    { ...tenant, occurredAt: now },
  );
  await recordBalance(tx, context, tenant, subscription, input.recording.balance_change, switchId, invoiceId, now);
}

/**
 * The switch credited `credit` TWD of the unused period: the paid invoices of that period give
 * it, so that none of it can be refunded as well (`apportionCredit`), in the switch's transaction.
 */
export async function recordSwitchCredit(
  tx: EventStoreTransaction,
  context: ServiceContext,
  tenant: Tenant,
  subscription: Subscription,
  credit: number,
  switchId: string,
  now: Date,
): Promise<void> {
  if (credit <= 0) return;
  const { schema } = context.store.tables;
  const invoices = await paidInvoicesOfPeriod(tx, schema, tenant, subscription);
  for (const part of apportionCredit(invoices, credit)) {
    await invoiceAggregate.handleInTransaction(
      tx,
      context.store,
      part.invoiceId,
      { type: 'RecordInvoiceCredit', data: { key: `switch:${switchId}`, amount: part.amount, now } },
      { ...tenant, occurredAt: now },
    );
  }
}

/** The credit of the unused period a proration invoice's lines carry (its `proration` line). */
const creditOfLines = (lines: InvoiceLine[]) =>
  -lines.filter((line) => line.kind === 'proration' && line.amount < 0).reduce((sum, line) => sum + line.amount, 0);

/** The switch's change of the customer balance (`balanceChange` TWD), once per switch. */
export async function recordBalance(
  tx: EventStoreTransaction,
  context: ServiceContext,
  tenant: Tenant,
  subscription: Subscription,
  balanceChange: number,
  switchId: string,
  invoiceId: string | null,
  now: Date,
) {
  if (balanceChange === 0) return;
  await customerBalanceAggregate.handleInTransaction(
    tx,
    context.store,
    subscription.customer_id,
    {
      type: 'ChangeBalance',
      data: {
        customer_id: subscription.customer_id,
        ...tenant,
        amount: balanceChange,
        reason: balanceChange > 0 ? 'switch_credit' : 'switch_deferred_charge',
        subscription_id: subscription.id,
        invoice_id: invoiceId,
        key: `switch:${switchId}`,
        now,
      },
    },
    { ...tenant, occurredAt: now },
  );
}

/** The proration invoice's lines: the unused days' credit, the new plan's period, any surplus to the balance. */
export function prorationLines(
  subscription: Subscription,
  target: ScheduledPlan,
  planned: PlannedSwitch,
  period: { start: string; end: string },
): InvoiceLine[] {
  const proration = planned.preview.proration!;
  const every = target.interval_count === 1 ? target.interval : `${target.interval_count} ${target.interval}s`;
  const lines: InvoiceLine[] = [];
  if (proration.credit_amount > 0) {
    lines.push({
      description: proration.credit_description,
      amount: -proration.credit_amount,
      period: { start: subscription.current_period_start, end: subscription.current_period_end },
      kind: 'proration',
    });
  }
  lines.push({ description: `${target.name} (every ${every})`, amount: target.price, period, kind: 'subscription' });
  if (planned.balanceChange > 0) {
    lines.push({
      description: 'Unused credit to the customer balance',
      amount: planned.balanceChange,
      period,
      kind: 'customer_balance',
    });
  }
  return lines;
}

/** The processor idempotency key of a switch's one charge: its proration invoice, attempt 1. */
export const switchChargeKey = (invoiceId: string) => invoiceChargeKey(invoiceId, 1);
