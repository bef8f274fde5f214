import {
  type Environment,
  type Invoice,
  type SubscriptionSchedule,
  type SubscriptionSwitch,
  type SwitchPreview,
  ApiError,
  conflict,
  livemodeOf,
  newId,
  type ChargeTrade,
} from '@billing/contracts';
import { paidTrade } from '../../invoices/invoice';
import type { EventStoreTransaction } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { periodEnd } from '../../calendar/period';
import { type ChargeOutcome, chargeSavedCard, paymentPending } from '../../charges/charge';
import { findInvoice } from '../../invoices/read-model';
import type { ProrationBehavior } from '../../proration/classify';
import type { PlannedPreview } from '../../proration/preview';
import { currentSubscription } from '../../subscriptions/queries';
import { inTransaction, lockForSwitch, onSubscription, run } from './commands';
import { type Existing, type SwitchRequest, planFor } from './facts';
import {
  type SwitchRecording,
  prorationLines,
  recordBalance,
  recordProratedSwitch,
  recordSwitchCredit,
  switchChargeKey,
} from './record';

// Plan switching as billing does it (docs/plan-switching.md): the preview and the switch. With
// `schedules.ts`, the in-process API the routes and the customer portal call.

/** `GET /v1/subscriptions/{id}/switch-preview`: computes the preview, changes nothing. */
export async function previewSwitch(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  subscriptionId: string,
  targetProductId: string,
  options: { prorationBehavior?: ProrationBehavior } = {},
): Promise<SwitchPreview> {
  const tenant = { organization, environment };
  const { planned } = await planFor(context, tenant, subscriptionId, { targetProductId, ...options });
  return { ...planned.preview, livemode: livemodeOf(environment) };
}

/**
 * `POST /v1/subscriptions/{id}/switch`: performs what the preview says. Immediate and charging:
 * holds the subscription (`StartSwitch`, at its stream version: a second switch meanwhile is
 * 409), charges the saved card once (key `<invoice>:1`), then records the paid proration
 * invoice and the new plan in one transaction; a decline releases the hold and answers 402,
 * the subscription unchanged. Scheduled: the one pending schedule. The others change the plan now.
 */
export async function performSwitch(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  subscriptionId: string,
  request: SwitchRequest,
): Promise<SubscriptionSwitch> {
  const tenant: Tenant = { organization, environment };
  const { state, target, planned, now, card } = await planFor(context, tenant, subscriptionId, request);
  const { preview, treatment } = planned;
  refuseUnlessProceeding(state, preview);
  const who = { subscriptionId, ...tenant, now };
  const periodStart = state.subscription.current_period_start;
  const answer = async (
    invoice: Invoice | null,
    schedule: SubscriptionSchedule | null,
  ): Promise<SubscriptionSwitch> => ({
    object: 'subscription_switch',
    switch_type: preview.switch_type,
    execution_mode: preview.execution_mode,
    subscription: await currentSubscription(context, tenant, subscriptionId),
    invoice,
    schedule,
    proration: preview.proration,
    livemode: livemodeOf(environment),
  });

  if (treatment === 'schedule') {
    const { state: after } = await onSubscription(context, tenant, {
      type: 'ScheduleSwitch',
      data: { ...who, scheduleId: newId('subscriptionSchedule'), target, switchType: planned.type, periodStart },
    });
    const schedule = after.status === 'Existing' ? (after.schedule ?? null) : null;
    return answer(null, schedule);
  }

  if (treatment === 'swap' || treatment === 'defer') {
    const switchId = newId('subscriptionSchedule').replace('sub_sched_', 'sw_');
    await inTransaction(context, async (tx) => {
      await lockForSwitch(tx, context, state.subscription);
      await run(tx, context, tenant, {
        type: 'SwitchPlanNow',
        data: { ...who, switchId: null, target, newPeriod: false, periodStart },
      });
      await recordBalance(tx, context, tenant, state.subscription, planned.balanceChange, switchId, null, now);
      const credit = preview.proration?.credit_amount ?? 0;
      await recordSwitchCredit(tx, context, tenant, state.subscription, credit, switchId, now);
    });
    return answer(null, null);
  }

  // prorate: a new period of the new plan starts now.
  const invoiceId = newId('invoice');
  const switchId = `sw_${invoiceId.slice(3)}`;
  const proration = preview.proration!;
  const period = {
    start: now.toISOString(),
    end: periodEnd(now, target.interval, target.interval_count).toISOString(),
  };
  const recording: SwitchRecording = {
    lines: prorationLines(state.subscription, target, planned, period),
    amount_discount: target.price - proration.charge_amount,
    balance_change: planned.balanceChange,
  };
  const record = (tx: EventStoreTransaction, held: boolean, charge?: ChargeTrade) =>
    recordProratedSwitch(tx, context, tenant, {
      subscription: state.subscription,
      switchId,
      held,
      invoiceId,
      target,
      amount: planned.chargeNow,
      recording,
      charge,
      now,
    });

  if (planned.chargeNow === 0) {
    await inTransaction(context, async (tx) => {
      await lockForSwitch(tx, context, state.subscription);
      await record(tx, false);
    });
    return answer(
      (await findInvoice(context.store.database, context.store.tables.schema, tenant, invoiceId)) ?? null,
      null,
    );
  }

  // Hold the subscription, then charge, then record. A crash after the hold is settled later
  // (`settleHeldSwitch`), asking the charge again with the same key, so it is charged once.
  await inTransaction(context, async (tx) => {
    await lockForSwitch(tx, context, state.subscription);
    await run(tx, context, tenant, {
      type: 'StartSwitch',
      // Real time, not the subscription's clock (a test clock may stand still): the hold's age.
      data: {
        ...who,
        switchId,
        invoiceId,
        target,
        amount: planned.chargeNow,
        periodStart,
        recording,
        heldAt: new Date(),
      },
    });
  });
  let outcome: ChargeOutcome;
  try {
    outcome = await chargeSavedCard(context, tenant, {
      card: card!,
      amount: planned.chargeNow,
      key: switchChargeKey(invoiceId),
      pending: null,
    });
  } catch (error) {
    // Refused before anything was charged (checkout answered 4xx, or is not configured).
    await onSubscription(context, tenant, {
      type: 'FailSwitch',
      data: { ...who, switchId, failure: { code: 'processor_unavailable', message: 'The charge could not be made' } },
    });
    throw error;
  }
  if (outcome.status === 'unknown' || outcome.status === 'pending') {
    // Never read as "not charged": the hold stays until the sweep learns the outcome (settleHeldSwitch).
    // A transfer to wait for is refused before a switch (`pays_by_transfer`), so this is a lost answer.
    throw paymentPending(
      `The charge for switching ${subscriptionId} got no answer from the processor; it is being confirmed, and nothing more will be charged`,
      [{ switch_id: switchId, invoice_id: invoiceId }],
    );
  }
  if (outcome.status === 'declined') {
    await onSubscription(context, tenant, {
      type: 'FailSwitch',
      data: { ...who, switchId, failure: { code: outcome.code, message: outcome.message } },
    });
    throw new ApiError(402, 'payment_required', `The card was declined: ${outcome.message}`, [
      { code: outcome.code, message: outcome.message },
    ]);
  }
  await inTransaction(context, (tx) => record(tx, true, paidTrade(outcome)));
  return answer(
    (await findInvoice(context.store.database, context.store.tables.schema, tenant, invoiceId)) ?? null,
    null,
  );
}

function refuseUnlessProceeding(state: Existing, preview: PlannedPreview): void {
  if (preview.can_proceed) return;
  const reason = preview.blocking_reason!;
  if (reason === 'no_payment_method') {
    throw new ApiError(402, 'payment_required', 'The customer has no saved card to pay the switch with', [
      { code: 'no_payment_method', message: 'The customer has no saved card' },
    ]);
  }
  const details: Record<string, unknown> = { blocking_reason: reason };
  let message = `Subscription ${state.subscription.id} cannot switch: ${reason}`;
  if (reason === 'fixed_amount_plan') {
    message = `Subscription ${state.subscription.id} is paid by a card plan the processor charges a fixed amount each period (ECPay): it cannot switch plans`;
  }
  if (reason === 'pays_by_transfer') {
    message = `Subscription ${state.subscription.id} is paid by transfer (an ATM account or store code per invoice): it cannot switch plans, which is charged at once`;
  }
  if (reason === 'pending_schedule' && state.schedule) {
    details.schedule_id = state.schedule.id;
    message = `Subscription ${state.subscription.id} has a pending schedule ${state.schedule.id}: cancel it before switching again`;
  }
  if (reason === 'switch_in_progress' && state.switching) {
    details.switch_id = state.switching.switch_id;
    throw paymentPending(
      `Subscription ${state.subscription.id} is switching: its charge is being confirmed, and nothing more will be charged`,
      [details],
    );
  }
  throw conflict(message, [details]);
}
