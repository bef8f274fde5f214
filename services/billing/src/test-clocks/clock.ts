import { type Environment, type Tenant, type TestClock, conflict, notFound, validationError } from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export const testClockStream = (clockId: string) => `test_clock-${clockId}`;

export type TestClockCreated = {
  type: 'TestClockCreated';
  data: { clock_id: string } & Tenant & { object: TestClock };
};
/** The clock moves to `target_time`; what falls due on it until then runs next. */
export type TestClockAdvanceStarted = {
  type: 'TestClockAdvanceStarted';
  data: { clock_id: string; target_time: string; object: TestClock };
};
/** Everything due up to the target ran: the clock reads the target time, ready. */
export type TestClockAdvanced = { type: 'TestClockAdvanced'; data: { clock_id: string; object: TestClock } };
export type TestClockDeleted = { type: 'TestClockDeleted'; data: { clock_id: string; deleted_at: string } };
export type TestClockEvent = TestClockCreated | TestClockAdvanceStarted | TestClockAdvanced | TestClockDeleted;

export const testClockEvents = streamEvents<TestClockEvent>({
  TestClockCreated: true,
  TestClockAdvanceStarted: true,
  TestClockAdvanced: true,
  TestClockDeleted: true,
});

export type TestClockState =
  | { status: 'Empty' }
  | { status: 'Existing'; tenant: Tenant; clock: TestClock; targetTime: string | null; deleted: boolean };

export const initialState = (): TestClockState => ({ status: 'Empty' });

export function evolve(state: TestClockState, event: TestClockEvent): TestClockState {
  if (event.type === 'TestClockCreated') {
    const { organization, environment, object } = event.data;
    return {
      status: 'Existing',
      tenant: { organization, environment },
      clock: object,
      targetTime: null,
      deleted: false,
    };
  }
  if (state.status === 'Empty') return state;
  switch (event.type) {
    case 'TestClockAdvanceStarted':
      return { ...state, clock: event.data.object, targetTime: event.data.target_time };
    case 'TestClockAdvanced':
      return { ...state, clock: event.data.object, targetTime: null };
    case 'TestClockDeleted':
      return { ...state, deleted: true };
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}

type Target = Tenant & { clockId: string; now: Date };

export type CreateTestClock = { type: 'CreateTestClock'; data: Target & { frozenTime: Date; name: string | null } };
export type StartAdvance = { type: 'StartAdvance'; data: Target & { targetTime: Date } };
/**
 * The run of the advance to `targetTime` is done. Only that advance finishes: a run that
 * outlived its advance (another engine finished it, and a new advance started) changes nothing.
 */
export type FinishAdvance = { type: 'FinishAdvance'; data: { clockId: string; targetTime: Date } };
export type DeleteTestClock = { type: 'DeleteTestClock'; data: Target };
export type TestClockCommand = CreateTestClock | StartAdvance | FinishAdvance | DeleteTestClock;

export function decide(command: TestClockCommand, state: TestClockState): TestClockEvent[] {
  switch (command.type) {
    case 'CreateTestClock': {
      const { data } = command;
      if (state.status !== 'Empty') throw conflict(`Test clock ${data.clockId} already exists`);
      const object: TestClock = {
        object: 'test_clock',
        id: data.clockId,
        frozen_time: data.frozenTime.toISOString(),
        status: 'ready',
        name: data.name,
        created_at: data.now.toISOString(),
        livemode: false,
      };
      const { organization, environment } = data;
      return [{ type: 'TestClockCreated', data: { clock_id: data.clockId, organization, environment, object } }];
    }
    case 'StartAdvance':
      return startAdvance(command, state);
    case 'FinishAdvance': {
      if (state.status === 'Empty' || state.targetTime === null) return [];
      if (state.targetTime !== command.data.targetTime.toISOString()) return [];
      const object: TestClock = { ...state.clock, frozen_time: state.targetTime, status: 'ready' };
      return [{ type: 'TestClockAdvanced', data: { clock_id: state.clock.id, object } }];
    }
    case 'DeleteTestClock': {
      existing(state, command.data);
      return [
        {
          type: 'TestClockDeleted',
          data: { clock_id: command.data.clockId, deleted_at: command.data.now.toISOString() },
        },
      ];
    }
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

/** Forward only, and one advance at a time. */
function startAdvance({ data }: StartAdvance, state: TestClockState): TestClockEvent[] {
  const clock = existing(state, data);
  if (clock.status === 'advancing') throw conflict('This test clock is advancing already; wait until it is ready');
  if (data.targetTime.getTime() <= Date.parse(clock.frozen_time)) {
    const message = `frozen_time must be later than ${clock.frozen_time}`;
    throw validationError([{ path: 'frozen_time', code: 'not_later', message }], message);
  }
  const target = data.targetTime.toISOString();
  return [
    {
      type: 'TestClockAdvanceStarted',
      data: { clock_id: clock.id, target_time: target, object: { ...clock, status: 'advancing' } },
    },
  ];
}

/** A deleted clock, or another organization's or environment's, is absent. */
function existing(state: TestClockState, target: Target): TestClock {
  const absent =
    state.status === 'Empty' ||
    state.deleted ||
    state.tenant.organization !== target.organization ||
    state.tenant.environment !== target.environment;
  if (absent) throw notFound(`No such test clock: ${target.clockId}`);
  return state.clock;
}
