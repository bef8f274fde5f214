import { defineAggregate } from '@billing/eventstore';
import { decide } from './decide';
import {
  CREDITS_SNAPSHOT_EVERY,
  CREDITS_SNAPSHOT_VERSION,
  creditsEvents,
  creditsStream,
  evolve,
  initialState,
} from './ledger';
import { projectCredits } from './read-model';

/** A customer's credit ledger, on `customer_credits-<customer id>` with the credit tables. */
export const creditsAggregate = defineAggregate({
  stream: creditsStream,
  events: creditsEvents,
  initialState,
  evolve,
  decide,
  // A busy customer's stream is mostly spends: a command reads a snapshot and a short tail.
  snapshot: { version: CREDITS_SNAPSHOT_VERSION, every: CREDITS_SNAPSHOT_EVERY },
  project: projectCredits,
});
