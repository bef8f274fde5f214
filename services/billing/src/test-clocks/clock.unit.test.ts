import { deciderSpec } from '@billing/testing';
import { testClockAggregate } from './aggregate';
import type { TestClockCommand, TestClockEvent } from './clock';

const spec = deciderSpec(testClockAggregate);
const now = new Date('2026-11-21T08:00:00.000Z');
const target = { clockId: 'clock_1', organization: 'org_1', environment: 'SANDBOX' as const, now };
const clock = {
  object: 'test_clock' as const,
  id: 'clock_1',
  frozen_time: '2026-01-31T10:00:00.000Z',
  status: 'ready' as const,
  name: null,
  created_at: now.toISOString(),
  livemode: false as const,
};
const created: TestClockEvent = {
  type: 'TestClockCreated',
  data: { clock_id: 'clock_1', organization: 'org_1', environment: 'SANDBOX', object: clock },
};
const advance = (to: string): TestClockCommand => ({
  type: 'StartAdvance',
  data: { ...target, targetTime: new Date(to) },
});
const started: TestClockEvent = {
  type: 'TestClockAdvanceStarted',
  data: { clock_id: 'clock_1', target_time: '2026-03-01T00:00:00.000Z', object: { ...clock, status: 'advancing' } },
};
const finish: TestClockCommand = {
  type: 'FinishAdvance',
  data: { clockId: 'clock_1', targetTime: new Date('2026-03-01T00:00:00Z') },
};

describe('Test clock', () => {
  it('is created ready at its frozen time', () =>
    spec
      .given([])
      .when({ type: 'CreateTestClock', data: { ...target, frozenTime: new Date(clock.frozen_time), name: null } })
      .then([created]));
  it('advances forward only, one advance at a time', () => {
    spec.given([created]).when(advance('2026-03-01T00:00:00Z')).then([started]);
    spec.given([created]).when(advance('2026-01-31T10:00:00Z')).thenThrows('must be later');
    spec.given([created, started]).when(advance('2026-04-01T00:00:00Z')).thenThrows('advancing already');
  });
  it('is ready at the target once the due work ran, and finishing twice changes nothing', () => {
    const advanced: TestClockEvent = {
      type: 'TestClockAdvanced',
      data: { clock_id: 'clock_1', object: { ...clock, frozen_time: '2026-03-01T00:00:00.000Z' } },
    };
    spec.given([created, started]).when(finish).then([advanced]);
    spec.given([created, started, advanced]).when(finish).then([]);
  });
  it('is not finished by a run of an earlier advance (one engine still running it when the next began)', () => {
    const advanced: TestClockEvent = {
      type: 'TestClockAdvanced',
      data: { clock_id: 'clock_1', object: { ...clock, frozen_time: '2026-03-01T00:00:00.000Z' } },
    };
    const next: TestClockEvent = {
      type: 'TestClockAdvanceStarted',
      data: {
        clock_id: 'clock_1',
        target_time: '2026-04-01T00:00:00.000Z',
        object: { ...clock, frozen_time: '2026-03-01T00:00:00.000Z', status: 'advancing' },
      },
    };
    spec.given([created, started, advanced, next]).when(finish).then([]);
  });
  it('is absent once deleted, and to another organization', () => {
    const deleted: TestClockEvent = {
      type: 'TestClockDeleted',
      data: { clock_id: 'clock_1', deleted_at: now.toISOString() },
    };
    spec.given([created]).when({ type: 'DeleteTestClock', data: target }).then([deleted]);
    spec.given([created, deleted]).when(advance('2026-03-01T00:00:00Z')).thenThrows('No such test clock');
    spec
      .given([created])
      .when({ type: 'DeleteTestClock', data: { ...target, organization: 'org_2' } })
      .thenThrows('No such test clock');
  });
});
