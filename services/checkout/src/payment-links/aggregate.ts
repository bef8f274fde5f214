import { defineAggregate } from '@billing/eventstore';
import { decide } from './decide';
import { evolve, initialState, paymentLinkEvents, paymentLinkStream } from './link';
import { projectPaymentLinks } from './read-model';

/** The payment link aggregate: the decider, run on `payment_link-<id>` with the payment links table. */
export const paymentLinkAggregate = defineAggregate({
  stream: paymentLinkStream,
  events: paymentLinkEvents,
  initialState,
  evolve,
  decide,
  project: projectPaymentLinks,
});
