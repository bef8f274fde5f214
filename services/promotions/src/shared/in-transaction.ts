import type { Aggregate, EventStore, EventStoreTransaction, NewEvent, RecordedEvent } from '@billing/eventstore';
import type { Environment } from '@billing/contracts';

/**
 * `handleCommand` inside a transaction that is already open, for Kafka effects that must
 * commit with their inbox row (`exactlyOnce`). The stream is read through the transaction, so
 * PGlite's single connection is never asked for a second one. A version conflict aborts the
 * whole transaction; the bus retries the message from the start.
 */
export async function handleInTransaction<State, Command, Event extends NewEvent>(
  tx: EventStoreTransaction,
  store: EventStore,
  stream: string,
  aggregate: Aggregate<State, Command, Event>,
  command: Command,
  options: {
    organization: string;
    environment: Environment;
    occurredAt: Date;
    project: (tx: EventStoreTransaction, events: RecordedEvent[]) => Promise<void>;
  },
): Promise<{ state: State; events: RecordedEvent[] }> {
  const { rows } = await tx.query<{ type: string; data: Record<string, unknown>; stream_version: number }>(
    `SELECT type, data, stream_version FROM ${store.tables.events} WHERE stream_id = $1 ORDER BY stream_version`,
    [stream],
  );
  const history = rows.map((row) => ({ ...row }) as unknown as RecordedEvent);
  const state = history.reduce(aggregate.evolve, aggregate.initialState());
  const decided = aggregate.decide(command, state);
  const result = await tx.append(stream, decided, {
    organization: options.organization,
    environment: options.environment,
    occurredAt: options.occurredAt,
    expectedVersion: rows.at(-1)?.stream_version ?? 0,
  });
  if (result.events.length > 0) await options.project(tx, result.events);
  return { state: result.events.reduce(aggregate.evolve, state), events: result.events };
}
