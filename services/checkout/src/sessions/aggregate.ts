import { type EventStoreTransaction, type RecordedEvent, defineAggregate } from '@billing/eventstore';
import { countLinkCompletions } from '../payment-links/read-model';
import { projectRefunds } from '../refunds/read-model';
import { projectUnmatchedPayments } from '../payments/unmatched';
import { decide } from './decide';
import { projectSessions } from './read-model';
import { evolve, initialState, sessionEvents, sessionStream } from './session';

/**
 * The session read model, a completed session's payment link counted, and the refunds of the
 * session's order (refund events are on its stream; other events leave that table alone), and
 * payments a processor took that the session could not record.
 */
async function projectSession(tx: EventStoreTransaction, schema: string, events: RecordedEvent[]) {
  await projectSessions(tx, schema, events);
  await countLinkCompletions(tx, schema, events);
  await projectRefunds(tx, schema, events);
  await projectUnmatchedPayments(tx, schema, events);
}

/** The checkout session aggregate: the decider its tests check, run on `checkout_session-<id>`. */
export const sessionAggregate = defineAggregate({
  stream: sessionStream,
  events: sessionEvents,
  initialState,
  evolve,
  decide,
  project: projectSession,
});
