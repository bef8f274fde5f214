import type { EventStore, EventStoreTransaction } from './event-store';
import { type AppendOptions, ExpectedVersionConflictError, type NewEvent, type RecordedEvent } from './types';

export interface Aggregate<State, Command, Event extends NewEvent> {
  initialState: () => State;
  evolve: (state: State, event: RecordedEvent) => State;
  decide: (command: Command, state: State) => Event[];
}

export interface HandleOptions extends Omit<AppendOptions, 'expectedVersion'> {
  /** Read models written in the same transaction as the new events. */
  project?: (tx: EventStoreTransaction, events: RecordedEvent[]) => Promise<void>;
  maxAttempts?: number;
}

/**
 * Read the stream, fold it, decide, append with the version read. When another writer got
 * there first, start again from the read: the decision is taken on the state it changes.
 */
export async function handleCommand<State, Command, Event extends NewEvent>(
  store: EventStore,
  stream: string,
  aggregate: Aggregate<State, Command, Event>,
  command: Command,
  options: HandleOptions,
): Promise<{ state: State; events: RecordedEvent[] }> {
  const maxAttempts = options.maxAttempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    const history = await store.readStream(stream);
    const state = history.reduce(aggregate.evolve, aggregate.initialState());
    const decided = aggregate.decide(command, state);
    try {
      const appended = await store.transaction(async (tx) => {
        const result = await tx.append(stream, decided, {
          ...options,
          expectedVersion: history.at(-1)?.stream_version ?? 0,
        });
        if (options.project && result.events.length > 0) await options.project(tx, result.events);
        return result;
      });
      return { state: appended.events.reduce(aggregate.evolve, state), events: appended.events };
    } catch (error) {
      if (!(error instanceof ExpectedVersionConflictError) || attempt >= maxAttempts) throw error;
    }
  }
}

/**
 * `handleCommand` inside a transaction that is already open, for Kafka effects that must
 * commit with their inbox row (`exactlyOnce`). The stream is read through the transaction, so
 * PGlite's single connection is never asked for a second one. A version conflict aborts the
 * whole transaction; the bus retries the message from the start.
 */
export async function handleCommandInTransaction<State, Command, Event extends NewEvent>(
  tx: EventStoreTransaction,
  store: EventStore,
  stream: string,
  aggregate: Aggregate<State, Command, Event>,
  command: Command,
  options: Omit<AppendOptions, 'expectedVersion'> & {
    project?: (tx: EventStoreTransaction, events: RecordedEvent[]) => Promise<void>;
  },
): Promise<{ state: State; events: RecordedEvent[] }> {
  const { rows } = await tx.query<{ type: string; data: Record<string, unknown>; stream_version: number }>(
    `SELECT type, data, stream_version FROM ${store.tables.events} WHERE stream_id = $1 ORDER BY stream_version`,
    [stream],
  );
  const history = rows.map((row) => ({ ...row }) as unknown as RecordedEvent);
  const state = history.reduce(aggregate.evolve, aggregate.initialState());
  const decided = aggregate.decide(command, state);
  const { project, ...appendOptions } = options;
  const result = await tx.append(stream, decided, {
    ...appendOptions,
    expectedVersion: rows.at(-1)?.stream_version ?? 0,
  });
  if (project && result.events.length > 0) await project(tx, result.events);
  return { state: result.events.reduce(aggregate.evolve, state), events: result.events };
}
