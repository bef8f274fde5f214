import type { EventStore } from '@billing/eventstore';
import type { SpendRecord } from './ledger';
import { type SpendContext, SpendBatches, type SpendOrder } from './spend-batches';

export type { SpendOrder, SpendRequest, SpendTerms } from './spend-batches';

/**
 * One writer of spends per event store (per service's schema), shared by the API and usage; made
 * with the first caller's context, whose clock query every caller of a store hands alike.
 */
const batchesOfStore = new WeakMap<EventStore, SpendBatches>();

function batchesOf(context: SpendContext): SpendBatches {
  let batches = batchesOfStore.get(context.store);
  if (!batches) {
    batches = new SpendBatches(context);
    batchesOfStore.set(context.store, batches);
  }
  return batches;
}

/**
 * Spends once per key (docs/credits.md, Idempotency): a key seen before answers its spend from
 * `credit_spend_keys` (or `idempotency_key_mismatch`), read before deciding, so the ledger's state
 * need not hold every key. A repeat that raced past that read is refused by the table's primary
 * key in its append's transaction, and answers the spend that got in. Written with the other
 * spends of this process that arrive meanwhile (`SpendBatches`). Throws `insufficient_credits`,
 * and the customers' 404 for a customer that is not the tenant's.
 */
export function spendCredits(context: SpendContext, order: SpendOrder): Promise<SpendRecord> {
  return batchesOf(context).spend(order);
}
