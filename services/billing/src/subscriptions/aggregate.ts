import { type Projector, defineAggregate } from '@billing/eventstore';
import { grantPeriodAllowances } from './allowance-grants';
import { decide } from './decide';
import { projectSubscriptions } from './read-model';
import {
  SUBSCRIPTION_SNAPSHOT_VERSION,
  evolve,
  initialState,
  subscriptionEvents,
  subscriptionStream,
} from './subscription';
import { decideSwitching } from './switch-decide';

/** The subscriptions table, and the credit allowance of each paid period that starts (docs/credits.md). */
const project: Projector = async (tx, schema, events, store) => {
  await projectSubscriptions(tx, schema, events);
  await grantPeriodAllowances(tx, store, events);
};

/** The subscription aggregate: the decider its tests check, run on `subscription-<id>` with the subscriptions table. */
export const subscriptionAggregate = defineAggregate({
  stream: subscriptionStream,
  events: subscriptionEvents,
  initialState,
  evolve,
  decide,
  snapshot: { version: SUBSCRIPTION_SNAPSHOT_VERSION },
  project,
});

/**
 * Plan switching's commands on the same stream, events, state, snapshots and read model as
 * `subscriptionAggregate`: only the decider differs.
 */
export const switchingAggregate = defineAggregate({
  stream: subscriptionStream,
  events: subscriptionEvents,
  initialState,
  evolve,
  decide: decideSwitching,
  snapshot: { version: SUBSCRIPTION_SNAPSHOT_VERSION },
  project,
});
