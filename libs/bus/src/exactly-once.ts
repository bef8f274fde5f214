import type { DomainEventEnvelope } from '@billing/contracts';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import type { ConsumedMessage, MessageHandler } from './types';

export type Effect = (event: DomainEventEnvelope, tx: EventStoreTransaction, message: ConsumedMessage) => Promise<void>;

export interface ExactlyOnceOptions {
  /**
   * The event types the effect acts on. Any other message is acknowledged without touching the
   * database: no transaction and no inbox row for events a consumer ignores anyway.
   */
  only?: readonly string[];
}

/**
 * Wraps an effect so that a redelivered event changes nothing: the event id is recorded in the
 * consumer's inbox in the same transaction as the effect. If the effect fails, both roll back
 * and the retry runs it again.
 */
export function exactlyOnce(
  store: EventStore,
  consumer: string,
  effect: Effect,
  options: ExactlyOnceOptions = {},
): MessageHandler {
  const only = options.only && new Set(options.only);
  return async (message) => {
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
}
