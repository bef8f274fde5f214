import { defineAggregate } from '@billing/eventstore';
import { decide } from './decide';
import { endpointEvents, endpointStream, evolve, initialState } from './endpoint';
import { projectEndpoints } from './read-model';

/** The webhook endpoint aggregate: the decider its tests check, run on `webhook_endpoint-<id>`. */
export const endpointAggregate = defineAggregate({
  stream: endpointStream,
  events: endpointEvents,
  initialState,
  evolve,
  decide,
  project: projectEndpoints,
});
