import { type Aggregate, type EventStoreTransaction, type NewEvent, type RecordedEvent } from '@billing/eventstore';

/**
 * An aggregate that takes several commands at once: each is decided on the state the ones
 * before it lead to, and all their events are appended together (one read of the stream and one
 * append instead of one each). Only for aggregates whose `evolve` reads an event's `type` and
 * `data` alone, as every billing aggregate's does: the events folded here are not recorded yet.
 */
export function inSequence<State, Command, Event extends NewEvent>(
  aggregate: Aggregate<State, Command, Event>,
): Aggregate<State, Command[], Event> {
  return {
    ...aggregate,
    decide: (commands, state) => {
      const decided: Event[] = [];
      for (const command of commands) {
        const events = aggregate.decide(command, state);
        state = events.reduce((folded, event) => aggregate.evolve(folded, event as unknown as RecordedEvent), state);
        decided.push(...events);
      }
      return decided;
    },
  };
}

/**
 * The first events of a stream whose id was made just now (`newId`): decided on the initial
 * state and appended at version 0 without reading the empty stream first. Should the stream
 * exist after all, the append fails on its version and the transaction with it.
 */
export async function startStream<State, Command, Event extends NewEvent>(
  tx: EventStoreTransaction,
  stream: string,
  aggregate: Aggregate<State, Command, Event>,
  command: Command,
  options: {
    organization: string;
    environment: 'SANDBOX' | 'PRODUCTION';
    occurredAt: Date;
    project?: (tx: EventStoreTransaction, events: RecordedEvent[]) => Promise<void>;
  },
): Promise<{ state: State; events: RecordedEvent[] }> {
  const { project, ...appendOptions } = options;
  const initial = aggregate.initialState();
  const { events } = await tx.append(stream, aggregate.decide(command, initial), {
    ...appendOptions,
    expectedVersion: 0,
  });
  if (project && events.length > 0) await project(tx, events);
  return { state: events.reduce(aggregate.evolve, initial), events };
}
