import { deciderSpec } from '@billing/testing';
import { defineAggregate } from './aggregate';
import type { EventStore, EventStoreTransaction, Snapshot } from './event-store';
import { streamEvents } from './stream-events';
import { ExpectedVersionConflictError, type RecordedEvent, WriteConflictError } from './types';

/** A tally: opened, added to, closed. */
type TallyEvent =
  | { type: 'TallyOpened'; data: { tally_id: string } }
  | { type: 'TallyAdded'; data: { amount: number } }
  | { type: 'TallyClosed'; data: Record<string, never> };
type TallyCommand = { type: 'Open'; id: string } | { type: 'Add'; amount: number } | { type: 'Close' };
type Tally = { status: 'None' } | { status: 'Open' | 'Closed'; total: number };

const tallyEvents = streamEvents<TallyEvent>({ TallyOpened: true, TallyAdded: true, TallyClosed: true });

const tally = defineAggregate({
  stream: (id: string) => `tally-${id}`,
  events: tallyEvents,
  initialState: (): Tally => ({ status: 'None' }),
  evolve: (state: Tally, event: TallyEvent): Tally => {
    if (event.type === 'TallyOpened') return { status: 'Open', total: 0 };
    if (state.status === 'None') return state;
    if (event.type === 'TallyAdded') return { ...state, total: state.total + event.data.amount };
    return { ...state, status: 'Closed' };
  },
  decide: (command: TallyCommand, state: Tally): TallyEvent[] => {
    if (command.type === 'Open') return [{ type: 'TallyOpened', data: { tally_id: command.id } }];
    if (state.status !== 'Open') throw new Error('the tally is not open');
    if (command.type === 'Close') return [{ type: 'TallyClosed', data: {} }];
    return command.amount === 0 ? [] : [{ type: 'TallyAdded', data: { amount: command.amount } }];
  },
  project: async (tx, schema, events) => void (tx as FakeTx).log.push(`tally ${schema} ${events.length}`),
  snapshot: { version: 3, every: 2 },
});

const at = new Date('2026-11-21T08:00:00.000Z');
const tenant = { organization: 'org_1', environment: 'SANDBOX' as const, occurredAt: at };

const recorded = (stream: string, version: number, type: string, data: Record<string, unknown> = {}) =>
  ({ type, data, stream, stream_version: version, id: `evt-${version}` }) as unknown as RecordedEvent;

type FakeTx = EventStoreTransaction & { log: string[] };

/** A store holding streams in memory; `conflicts` appends fail first with a version conflict. */
function memoryStore(streams: Record<string, RecordedEvent[]>, conflicts = 0) {
  const log: string[] = [];
  const saved: Array<[string, Snapshot]> = [];
  const read = (stream: string) => [...(streams[stream] ?? [])];
  const tx: FakeTx = {
    log,
    query: async (_sql, params) => ({ rows: read(String(params?.[0])) as never[], rowCount: 0 }),
    write: async () => undefined,
    append: async (stream, events, options) => {
      log.push(`append ${stream} at ${options.expectedVersion}`);
      if (conflicts-- > 0) throw new ExpectedVersionConflictError(stream, options.expectedVersion);
      const from = read(stream).length;
      const added = events.map((e, i) => recorded(stream, from + i + 1, e.type, e.data));
      streams[stream] = [...read(stream), ...added];
      return { nextExpectedVersion: from + added.length, events: added };
    },
    appendMany: async () => [],
  };
  const store = {
    tables: { schema: 'tallies' },
    readStream: async (stream: string) => read(stream),
    readFromSnapshot: async (stream: string, version: number) => {
      log.push(`read ${stream} from snapshot ${version}`);
      return { snapshot: undefined, events: read(stream) };
    },
    saveSnapshot: async (stream: string, snapshot: Snapshot) => void saved.push([stream, snapshot]),
    transaction: async <T>(fn: (t: EventStoreTransaction) => Promise<T>) => fn(tx),
  } as unknown as EventStore;
  return { store, tx, log, saved, streams };
}

describe('streamEvents', () => {
  it('reads a recorded event of one of its types as that event, and no other', () => {
    expect(tallyEvents.types).toEqual(['TallyOpened', 'TallyAdded', 'TallyClosed']);
    expect(tallyEvents.of(recorded('tally-t1', 2, 'TallyAdded', { amount: 4 }))).toStrictEqual({
      type: 'TallyAdded',
      data: { amount: 4 },
    });
    expect(tallyEvents.of(recorded('tally-t1', 3, 'SomethingElse'))).toBeUndefined();
    expect(tallyEvents.has({ type: 'TallyClosed' })).toBe(true);
    expect(tallyEvents.has({ type: 'TallyRenamed' })).toBe(false);
  });
});

describe('defineAggregate', () => {
  describe('is the decider the store runs', () => {
    const spec = deciderSpec(tally);
    const opened: TallyEvent = { type: 'TallyOpened', data: { tally_id: 't1' } };

    it('decides on the events given', () =>
      spec
        .given([opened])
        .when({ type: 'Add', amount: 2 })
        .then([{ type: 'TallyAdded', data: { amount: 2 } }]));

    it('refuses what the state does not allow', () =>
      spec.given([]).when({ type: 'Close' }).thenThrows('the tally is not open'));
  });

  describe('streams', () => {
    it('names the stream of an id and reads the id back', () => {
      expect(tally.stream('t1')).toBe('tally-t1');
      expect(tally.idOf('tally-t1')).toBe('t1');
      expect(tally.idOf('other-t1')).toBeUndefined();
    });

    it('folds recorded events, skipping types that are not its own', () => {
      const history = [recorded('tally-t1', 1, 'TallyOpened'), recorded('tally-t1', 2, 'Unrelated', { amount: 9 })];
      expect(tally.fold([...history, recorded('tally-t1', 3, 'TallyAdded', { amount: 5 })])).toEqual({
        status: 'Open',
        total: 5,
      });
      expect(tally.fold([recorded('tally-t1', 4, 'TallyClosed')], { status: 'Open', total: 1 })).toEqual({
        status: 'Closed',
        total: 1,
      });
    });

    it('refuses a stream name that is not a prefix and the id', () => {
      expect(() => defineAggregate({ ...tally, stream: (id: string) => `${id}-tally` })).toThrow('prefix');
    });
  });

  describe('when handling a command', () => {
    const history = () => ({ 'tally-t1': [recorded('tally-t1', 1, 'TallyOpened')] });

    it('appends to the stream of the id at the version read, and projects in the same transaction', async () => {
      const { store, log } = memoryStore(history());
      const also = jest.fn(async (tx: EventStoreTransaction) => void (tx as FakeTx).log.push('also'));
      const { state, events } = await tally.handle(
        store,
        't1',
        { type: 'Add', amount: 3 },
        { ...tenant, alsoProject: also },
      );
      expect(state).toEqual({ status: 'Open', total: 3 });
      expect(events.map((e) => [e.type, e.stream_version])).toEqual([['TallyAdded', 2]]);
      expect(log).toEqual(['read tally-t1 from snapshot 3', 'append tally-t1 at 1', 'tally tallies 1', 'also']);
      expect(also).toHaveBeenCalledWith(expect.anything(), events);
    });

    it('writes no read model when nothing was decided', async () => {
      const { store, log } = memoryStore(history());
      await tally.handle(store, 't1', { type: 'Add', amount: 0 }, tenant);
      expect(log).toEqual(['read tally-t1 from snapshot 3', 'append tally-t1 at 1']);
    });

    it("keeps handleCommand's retries: again from the read, then WriteConflictError", async () => {
      const retry = { sleep: async () => undefined };
      const once = memoryStore(history(), 1);
      expect((await tally.handle(once.store, 't1', { type: 'Close' }, { ...tenant, retry })).state.status).toBe(
        'Closed',
      );
      const always = memoryStore(history(), 99);
      const failure = await tally
        .handle(always.store, 't1', { type: 'Close' }, { ...tenant, maxAttempts: 2, retry })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(WriteConflictError);
      expect(failure).toMatchObject({ attempts: 2 });
    });

    it('takes a snapshot when `every` events were folded since the last', async () => {
      const { store, saved } = memoryStore(history());
      await tally.handle(store, 't1', { type: 'Add', amount: 2 }, tenant);
      expect(saved).toEqual([
        ['tally-t1', { streamVersion: 2, snapshotVersion: 3, state: { status: 'Open', total: 2 } }],
      ]);
    });

    it('runs inside a transaction that is already open', async () => {
      const { store, tx, log, streams } = memoryStore(history());
      const { state } = await tally.handleInTransaction(tx, store, 't1', { type: 'Add', amount: 4 }, tenant);
      expect(state).toEqual({ status: 'Open', total: 4 });
      expect(log).toEqual(['read tally-t1 from snapshot 3', 'append tally-t1 at 1', 'tally tallies 1']);
      expect(streams['tally-t1']).toHaveLength(2);
    });
  });
});
