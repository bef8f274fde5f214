import { type ServiceContext, startPeriodic } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { settleAtProcessor } from './create';
import { findPendingRefunds } from './read-model';
import { settlePayuniVerifications } from '../payments/payuni-verifications';

/** A request asks the processor at once; the sweep only takes refunds pending for longer than this. */
export const STALE_REFUND_MS = 60_000;

/**
 * Settles refunds the processor never answered (it failed, or checkout stopped between holding
 * the amount and asking): asks again under the refund's id, which the processor answers with
 * the first refund if it made one, and records the answer. Idempotent. Returns the ids settled.
 */
export async function settlePendingRefunds(context: ServiceContext): Promise<string[]> {
  const { store, now, logger } = context;
  const before = new Date(now().getTime() - STALE_REFUND_MS);
  const settled: string[] = [];
  for (const pending of await findPendingRefunds(store.database, store.tables.schema, before)) {
    try {
      const refund = await settleAtProcessor(context, pending);
      if (refund && refund.status !== 'pending') settled.push(refund.id);
    } catch (err) {
      logger.error({ err, refund_id: pending.id }, 'settling a pending refund failed; the next sweep tries again');
    }
  }
  return settled;
}

/**
 * Every `CHECKOUT_SWEEP_INTERVAL_MS`, like the expiry sweep: pending refunds, and the NT$1 that
 * verified a card through PAYUNi not given back yet (payuni-verifications.ts).
 */
export function startRefundSweep(context: ServiceContext): () => Promise<void> {
  const sweep = async () => {
    await settlePendingRefunds(context);
    await settlePayuniVerifications(context);
  };
  return startPeriodic(sweep, dependenciesOf(context).sweepIntervalMs);
}
