import type { SqlExecutor } from './database';
import type { EventStore, EventStoreTransaction, Snapshot } from './event-store';
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
  /**
   * Opts in to snapshots (docs/decisions/0010-snapshots.md): the version of `evolve` and of the
   * state's shape. Bump it whenever either changes; snapshots of another version are ignored.
   * Only for states that round-trip through JSON exactly: plain objects, arrays, strings,
   * finite numbers, booleans and null (no Date, Map, Set or undefined values).
   */
  snapshotVersion?: number;
  /** Events folded on top of the last snapshot before the next is written (DEFAULT_SNAPSHOT_EVERY). */
  snapshotEvery?: number;
}

/**
 * A snapshot every 100 events: a command then reads one snapshot row and at most about 100
 * events, and a snapshot write (one upsert in the command's transaction) comes with 1% of them.
 */
export const DEFAULT_SNAPSHOT_EVERY = 100;

/** A stream folded: its state, the version it is at, and where the snapshot it began from was. */
interface Loaded<State> {
  state: State;
  version: number;
  snapshotAt: number;
}

/** Reads a whole stream, for aggregates without snapshots. */
type StreamReader = () => Promise<RecordedEvent[]>;

/**
 * The snapshot (when the aggregate opts in and one of its version exists) and the events after
 * it, read together; without snapshots, the whole stream.
 */
async function load<State>(
  store: EventStore,
  sql: SqlExecutor | undefined,
  stream: string,
  aggregate: Aggregate<State, unknown, NewEvent>,
  readWhole: StreamReader,
): Promise<Loaded<State>> {
  const { snapshot, events: tail } =
    aggregate.snapshotVersion === undefined
      ? { snapshot: undefined, events: await readWhole() }
      : await store.readFromSnapshot<State>(stream, aggregate.snapshotVersion, sql);
  const snapshotAt = snapshot?.streamVersion ?? 0;
  const state = tail.reduce(aggregate.evolve, snapshot ? snapshot.state : aggregate.initialState());
  return { state, version: tail.at(-1)?.stream_version ?? snapshotAt, snapshotAt };
}

/** Writes a snapshot of `state` at `version` when enough events were folded since the last one. */
async function snapshotIfDue<State>(
  store: EventStore,
  sql: SqlExecutor,
  stream: string,
  aggregate: Aggregate<State, unknown, NewEvent>,
  loaded: Loaded<State>,
  state: State,
  version: number,
): Promise<void> {
  if (!snapshotDue(aggregate, loaded, version)) return;
  const snapshot: Snapshot = { streamVersion: version, snapshotVersion: aggregate.snapshotVersion!, state };
  await store.saveSnapshot(stream, snapshot, sql);
}

type SnapshotPolicy = Pick<Aggregate<unknown, unknown, NewEvent>, 'snapshotVersion' | 'snapshotEvery'>;

function snapshotDue(aggregate: SnapshotPolicy, loaded: Pick<Loaded<unknown>, 'snapshotAt'>, version: number) {
  if (aggregate.snapshotVersion === undefined) return false;
  return version - loaded.snapshotAt >= (aggregate.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY);
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
 * Read the stream (from its snapshot when the aggregate opts in), fold it, decide, append with
 * the version read, and take a new snapshot in the same transaction when one is due. When
 * another writer got there first, start again from the read after a jittered pause: the decision is taken on the
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
  const anyAggregate = aggregate as Aggregate<State, unknown, NewEvent>;
  const readWhole: StreamReader = () => store.readStream(stream);
  for (let attempt = 1; ; attempt++) {
    const loaded = await load(store, undefined, stream, anyAggregate, readWhole);
    const decided = aggregate.decide(command, loaded.state);
    try {
      const appended = await store.transaction(async (tx) => {
        const result = await tx.append(stream, decided, { ...appendOptions, expectedVersion: loaded.version });
        if (project && result.events.length > 0) await project(tx, result.events);
        if (snapshotDue(anyAggregate, loaded, result.nextExpectedVersion)) {
          const state = result.events.reduce(aggregate.evolve, loaded.state);
          await snapshotIfDue(store, tx, stream, anyAggregate, loaded, state, result.nextExpectedVersion);
        }
        return result;
      });
      return { state: appended.events.reduce(aggregate.evolve, loaded.state), events: appended.events };
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
  const readWhole: StreamReader = async () => {
    const { rows } = await tx.query<{ type: string; data: Record<string, unknown>; stream_version: number }>(
      `SELECT type, data, stream_version FROM ${store.tables.events} WHERE stream_id = $1 ORDER BY stream_version`,
      [stream],
    );
    return rows.map((row) => ({ ...row }) as unknown as RecordedEvent);
  };
  const anyAggregate = aggregate as Aggregate<State, unknown, NewEvent>;
  const loaded = await load(store, tx, stream, anyAggregate, readWhole);
  const decided = aggregate.decide(command, loaded.state);
  const { project, ...appendOptions } = options;
  const result = await tx.append(stream, decided, { ...appendOptions, expectedVersion: loaded.version });
  if (project && result.events.length > 0) await project(tx, result.events);
  const state = result.events.reduce(aggregate.evolve, loaded.state);
  await snapshotIfDue(store, tx, stream, anyAggregate, loaded, state, result.nextExpectedVersion);
  return { state, events: result.events };
}
