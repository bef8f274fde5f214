import { defineAggregate } from '@billing/eventstore';
import { decide } from './decide';
import { evolve, initialState, productEvents, productStream } from './product';
import { projectProducts } from './read-model';

/** The product aggregate: the decider its tests check, run on `product-<id>` with the products table. */
export const productAggregate = defineAggregate({
  stream: productStream,
  events: productEvents,
  initialState,
  evolve,
  decide,
  project: projectProducts,
});
