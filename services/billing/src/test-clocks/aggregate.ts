import { defineAggregate } from '@billing/eventstore';
import { decide, evolve, initialState, testClockEvents, testClockStream } from './clock';
import { projectTestClocks } from './read-model';

/** The test clock aggregate: the decider its tests check, run on `test_clock-<id>` with the test clocks table. */
export const testClockAggregate = defineAggregate({
  stream: testClockStream,
  events: testClockEvents,
  initialState,
  evolve,
  decide,
  project: projectTestClocks,
});
