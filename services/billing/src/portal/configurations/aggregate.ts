import { defineAggregate } from '@billing/eventstore';
import { evolve, initialState, portalConfigurationEvents, portalConfigurationStream } from './configuration';
import { decide } from './decide';
import { projectPortalConfigurations } from './read-model';

/**
 * The portal configuration aggregate: the decider its tests check, run on
 * `portal_configuration-<id>` with the portal configurations table.
 */
export const portalConfigurationAggregate = defineAggregate({
  stream: portalConfigurationStream,
  events: portalConfigurationEvents,
  initialState,
  evolve,
  decide,
  project: projectPortalConfigurations,
});
