import { newId } from '@billing/contracts';
import {
  type EventStore,
  type RecordedEvent,
  type StreamAppend,
  WriteConflictError,
  isRetryableWriteError,
  retryDelayMs,
  DEFAULT_RETRY_POLICY,
} from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { creditsAggregate } from './aggregate';
import type { LedgerSettings } from './decide';
import { CREDITS_MAX_ATTEMPTS } from './expire';
import {
  CREDITS_SNAPSHOT_EVERY,
  CREDITS_SNAPSHOT_VERSION,
  type CreditsEvent,
  type CreditsState,
  type SpendRecord,
} from './ledger';
import { creditTables } from './read-model';

// Spends written together (docs/credits.md, Spends in batches): the spends that arrive while a
// batch is being written are decided and written as the next batch, in one transaction, so a
// busy process pays one read, one append and one commit for many spends instead of each. A
// batch begins as soon as the last one ends; one spend alone is a batch of one.

export type SpendRequest = { amount: number; idempotencyKey: string; metadata: Record<string, string> | null };

/** One spend as the route or the usage worker asks for it. */
export type SpendOrder = {
  tenant: Tenant;
  customerId: string;
  now: Date;
  request: SpendRequest;
  settings: LedgerSettings;
};

type Waiting = SpendOrder & { resolve: (spend: SpendRecord) => void; reject: (error: unknown) => void };

/** A ledger as this process last read or wrote it; the next append checks it by its version. */
type Ledger = { state: CreditsState; version: number; snapshotAt: number };

/** Spends decided and written in one transaction at most. */
export const SPEND_BATCH_LIMIT = 100;
/** Ledgers a process remembers between batches (least recently used first out). */
const LEDGERS_REMEMBERED = 10_000;

/** The spends of one event store (one service's schema), written a batch at a time. */
export class SpendBatches {
  private readonly waiting: Waiting[] = [];
  private readonly ledgers = new Map<string, Ledger>();
  private writing = false;

  constructor(private readonly store: EventStore) {}

  /** The spend once written (or the earlier spend of its key); rejects with the spend's own refusal. */
  spend(order: SpendOrder): Promise<SpendRecord> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ ...order, resolve, reject });
      if (!this.writing) void this.writeWaiting();
    });
  }

  private async writeWaiting(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, SPEND_BATCH_LIMIT);
        await this.writeBatch(batch).catch((error: unknown) => batch.forEach((spend) => spend.reject(error)));
      }
    } finally {
      this.writing = false;
    }
  }

  /**
   * Decides every spend of `batch` on its ledger and writes them; when another writer changed
   * one of the ledgers (or took one of the keys) first, reads them again and decides again, as
   * `handleCommand` does for one command.
   */
  private async writeBatch(batch: Waiting[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const outcomes = await this.decideAndAppend(batch);
        outcomes.forEach((outcome, index) =>
          'spend' in outcome ? batch[index]!.resolve(outcome.spend) : batch[index]!.reject(outcome.error),
        );
        return;
      } catch (error) {
        if (!isRetryableWriteError(error) && !isSpendKeyTaken(error)) throw error;
        for (const { customerId } of batch) this.ledgers.delete(creditsAggregate.stream(customerId));
        if (attempt >= CREDITS_MAX_ATTEMPTS) {
          throw new WriteConflictError(creditsAggregate.stream(batch[0]!.customerId), attempt, { cause: error });
        }
        await DEFAULT_RETRY_POLICY.sleep(retryDelayMs(DEFAULT_RETRY_POLICY, Math.min(attempt, 6)));
      }
    }
  }

  private async decideAndAppend(batch: Waiting[]): Promise<Array<{ spend: SpendRecord } | { error: unknown }>> {
    const [earlier, ledgers] = await Promise.all([earlierSpends(this.store, batch), this.ledgersOf(batch)]);
    const decided = new Map<
      string,
      { ledger: Ledger; state: CreditsState; order: SpendOrder; events: CreditsEvent[] }
    >();
    const outcomes = batch.map((order) => {
      const stream = creditsAggregate.stream(order.customerId);
      const entry = decided.get(stream) ?? {
        ledger: ledgers.get(stream)!,
        state: ledgers.get(stream)!.state,
        order,
        events: [],
      };
      decided.set(stream, entry);
      const key = order.request.idempotencyKey;
      // A key spent earlier in this batch counts as spent: the ledger's window of keys is shorter than a batch.
      const before = earlier.get(spendKeyOf(order.customerId, key)) ?? null;
      try {
        const events = creditsAggregate.decide(
          {
            type: 'SpendCredits',
            data: {
              customerId: order.customerId,
              now: order.now,
              spendId: newId('creditSpend'),
              ...order.request,
              earlier: before,
              ...order.settings,
            },
          },
          entry.state,
        );
        entry.state = events.reduce(creditsAggregate.evolve, entry.state);
        entry.events.push(...events);
        entry.order = order;
        const spend = before ?? entry.state.spends[key];
        if (!spend) throw new Error('the spend was not recorded');
        earlier.set(spendKeyOf(order.customerId, key), spend);
        return { spend };
      } catch (error) {
        return { error };
      }
    });
    const changed = [...decided.entries()].filter(([, entry]) => entry.events.length > 0);
    if (changed.length === 0) return outcomes;
    const appends: StreamAppend[] = changed.map(([stream, { ledger, order, events }]) => ({
      stream,
      events,
      // The ledger's last spend of the batch gives its events' time and tenant.
      options: { ...tenantOf(order.tenant), occurredAt: order.now, expectedVersion: ledger.version },
    }));
    const results = await this.store.transaction(async (tx) => {
      const appended = await tx.appendMany(appends);
      const recorded: RecordedEvent[] = appended.flatMap((result) => result.events);
      await creditsAggregate.project?.(tx, this.store.tables.schema, recorded, this.store);
      for (const [index, [stream, entry]] of changed.entries()) {
        const version = appended[index]!.nextExpectedVersion;
        if (version - entry.ledger.snapshotAt < CREDITS_SNAPSHOT_EVERY) continue;
        const snapshot = { streamVersion: version, snapshotVersion: CREDITS_SNAPSHOT_VERSION, state: entry.state };
        await this.store.saveSnapshot(stream, snapshot, tx);
      }
      return appended;
    });
    changed.forEach(([stream, entry], index) => {
      const version = results[index]!.nextExpectedVersion;
      const snapshotAt =
        version - entry.ledger.snapshotAt >= CREDITS_SNAPSHOT_EVERY ? version : entry.ledger.snapshotAt;
      this.remember(stream, { state: entry.state, version, snapshotAt });
    });
    return outcomes;
  }

  /**
   * The ledgers of the batch's customers as they are now, in one statement: a remembered one
   * brought up to date with the events after it (usually none), the others from their snapshot.
   */
  private async ledgersOf(batch: Waiting[]): Promise<Map<string, Ledger>> {
    const streams = [...new Set(batch.map((order) => creditsAggregate.stream(order.customerId)))];
    const wanted = streams.map((stream) => ({ stream, after: this.ledgers.get(stream)?.version }));
    const read = await this.store.readManyFromSnapshot<CreditsState>(wanted, CREDITS_SNAPSHOT_VERSION);
    const ledgers = new Map<string, Ledger>();
    for (const [stream, { snapshot, events }] of read) {
      const known = this.ledgers.get(stream);
      const from = known ?? {
        state: snapshot?.state,
        version: snapshot?.streamVersion ?? 0,
        snapshotAt: snapshot?.streamVersion ?? 0,
      };
      const state = creditsAggregate.fold(events, from.state);
      const ledger = { state, version: events.at(-1)?.stream_version ?? from.version, snapshotAt: from.snapshotAt };
      this.remember(stream, ledger);
      ledgers.set(stream, ledger);
    }
    return ledgers;
  }

  private remember(stream: string, ledger: Ledger): void {
    this.ledgers.delete(stream); // moved to the end: the most recently used
    this.ledgers.set(stream, ledger);
    if (this.ledgers.size > LEDGERS_REMEMBERED) this.ledgers.delete(this.ledgers.keys().next().value!);
  }
}

const tenantOf = ({ organization, environment }: Tenant) => ({ organization, environment });

const spendKeyOf = (customerId: string, key: string) => `${customerId}\u0000${key}`;

const isSpendKeyTaken = (error: unknown) =>
  typeof error === 'object' &&
  error !== null &&
  (error as { code?: unknown }).code === '23505' &&
  String((error as { constraint?: unknown }).constraint ?? '').startsWith('credit_spend_keys');

type SpendKeyRow = {
  customer_id: string;
  idempotency_key: string;
  spend_id: string;
  amount: string;
  metadata: Record<string, string> | null;
  balance_after: string;
  spent_at: Date;
};

/** The spends already made with the batch's keys, by customer and key, in one statement. */
async function earlierSpends(store: EventStore, batch: SpendOrder[]): Promise<Map<string, SpendRecord>> {
  const { rows } = await store.database.query<SpendKeyRow>(
    `SELECT k.customer_id, k.idempotency_key, k.spend_id, k.amount, k.metadata, k.balance_after, k.spent_at
     FROM unnest($1::text[], $2::text[]) AS wanted(customer_id, idempotency_key)
     JOIN ${creditTables(store.tables.schema).spendKeys} k
       ON k.customer_id = wanted.customer_id AND k.idempotency_key = wanted.idempotency_key`,
    [batch.map((order) => order.customerId), batch.map((order) => order.request.idempotencyKey)],
  );
  return new Map(
    rows.map((row) => [
      spendKeyOf(row.customer_id, row.idempotency_key),
      {
        spend_id: row.spend_id,
        amount: Number(row.amount),
        metadata: row.metadata,
        balance_after: Number(row.balance_after),
        spent_at: new Date(row.spent_at).toISOString(),
      },
    ]),
  );
}
