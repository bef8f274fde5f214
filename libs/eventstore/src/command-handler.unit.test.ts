import {
  type Aggregate,
  DEFAULT_RETRY_POLICY,
  type RetryPolicy,
  handleCommand,
  isRetryableWriteError,
  retryDelayMs,
} from './command-handler';
import type { EventStore, EventStoreTransaction } from './event-store';
import { ExpectedVersionConflictError, type NewEvent, type RecordedEvent, WriteConflictError } from './types';

const at = new Date('2026-11-21T08:00:00.000Z');
const appendOptions = { organization: 'org_1', environment: 'SANDBOX' as const, occurredAt: at };

const recorded = (version: number): RecordedEvent => ({
  id: `evt-${version}`,
  type: 'Counted',
  schema_version: 1,
  stream: 'counter-1',
  stream_version: version,
  global_position: version,
  occurred_at: at.toISOString(),
  organization: 'org_1',
  environment: 'SANDBOX',
  data: {},
  transaction_id: String(version),
});

/** Counts events; `Count` appends one. */
const counter: Aggregate<number, { type: 'Count' }, NewEvent> = {
  initialState: () => 0,
  evolve: (state) => state + 1,
  decide: () => [{ type: 'Counted', data: {} }],
};

const sqlError = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

/**
 * A store whose stream grows by one event (another writer) before every failing attempt's
 * append: `failures` lists what each attempt's append throws, then appends succeed.
 */
function fakeStore(failures: unknown[]) {
  const stream: RecordedEvent[] = [];
  const calls = { reads: 0, appends: [] as (number | 'any')[] };
  const store = {
    async readStream() {
      calls.reads++;
      return [...stream];
    },
    async transaction<T>(fn: (tx: EventStoreTransaction) => Promise<T>): Promise<T> {
      return fn({
        query: async () => ({ rows: [], rowCount: 0 }),
        write: async () => undefined,
        append: async (_name, events, options) => {
          calls.appends.push(options.expectedVersion);
          const failure = failures.shift();
          if (failure !== undefined) {
            stream.push(recorded(stream.length + 1));
            throw failure;
          }
          const added = events.map((_, i) => recorded(stream.length + 1 + i));
          stream.push(...added);
          return { nextExpectedVersion: stream.length, events: added };
        },
        appendMany: async () => {
          throw new Error('not used by handleCommand');
        },
      });
    },
  } as unknown as EventStore;
  return { store, calls, stream };
}

function recordingPolicy(overrides: Partial<RetryPolicy> = {}) {
  const slept: number[] = [];
  const policy: Partial<RetryPolicy> = {
    random: () => 0.5,
    sleep: async (ms) => void slept.push(ms),
    ...overrides,
  };
  return { policy, slept };
}

const conflict = () => new ExpectedVersionConflictError('counter-1', 0);

describe('handleCommand retries concurrent writes a bounded number of times, with jitter', () => {
  it('starts again from a fresh read after a version conflict, pausing between attempts', async () => {
    const { store, calls } = fakeStore([conflict(), conflict()]);
    const { policy, slept } = recordingPolicy();

    const result = await handleCommand(
      store,
      'counter-1',
      counter,
      { type: 'Count' },
      { ...appendOptions, retry: policy },
    );

    // Two other writers got in first; the third attempt decided on their events.
    expect(calls.reads).toBe(3);
    expect(calls.appends).toEqual([0, 1, 2]);
    expect(result.state).toBe(3);
    expect(result.events.map((e) => e.stream_version)).toEqual([3]);
    // Half (random 0.5) of the ceiling of 5 ms, then of 10 ms.
    expect(slept).toEqual([2, 5]);
  });

  it('gives up after maxAttempts with WriteConflictError, which carries the last conflict', async () => {
    const { store, calls } = fakeStore(Array.from({ length: 20 }, conflict));
    const { policy, slept } = recordingPolicy({ maxAttempts: 4 });

    const failure = await handleCommand(
      store,
      'counter-1',
      counter,
      { type: 'Count' },
      {
        ...appendOptions,
        retry: policy,
      },
    ).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(WriteConflictError);
    expect(failure).toMatchObject({ name: 'WriteConflictError', stream: 'counter-1', attempts: 4 });
    expect((failure as Error).cause).toBeInstanceOf(ExpectedVersionConflictError);
    expect(calls.appends).toHaveLength(4);
    // No pause after the last attempt.
    expect(slept).toHaveLength(3);
  });

  it('is bounded by default: 10 attempts', async () => {
    const { store, calls } = fakeStore(Array.from({ length: 50 }, conflict));
    const failure = await handleCommand(
      store,
      'counter-1',
      counter,
      { type: 'Count' },
      {
        ...appendOptions,
        retry: { sleep: async () => undefined },
      },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WriteConflictError);
    expect(calls.appends).toHaveLength(DEFAULT_RETRY_POLICY.maxAttempts);
    expect(DEFAULT_RETRY_POLICY.maxAttempts).toBe(10);
  });

  it('keeps maxAttempts as a shorthand', async () => {
    const { store, calls } = fakeStore(Array.from({ length: 50 }, conflict));
    await expect(
      handleCommand(
        store,
        'counter-1',
        counter,
        { type: 'Count' },
        {
          ...appendOptions,
          maxAttempts: 2,
          retry: { sleep: async () => undefined },
        },
      ),
    ).rejects.toBeInstanceOf(WriteConflictError);
    expect(calls.appends).toHaveLength(2);
  });

  it.each([
    ['serialization failure', '40001'],
    ['deadlock', '40P01'],
  ])("retries PostgreSQL's %s (%s) like a version conflict", async (_name, code) => {
    const { store, calls } = fakeStore([sqlError(code)]);
    const { policy } = recordingPolicy();
    const result = await handleCommand(
      store,
      'counter-1',
      counter,
      { type: 'Count' },
      { ...appendOptions, retry: policy },
    );
    expect(calls.appends).toHaveLength(2);
    expect(result.state).toBe(2);
  });

  it('does not retry a unique violation of a read model, a domain error or any other failure', async () => {
    for (const failure of [sqlError('23505'), new Error('connection lost')]) {
      const { store, calls } = fakeStore([failure]);
      const { policy, slept } = recordingPolicy();
      await expect(
        handleCommand(store, 'counter-1', counter, { type: 'Count' }, { ...appendOptions, retry: policy }),
      ).rejects.toBe(failure);
      expect(calls.appends).toHaveLength(1);
      expect(slept).toEqual([]);
    }
    const refusing: typeof counter = {
      ...counter,
      decide: () => {
        throw new Error('domain says no');
      },
    };
    const { store, calls } = fakeStore([]);
    await expect(handleCommand(store, 'counter-1', refusing, { type: 'Count' }, appendOptions)).rejects.toThrow(
      'domain says no',
    );
    expect(calls.reads).toBe(1);
  });

  it('classifies what may be retried', () => {
    expect(isRetryableWriteError(conflict())).toBe(true);
    expect(isRetryableWriteError(sqlError('40001'))).toBe(true);
    expect(isRetryableWriteError(sqlError('40P01'))).toBe(true);
    expect(isRetryableWriteError(sqlError('23505'))).toBe(false);
    expect(isRetryableWriteError(new WriteConflictError('s', 3))).toBe(false);
    expect(isRetryableWriteError(undefined)).toBe(false);
  });
});

describe('retryDelayMs: full jitter under an exponential ceiling', () => {
  const policy = { baseDelayMs: 5, maxDelayMs: 250 };

  it('draws between 0 and base * 2^(attempt - 1), capped at maxDelayMs', () => {
    const ceilings = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((attempt) =>
      retryDelayMs({ ...policy, random: () => 0.999999 }, attempt),
    );
    expect(ceilings).toEqual([4, 9, 19, 39, 79, 159, 249, 249, 249]);
    for (let attempt = 1; attempt < 10; attempt++) {
      expect(retryDelayMs({ ...policy, random: () => 0 }, attempt)).toBe(0);
    }
  });

  it('spreads writers that collided: the pauses of one attempt differ', () => {
    const delays = new Set(Array.from({ length: 50 }, () => retryDelayMs({ ...policy, random: Math.random }, 6)));
    expect(delays.size).toBeGreaterThan(10);
    for (const delay of delays) expect(delay).toBeGreaterThanOrEqual(0);
    for (const delay of delays) expect(delay).toBeLessThan(160);
  });

  it('keeps the default worst case of all pauses well under the gateway write timeout', () => {
    let worst = 0;
    for (let attempt = 1; attempt < DEFAULT_RETRY_POLICY.maxAttempts; attempt++) {
      worst += retryDelayMs({ ...DEFAULT_RETRY_POLICY, random: () => 0.999999 }, attempt);
    }
    expect(worst).toBeLessThan(1500);
  });
});
