import { defineAggregate } from '@billing/eventstore';
import { couponEvents, couponStream, evolve, initialState } from './coupon';
import { decide } from './decide';
import { projectCoupons } from './read-model';

/** The coupon aggregate: the decider its tests check, run on `coupon-<id>` with the coupons table. */
export const couponAggregate = defineAggregate({
  stream: couponStream,
  events: couponEvents,
  initialState,
  evolve,
  decide,
  project: projectCoupons,
});
