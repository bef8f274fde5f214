import { defineAggregate } from '@billing/eventstore';
import { decide } from './decide';
import {
  PROMOTION_CODE_SNAPSHOT_VERSION,
  evolve,
  initialState,
  promotionCodeEvents,
  promotionCodeStream,
} from './promotion-code';
import { projectPromotionCodes } from './read-model';

/**
 * The promotion code aggregate: the decider its tests check, run on `promotion_code-<id>` from
 * snapshots, with the codes and redemptions tables.
 */
export const promotionCodeAggregate = defineAggregate({
  stream: promotionCodeStream,
  events: promotionCodeEvents,
  initialState,
  evolve,
  decide,
  snapshot: { version: PROMOTION_CODE_SNAPSHOT_VERSION },
  project: projectPromotionCodes,
});
