import type { EventStore } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import type { LedgerSettings } from './decide';
import type { SpendRecord } from './ledger';
import { SpendBatches, type SpendRequest } from './spend-batches';

export type { SpendRequest } from './spend-batches';

/** One writer of spends per event store (per service's schema), shared by the API and usage. */
const batchesOfStore = new WeakMap<EventStore, SpendBatches>();

function batchesOf(store: EventStore): SpendBatches {
  let batches = batchesOfStore.get(store);
  if (!batches) {
    batches = new SpendBatches(store);
    batchesOfStore.set(store, batches);
  }
  return batches;
}

/**
 * Spends once per key (docs/credits.md, Idempotency): a key seen before answers its spend from
 * `credit_spend_keys` (or `idempotency_key_mismatch`), read before deciding, so the ledger's state
 * need not hold every key. A repeat that raced past that read is refused by the table's primary
 * key in its append's transaction, and answers the spend that got in. Written with the other
 * spends of this process that arrive meanwhile (`SpendBatches`). Throws `insufficient_credits`.
 */
export function spendCredits(
  store: EventStore,
  tenant: Tenant,
  customerId: string,
  now: Date,
  request: SpendRequest,
  settings: LedgerSettings,
): Promise<SpendRecord> {
  return batchesOf(store).spend({ tenant, customerId, now, request, settings });
}
