import type { EventStoreTransaction, RecordedEvent } from '@billing/eventstore';
import { countLinkCompletions } from '../payment-links/read-model';
import { decide } from './decide';
import { projectSessions } from './read-model';
import { type SessionState, asSessionEvent, evolve, initialState } from './session';

/** The checkout session aggregate as the event store runs it: its decider over recorded events. */
export const sessionAggregate = {
  initialState,
  evolve: (state: SessionState, event: RecordedEvent) => evolve(state, asSessionEvent(event)),
  decide,
};

/** The session read model, and a completed session's payment link counted in the same transaction. */
export const sessionProjector = (schema: string) => async (tx: EventStoreTransaction, events: RecordedEvent[]) => {
  await projectSessions(tx, schema, events);
  await countLinkCompletions(tx, schema, events);
};
