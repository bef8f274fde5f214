import type { DomainEventEnvelope } from '@billing/contracts';
import type { EventStore, EventStoreTransaction, SqlExecutor } from '@billing/eventstore';
import type { BatchHandler, ConsumedMessage, MessageHandler } from './types';

export type Effect = (event: DomainEventEnvelope, tx: EventStoreTransaction, message: ConsumedMessage) => Promise<void>;

/** The effect of several new messages at once, in their order, in one transaction. */
export type BatchEffect = (messages: ConsumedMessage[], tx: EventStoreTransaction) => Promise<void>;

export interface ExactlyOnceOptions {
  /**
   * The event types the effect acts on. Any other message is acknowledged without touching the
   * database: no transaction and no inbox row for events a consumer ignores anyway.
   */
  only?: readonly string[];
  /**
   * Applies a batch's new messages in one go (fewer statements than `effect` per message); it
   * must do what `effect` would do for each, in order. Without it a batch runs `effect` on each.
   */
  batchEffect?: BatchEffect;
}

/**
 * Records event ids in the consumer's inbox in one statement and returns those that were not
 * there: the messages to act on. Duplicates within `eventIds` count once.
 */
export async function recordInInbox(
  sql: SqlExecutor,
  store: EventStore,
  consumer: string,
  eventIds: string[],
): Promise<Set<string>> {
  const { rows } = await sql.query<{ event_id: string }>(
    `INSERT INTO ${store.tables.processedMessages} (consumer, event_id)
     SELECT $1, id FROM unnest($2::text[]) AS id ON CONFLICT DO NOTHING RETURNING event_id`,
    [consumer, eventIds],
  );
  return new Set(rows.map((row) => row.event_id));
}

/** The messages whose ids are in `fresh`, each id once, in order. */
function newMessages(messages: ConsumedMessage[], fresh: Set<string>): ConsumedMessage[] {
  const left = new Set(fresh);
  return messages.filter((message) => left.delete(message.value.id));
}

/**
 * Wraps an effect so that a redelivered event changes nothing: the event id is recorded in the
 * consumer's inbox in the same transaction as the effect. If the effect fails, both roll back
 * and the retry runs it again.
 *
 * The handler also takes a batch (`batch`): one transaction and one inbox INSERT for the
 * messages of a partition that the bus has at once, the effects of the new ones in order. If any
 * fails, the whole batch rolls back and the bus hands the messages over one by one.
 */
export function exactlyOnce(
  store: EventStore,
  consumer: string,
  effect: Effect,
  options: ExactlyOnceOptions = {},
): MessageHandler & { batch: BatchHandler } {
  const only = options.only && new Set(options.only);
  const applyAll: BatchEffect =
    options.batchEffect ??
    (async (messages, tx) => {
      for (const message of messages) await effect(message.value, tx, message);
    });
  const handler = async (message: ConsumedMessage) => {
    if (only && !only.has(message.value.type)) return;
    await store.transaction(async (tx) => {
      const inserted = await tx.query(
        `INSERT INTO ${store.tables.processedMessages} (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
        [consumer, message.value.id],
      );
      if (inserted.rowCount === 0) return;
      await effect(message.value, tx, message);
    });
  };
  const batch: BatchHandler = async (messages) => {
    const wanted = only ? messages.filter((message) => only.has(message.value.type)) : messages;
    if (wanted.length === 0) return;
    await store.transaction(async (tx) => {
      const fresh = await recordInInbox(
        tx,
        store,
        consumer,
        wanted.map((message) => message.value.id),
      );
      if (fresh.size > 0) await applyAll(newMessages(wanted, fresh), tx);
    });
  };
  return Object.assign(handler, { batch });
}
