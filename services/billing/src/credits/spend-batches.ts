import { customerError, newId } from '@billing/contracts';
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
import { ledgerSettingsOf } from './ledger-settings';
import { creditTables } from './read-model';

// Spends written together (docs/credits.md, Spends in batches): the spends that arrive while a
// batch is being written are decided and written as the next batch, in one transaction, so a
// busy process pays one read, one append and one commit for many spends instead of each. A
// batch begins as soon as the last one ends; one spend alone is a batch of one.

export type SpendRequest = { amount: number; idempotencyKey: string; metadata: Record<string, string> | null };

/** When a spend is decided (its customer's clock) and under which of its tenant's settings. */
export type SpendTerms = { now: Date; settings: LedgerSettings };

/**
 * One spend as the route or the usage worker asks for it. The route leaves its terms to the
 * batch, which reads them for all its spends at once; the usage worker has them already.
 */
export type SpendOrder = {
  tenant: Tenant;
  customerId: string;
  request: SpendRequest;
  terms?: SpendTerms;
};

/** The time on each of the tenant's customers among `ids` (its test clock's, or now); the others are absent. */
export type CustomerTimes = (tenant: Tenant, ids: string[]) => Promise<Map<string, Date>>;

/** What a batch needs of the service: its event store, and its customers' clocks (given: customers is above credits). */
export type SpendContext = { store: EventStore; customerTimes: CustomerTimes };

type Waiting = SpendOrder & { resolve: (spend: SpendRecord) => void; reject: (error: unknown) => void };

/** A ledger as this process last read or wrote it; the next append checks it by its version. */
export type Ledger = { state: CreditsState; version: number; snapshotAt: number };

/** Spends decided and written in one transaction at most. */
export const SPEND_BATCH_LIMIT = 100;
/** Ledgers a process remembers between batches (least recently used first out). */
const LEDGERS_REMEMBERED = 10_000;

/** The spends of one event store (one service's schema), written a batch at a time. */
export class SpendBatches {
  private readonly waiting: Waiting[] = [];
  private readonly ledgers = new Map<string, Ledger>();
  private writing = false;

  private readonly store: EventStore;

  constructor(private readonly context: SpendContext) {
    this.store = context.store;
  }

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

  private async decideAndAppend(batch: Waiting[]): Promise<Outcome[]> {
    const [earlier, ledgers, terms] = await Promise.all([
      earlierSpends(this.store, batch),
      this.ledgersOf(batch),
      termsOf(this.context, batch),
    ]);
    const { outcomes, changes } = decideAll(batch, terms, earlier, ledgers);
    if (changes.size > 0) await this.append(changes);
    return outcomes;
  }

  /** Every changed ledger's events in one append, with the read models and the snapshots due. */
  private async append(changes: Map<string, LedgerChange>): Promise<void> {
    const changed = [...changes.entries()];
    const appends: StreamAppend[] = changed.map(([stream, { ledger, tenant, now, events }]) => ({
      stream,
      events,
      options: { ...tenantOf(tenant), occurredAt: now, expectedVersion: ledger.version },
    }));
    const versions = await this.store.transaction(async (tx) => {
      const appended = await tx.appendMany(appends);
      const recorded: RecordedEvent[] = appended.flatMap((result) => result.events);
      await creditsAggregate.project?.(tx, this.store.tables.schema, recorded, this.store);
      for (const [index, [stream, { ledger, state }]] of changed.entries()) {
        const version = appended[index]!.nextExpectedVersion;
        if (!snapshotDue(ledger, version)) continue;
        const snapshot = { streamVersion: version, snapshotVersion: CREDITS_SNAPSHOT_VERSION, state };
        await this.store.saveSnapshot(stream, snapshot, tx);
      }
      return appended.map((result) => result.nextExpectedVersion);
    });
    changed.forEach(([stream, { ledger, state }], index) => {
      const version = versions[index]!;
      this.remember(stream, { state, version, snapshotAt: snapshotDue(ledger, version) ? version : ledger.snapshotAt });
    });
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

type Outcome = { spend: SpendRecord } | { error: unknown };

/** What a batch does to one ledger: the state after its spends, and their events. */
type LedgerChange = { ledger: Ledger; state: CreditsState; tenant: Tenant; now: Date; events: CreditsEvent[] };

const snapshotDue = (ledger: Ledger, version: number) => version - ledger.snapshotAt >= CREDITS_SNAPSHOT_EVERY;

/**
 * Each spend decided in arrival order on its ledger as the batch's earlier spends left it. A key
 * spent earlier in the batch answers that spend: the ledger's window of keys is shorter than a
 * batch. The ledger's last spend gives its events' time.
 */
export function decideAll(
  batch: SpendOrder[],
  terms: Array<SpendTerms | { error: unknown }>,
  earlier: Map<string, SpendRecord>,
  ledgers: Map<string, Ledger>,
): { outcomes: Outcome[]; changes: Map<string, LedgerChange> } {
  const changes = new Map<string, LedgerChange>();
  const outcomes = batch.map((order, index): Outcome => {
    const on = terms[index]!;
    if ('error' in on) return on;
    const stream = creditsAggregate.stream(order.customerId);
    const ledger = ledgers.get(stream)!;
    const change = changes.get(stream) ?? {
      ledger,
      state: ledger.state,
      tenant: order.tenant,
      now: on.now,
      events: [],
    };
    const key = order.request.idempotencyKey;
    const before = earlier.get(spendKeyOf(order.customerId, key)) ?? null;
    try {
      const events = creditsAggregate.decide(
        {
          type: 'SpendCredits',
          data: {
            customerId: order.customerId,
            spendId: newId('creditSpend'),
            ...order.request,
            earlier: before,
            ...on.settings,
            now: on.now,
          },
        },
        change.state,
      );
      const state = events.reduce(creditsAggregate.evolve, change.state);
      const spend = before ?? state.spends[key];
      if (!spend) throw new Error('the spend was not recorded');
      if (events.length > 0)
        changes.set(stream, { ...change, state, now: on.now, events: [...change.events, ...events] });
      earlier.set(spendKeyOf(order.customerId, key), spend);
      return { spend };
    } catch (error) {
      return { error };
    }
  });
  return { outcomes, changes };
}

/**
 * The terms of each spend: given, or read for the batch's spends without them, per tenant, in
 * one statement for the customers' clocks and one for the settings. A customer that is not the
 * tenant's is the API's 404.
 */
async function termsOf(context: SpendContext, batch: SpendOrder[]): Promise<Array<SpendTerms | { error: unknown }>> {
  const open = batch.filter((order) => !order.terms);
  const byTenant = new Map<string, { tenant: Tenant; customers: Set<string> }>();
  for (const { tenant, customerId } of open) {
    const key = tenantKeyOf(tenant);
    const entry = byTenant.get(key) ?? { tenant, customers: new Set<string>() };
    entry.customers.add(customerId);
    byTenant.set(key, entry);
  }
  const read = new Map(
    await Promise.all(
      [...byTenant.entries()].map(async ([key, { tenant, customers }]) => {
        const [times, settings] = await Promise.all([
          context.customerTimes(tenant, [...customers]),
          ledgerSettingsOf(context.store, tenant),
        ]);
        return [key, { times, settings }] as const;
      }),
    ),
  );
  return batch.map((order) => {
    if (order.terms) return order.terms;
    const { times, settings } = read.get(tenantKeyOf(order.tenant))!;
    const now = times.get(order.customerId);
    if (!now) return { error: customerError('resource_not_found', `No such customer: ${order.customerId}`) };
    return { now, settings };
  });
}

const tenantKeyOf = ({ organization, environment }: Tenant) => `${organization}\u0000${environment}`;

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

/**
 * The spends already made with the keys `$1` (customers) and `$2` (keys), one lookup by the
 * primary key each (LATERAL, kept apart from the outer query by its LIMIT): a join is planned
 * once, while the table is small, as a scan of every key, which the prepared statement then
 * keeps however many keys there are.
 */
export const earlierSpendsQuery = (spendKeys: string): string =>
  `SELECT k.customer_id, k.idempotency_key, k.spend_id, k.amount, k.metadata, k.balance_after, k.spent_at
   FROM unnest($1::text[], $2::text[]) AS wanted(customer_id, idempotency_key)
   CROSS JOIN LATERAL (SELECT * FROM ${spendKeys} k
     WHERE k.customer_id = wanted.customer_id AND k.idempotency_key = wanted.idempotency_key LIMIT 1) k`;

/** The spends already made with the batch's keys, by customer and key, in one statement. */
async function earlierSpends(store: EventStore, batch: SpendOrder[]): Promise<Map<string, SpendRecord>> {
  const { rows } = await store.database.query<SpendKeyRow>(
    earlierSpendsQuery(creditTables(store.tables.schema).spendKeys),
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
