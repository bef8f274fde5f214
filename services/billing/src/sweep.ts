import { type ServiceContext, positiveNumberSetting, startPeriodic } from '@billing/runtime';
import { reconcilePendingCharges } from './reconcile';
import { expireDueCredits } from './engine/credit-expiries';
import { runEinvoiceWork } from './einvoices/worker';
import { runDueWork } from './engine/due-work';
import { settleHeldSwitches } from './engine/switching/settle';
import { drainClockRuns, resumeAdvancingClocks } from './engine/test-clock-advance';

export const DEFAULT_SWEEP_INTERVAL_MS = 30_000;

/**
 * The background sweep of time-driven work: what fell due by the service clock (trial ends,
 * period-end cancellations), and what a crash left unfinished: test-clock advances (also
 * resumed at once on start), plan switches that held their subscription past
 * BILLING_SWITCH_HOLD_MS, charges whose outcome was never recorded (`reconcile.ts`),
 * e-invoices to issue, void or allowance (`einvoices/worker.ts`), and credit grants past their
 * expiry (`engine/credit-expiries.ts`). Every
 * `BILLING_TRIAL_SWEEP_INTERVAL_MS` (default 30 s; the name predates the other work).
 */
export function startBillingSweep(context: ServiceContext): () => Promise<void> {
  const intervalMs = positiveNumberSetting(
    context.config,
    'BILLING_TRIAL_SWEEP_INTERVAL_MS',
    DEFAULT_SWEEP_INTERVAL_MS,
  );
  // An advance that a restart cut off runs again now, not a sweep interval later.
  const resumed = resumeAdvancingClocks(context).catch((err) =>
    context.logger.error({ err }, 'resuming test clock advances failed; the sweep retries'),
  );
  const stop = startPeriodic(async () => {
    await runDueWork(context);
    await resumeAdvancingClocks(context);
    await settleHeldSwitches(context);
    await reconcilePendingCharges(context);
    await runEinvoiceWork(context);
    await expireDueCredits(context);
  }, intervalMs);
  return async () => {
    await stop();
    await resumed;
    await drainClockRuns(context);
  };
}
