import { type Environment } from '@billing/contracts';
import { paidTrade } from '../../invoices/invoice';
import { type ServiceContext, positiveNumberSetting } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { chargeStatus } from '../../charges/charge';
import { subscriptionsTable } from '../../subscriptions/read-model';
import { switchesTable } from '../../subscriptions/switch-read-model';
import { inTransaction, onSubscription } from './commands';
import { loadState } from './facts';
import { recordProratedSwitch, switchChargeKey } from './record';

// Switches that crashed between their hold and their recording (docs/plan-switching.md,
// "Concurrency and crashes"), settled by the sweep once the hold is old enough.

/** How long a switch may hold its subscription before it counts as abandoned (a crash): `BILLING_SWITCH_HOLD_MS`, 60 s. */
const holdMsOf = (context: ServiceContext) => positiveNumberSetting(context.config, 'BILLING_SWITCH_HOLD_MS', 60_000);

/**
 * Settles a switch that has held the subscription longer than `BILLING_SWITCH_HOLD_MS` (its
 * process crashed between the hold and the recording): asks the charge again with the same key
 * (the processor answers the first charge if there was one, so nothing is charged twice), then
 * records the switch as it was meant, or releases the hold on a decline. A switch still under way
 * is left alone. Returns whether it settled one.
 */
export async function settleHeldSwitch(
  context: ServiceContext,
  tenant: Tenant,
  subscriptionId: string,
): Promise<boolean> {
  const state = await loadState(context, tenant, subscriptionId);
  const held = state.switching;
  if (!held || Date.now() - Date.parse(held.held_at ?? held.started_at) < holdMsOf(context)) return false;
  const now = new Date(held.started_at);
  const who = { subscriptionId, ...tenant, now };
  const recording = held.recording;
  if (!recording) {
    // A hold from before holds kept their recording: nothing to record it from; released.
    await onSubscription(context, tenant, {
      type: 'FailSwitch',
      data: { ...who, switchId: held.switch_id, failure: { code: 'abandoned', message: 'The switch was interrupted' } },
    });
    return true;
  }
  // Asked, not charged again: a key never answered is given up at the processor, so this is final.
  const outcome = await chargeStatus(context, tenant, switchChargeKey(held.invoice_id), { release: true });
  if (outcome.status === 'unknown' || outcome.status === 'pending') return false;
  if (outcome.status === 'declined') {
    await onSubscription(context, tenant, {
      type: 'FailSwitch',
      data: { ...who, switchId: held.switch_id, failure: { code: outcome.code, message: outcome.message } },
    });
    return true;
  }
  await inTransaction(context, (tx) =>
    recordProratedSwitch(tx, context, tenant, {
      subscription: state.subscription,
      switchId: held.switch_id,
      held: true,
      invoiceId: held.invoice_id,
      target: held.target_plan,
      amount: held.amount,
      recording,
      charge: paidTrade(outcome),
      now,
    }),
  );
  return true;
}

/** The sweep's part: settles every hold older than `BILLING_SWITCH_HOLD_MS` (see `settleHeldSwitch`). */
export async function settleHeldSwitches(context: ServiceContext): Promise<number> {
  const { database, tables } = context.store;
  const { rows } = await database.query<{ subscription_id: string; organization: string; environment: Environment }>(
    `SELECT s.subscription_id, sub.organization, sub.environment
       FROM ${switchesTable(tables.schema)} s JOIN ${subscriptionsTable(tables.schema)} sub ON sub.id = s.subscription_id`,
  );
  let settled = 0;
  for (const { subscription_id, organization, environment } of rows) {
    if (await settleHeldSwitch(context, { organization, environment }, subscription_id)) settled++;
  }
  return settled;
}
