import type { EventStore, EventStoreTransaction } from './event-store';
import {
  type AppendOptions,
  ExpectedVersionConflictError,
  type NewEvent,
  type RecordedEvent,
  WriteConflictError,
} from './types';

export interface Aggregate<State, Command, Event extends NewEvent> {
  initialState: () => State;
  evolve: (state: State, event: RecordedEvent) => State;
  decide: (command: Command, state: State) => Event[];
}

export interface HandleOptions extends Omit<AppendOptions, 'expectedVersion'> {
  /** Read models written in the same transaction as the new events. */
  project?: (tx: EventStoreTransaction, events: RecordedEvent[]) => Promise<void>;
  /** Overrides of DEFAULT_RETRY_POLICY (tests; a command that must not wait). */
  retry?: Partial<RetryPolicy>;
  /** Shorthand for `retry.maxAttempts`. */
  maxAttempts?: number;
}

/**
 * How `handleCommand` meets concurrent writers of the same stream (docs/decisions/0005): a
 * version conflict, or PostgreSQL's serialization failure (40001) or deadlock (40P01), starts
 * again from the read after a pause drawn at random between 0 and
 * `min(maxDelayMs, baseDelayMs * 2^(attempt - 1))` ("full jitter"), so that writers that
 * collided do not collide again in step. After `maxAttempts` attempts it gives up with
 * `WriteConflictError`, which the services answer `409 conflict`.
 */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** In [0, 1); Math.random unless a test fixes it. */
  random: () => number;
  sleep: (ms: number) => Promise<void>;
}

/**
 * 10 attempts and at most about 1.3 s of pauses (0.65 s expected) in the worst case: 20
 * concurrent writers of one record nearly all get through well inside the gateway's write
 * timeout, and a hot record answers 409 rather than holding connections for ever.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 10,
  baseDelayMs: 5,
  maxDelayMs: 250,
  random: Math.random,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The pause before attempt `attempt + 1` after `attempt` failed (1-based). */
export function retryDelayMs(policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'random'>, attempt: number) {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(policy.random() * ceiling);
}

/** SQLSTATEs after which the whole transaction may simply run again. */
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);

/** A concurrent writer got in the way: the command may succeed when run again from the read. */
export function isRetryableWriteError(error: unknown): boolean {
  if (error instanceof ExpectedVersionConflictError) return true;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && RETRYABLE_SQLSTATES.has(code);
}

/**
 * Read the stream, fold it, decide, append with the version read. When another writer got
 * there first, start again from the read after a jittered pause: the decision is taken on the
 * state it changes. Bounded by `RetryPolicy`; then `WriteConflictError`.
 */
export async function handleCommand<State, Command, Event extends NewEvent>(
  store: EventStore,
  stream: string,
  aggregate: Aggregate<State, Command, Event>,
  command: Command,
  options: HandleOptions,
): Promise<{ state: State; events: RecordedEvent[] }> {
  const { project, retry, maxAttempts, ...appendOptions } = options;
  const policy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    ...retry,
  };
  for (let attempt = 1; ; attempt++) {
    const history = await store.readStream(stream);
    const state = history.reduce(aggregate.evolve, aggregate.initialState());
    const decided = aggregate.decide(command, state);
    try {
      const appended = await store.transaction(async (tx) => {
        const result = await tx.append(stream, decided, {
          ...appendOptions,
          expectedVersion: history.at(-1)?.stream_version ?? 0,
        });
        if (project && result.events.length > 0) await project(tx, result.events);
        return result;
      });
      return { state: appended.events.reduce(aggregate.evolve, state), events: appended.events };
    } catch (error) {
      if (!isRetryableWriteError(error)) throw error;
      if (attempt >= policy.maxAttempts) throw new WriteConflictError(stream, attempt, { cause: error });
      await policy.sleep(retryDelayMs(policy, attempt));
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
