import { defineAggregate } from '@billing/eventstore';
import { decide } from './decide';
import { deliveryEvents, deliveryStream, evolve, initialState } from './delivery';
import { projectDeliveries } from './read-model';

/** The webhook delivery aggregate: the decider its tests check, run on `webhook_delivery-<id>`. */
export const deliveryAggregate = defineAggregate({
  stream: deliveryStream,
  events: deliveryEvents,
  initialState,
  evolve,
  decide,
  project: projectDeliveries,
});
