import { defineAggregate } from '@billing/eventstore';
import { decide, evolve, initialState, meterEvents, meterStream } from './meter';
import { projectMeters } from './read-model';

/** The meter aggregate, on `meter-<id>` with the meters table. */
export const meterAggregate = defineAggregate({
  stream: meterStream,
  events: meterEvents,
  initialState,
  evolve,
  decide,
  project: projectMeters,
});
