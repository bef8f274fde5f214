import {
  type AggregateHandleInTransactionOptions,
  type CommandResult,
  type DefinedAggregate,
  type EventStore,
  type EventStoreTransaction,
  type NewEvent,
  defineAggregate,
} from '@billing/eventstore';

/**
 * An aggregate that takes several commands at once: each is decided on the state the ones
 * before it lead to, and all their events are appended together (one read of the stream and one
 * append instead of one each). The same streams, events, read models and snapshots as `aggregate`.
 */
export function inSequence<State, Command, Event extends NewEvent>(
  aggregate: DefinedAggregate<State, Command, Event>,
): DefinedAggregate<State, Command[], Event> {
  return defineAggregate({
    stream: aggregate.stream,
    events: aggregate.events,
    initialState: aggregate.initialState,
    evolve: aggregate.evolve,
    snapshot: aggregate.snapshot,
    project: aggregate.project,
    decide: (commands, state) => {
      const decided: Event[] = [];
      for (const command of commands) {
        const events = aggregate.decide(command, state);
        state = events.reduce(aggregate.evolve, state);
        decided.push(...events);
      }
      return decided;
    },
  });
}

/**
 * The first events of the stream of an id made just now (`newId`): decided on the initial
 * state and appended at version 0 without reading the empty stream first, with the aggregate's
 * read models. Should the stream exist after all, the append fails on its version and the
 * transaction with it.
 */
export async function startStream<State, Command, Event extends NewEvent>(
  tx: EventStoreTransaction,
  store: EventStore,
  aggregate: DefinedAggregate<State, Command, Event>,
  id: string,
  command: Command,
  options: AggregateHandleInTransactionOptions,
): Promise<CommandResult<State>> {
  const { alsoProject, ...appendOptions } = options;
  const initial = aggregate.initialState();
  const { events } = await tx.append(aggregate.stream(id), aggregate.decide(command, initial), {
    ...appendOptions,
    expectedVersion: 0,
  });
  if (events.length > 0) {
    await aggregate.project?.(tx, store.tables.schema, events, store);
    await alsoProject?.(tx, events);
  }
  return { state: aggregate.fold(events, initial), events };
}
