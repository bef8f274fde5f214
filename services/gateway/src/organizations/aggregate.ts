import { defineAggregate } from '@billing/eventstore';
import { decideOrganization } from './decide';
import {
  ORGANIZATION_SNAPSHOT_VERSION,
  evolveOrganization,
  initialOrganization,
  organizationEvents,
  organizationStream,
} from './organization';
import { projectOrganization } from './read-model';

/** The organization aggregate: the decider its tests check, run on `organization-<id>` from snapshots. */
export const organizationAggregate = defineAggregate({
  stream: organizationStream,
  events: organizationEvents,
  initialState: initialOrganization,
  evolve: evolveOrganization,
  decide: decideOrganization,
  snapshot: { version: ORGANIZATION_SNAPSHOT_VERSION },
  project: projectOrganization,
});
