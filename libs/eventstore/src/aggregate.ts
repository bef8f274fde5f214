import { type Aggregate, type HandleOptions, handleCommand, handleCommandInTransaction } from './command-handler';
import type { EventStore, EventStoreTransaction } from './event-store';
import type { StreamEvents } from './stream-events';
import type { AppendOptions, NewEvent, RecordedEvent } from './types';

/**
 * An aggregate's read models, written in the transaction of every append to its streams; given
 * the store too, for what must happen in that transaction on other streams.
 */
export type Projector = (
  tx: EventStoreTransaction,
  schema: string,
  events: RecordedEvent[],
  store: EventStore,
) => Promise<void>;

/** Read models of one command, written after the aggregate's own in the same transaction. */
export type ExtraProjector = (tx: EventStoreTransaction, events: RecordedEvent[]) => Promise<void>;

/** What an aggregate is: its pure decider, the streams and events it keeps, its read models. */
export interface AggregateDefinition<State, Command, Event extends NewEvent> {
  /** The stream of the aggregate with this id: `<type>-<id>`. */
  stream: (id: string) => string;
  events: StreamEvents<Event>;
  initialState: () => State;
  evolve: (state: State, event: Event) => State;
  decide: (command: Command, state: State) => Event[];
  /**
   * Opts in to snapshots (docs/decisions/0010-snapshots.md): `version` is that of `evolve` and
   * of the state's shape, bumped whenever either changes; a snapshot every `every` events
   * (DEFAULT_SNAPSHOT_EVERY). Only for states that round-trip through JSON exactly.
   */
  snapshot?: { version: number; every?: number };
  /** Given the store's schema. */
  project?: Projector;
}

/** `handleCommand`'s options, the aggregate's read models in place of `project`. */
export interface AggregateHandleOptions extends Omit<HandleOptions, 'project'> {
  alsoProject?: ExtraProjector;
}

export type AggregateHandleInTransactionOptions = Omit<AppendOptions, 'expectedVersion'> & {
  alsoProject?: ExtraProjector;
};

export type CommandResult<State> = { state: State; events: RecordedEvent[] };

/**
 * An aggregate ready to run: a decider (`deciderSpec` tests this very object) that also runs
 * commands against the store, with `handleCommand`'s retries, snapshots and transactions.
 */
export interface DefinedAggregate<State, Command, Event extends NewEvent> extends AggregateDefinition<
  State,
  Command,
  Event
> {
  /** The id of one of this aggregate's streams; undefined for another kind of stream. */
  idOf(stream: string): string | undefined;
  /** Recorded events folded onto `from` (the initial state); events of other types are skipped. */
  fold(events: RecordedEvent[], from?: State): State;
  /** `handleCommand` on the stream of `id`. */
  handle(
    store: EventStore,
    id: string,
    command: Command,
    options: AggregateHandleOptions,
  ): Promise<CommandResult<State>>;
  /** `handleCommandInTransaction` on the stream of `id`, inside `tx`. */
  handleInTransaction(
    tx: EventStoreTransaction,
    store: EventStore,
    id: string,
    command: Command,
    options: AggregateHandleInTransactionOptions,
  ): Promise<CommandResult<State>>;
}

/**
 * One declaration per aggregate, e.g.
 *
 *     export const couponAggregate = defineAggregate({
 *       stream: couponStream,
 *       events: couponEvents,
 *       initialState,
 *       evolve,
 *       decide,
 *       project: projectCoupons,
 *     });
 *
 *     const { state } = await couponAggregate.handle(store, couponId, command, {
 *       organization,
 *       environment,
 *       occurredAt,
 *     });
 *
 * `stream('')` must be the prefix of every stream it names, which `idOf` relies on.
 */
export function defineAggregate<State, Command, Event extends NewEvent>(
  definition: AggregateDefinition<State, Command, Event>,
): DefinedAggregate<State, Command, Event> {
  const { stream, events, evolve, snapshot, project } = definition;
  const prefix = stream('');
  if (stream('id') !== `${prefix}id`) throw new Error(`streams must be a prefix and the id: ${stream('id')}`);

  const evolveRecorded = (state: State, recorded: RecordedEvent): State => {
    const event = events.of(recorded);
    return event ? evolve(state, event) : state;
  };
  const stored: Aggregate<State, Command, Event> = {
    initialState: definition.initialState,
    evolve: evolveRecorded,
    decide: definition.decide,
    snapshotVersion: snapshot?.version,
    snapshotEvery: snapshot?.every,
  };
  const projectorFor = (store: EventStore, alsoProject?: ExtraProjector): ExtraProjector | undefined =>
    project || alsoProject
      ? async (tx, appended) => {
          await project?.(tx, store.tables.schema, appended, store);
          await alsoProject?.(tx, appended);
        }
      : undefined;

  return {
    ...definition,
    idOf: (name) => (name.startsWith(prefix) ? name.slice(prefix.length) : undefined),
    fold: (recorded, from = definition.initialState()) => recorded.reduce(evolveRecorded, from),
    handle: (store, id, command, { alsoProject, ...options }) =>
      handleCommand(store, stream(id), stored, command, { ...options, project: projectorFor(store, alsoProject) }),
    handleInTransaction: (tx, store, id, command, { alsoProject, ...options }) =>
      handleCommandInTransaction(tx, store, stream(id), stored, command, {
        ...options,
        project: projectorFor(store, alsoProject),
      }),
  };
}
