import { defineAggregate } from '@billing/eventstore';
import { decide } from './decide';
import { projectPortalSessions } from './read-model';
import { evolve, initialState, portalSessionEvents, portalSessionStream } from './session';

/** The portal session aggregate: the decider its tests check, run on `portal_session-<id>` with the portal sessions table. */
export const portalSessionAggregate = defineAggregate({
  stream: portalSessionStream,
  events: portalSessionEvents,
  initialState,
  evolve,
  decide,
  project: projectPortalSessions,
});
