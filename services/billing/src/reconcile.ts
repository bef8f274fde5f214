import { paidTrade } from './invoices/invoice';
import { type ServiceContext, positiveNumberSetting } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { chargeStatus, chargesRecorded } from './charges/charge';
import { type PendingCharge, stalePendingCharges } from './charges/pending';
import { type FirstPeriodDetail, recordLateFirstCharge, releaseLateFirstCharge } from './direct/create';
import { recordLateInvoiceCharge } from './engine/renewals/renew';

/**
 * How long a charge may go without a recorded outcome before the reconciler asks the processor
 * for it: `BILLING_PENDING_CHARGE_MS`, 30 s, well past the 5 s a charge call may last.
 */
const pendingMsOf = (context: ServiceContext) =>
  positiveNumberSetting(context.config, 'BILLING_PENDING_CHARGE_MS', 30_000);

/**
 * The payment janitor (docs/lost-answers.md): every charge asked more than
 * `BILLING_PENDING_CHARGE_MS` ago whose outcome was never recorded (its answer was lost, or
 * billing stopped between the charge and its record) is asked of the processor by its key, and
 * its outcome recorded where the charge was meant, exactly once. One the processor cannot tell
 * about yet stays pending and is asked again at the next sweep. Returns how many it settled.
 */
export async function reconcilePendingCharges(context: ServiceContext): Promise<number> {
  const { database, tables } = context.store;
  const stale = await stalePendingCharges(database, tables.schema, pendingMsOf(context));
  let settled = 0;
  for (const pending of stale) {
    if (await reconcile(context, pending)) settled++;
  }
  return settled;
}

async function reconcile(context: ServiceContext, pending: PendingCharge): Promise<boolean> {
  const tenant: Tenant = { organization: pending.organization, environment: pending.environment };
  // A first period's key is never asked again by anyone else: give it up if it was never charged.
  const release = pending.purpose === 'first_period';
  const outcome = await chargeStatus(context, tenant, pending.key, { release });
  // A transfer the customer has not made yet: the renewal's scheduler asks its key again.
  if (outcome.status === 'unknown' || outcome.status === 'pending') return false;
  if (pending.purpose === 'invoice') {
    // A decline, or a key never charged, is left to the next scheduled attempt, which asks it again.
    if (outcome.status !== 'not_found') {
      await recordLateInvoiceCharge(context, tenant, pending.subject, pending.attempt, outcome);
    }
  } else {
    const detail = pending.detail as FirstPeriodDetail;
    if (outcome.status === 'succeeded') {
      await recordLateFirstCharge(context, tenant, pending.subject, pending.amount, detail, paidTrade(outcome));
    } else {
      await releaseLateFirstCharge(context, detail, pending.subject);
    }
  }
  await chargesRecorded(context, [pending.key]);
  context.logger.info(
    { key: pending.key, purpose: pending.purpose, outcome: outcome.status },
    'pending charge settled',
  );
  return true;
}
