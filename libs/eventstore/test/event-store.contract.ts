import { randomUUID } from 'node:crypto';
import {
  type AppendOptions,
  type Database,
  EventLogSubscriber,
  EventStore,
  ExpectedVersionConflictError,
  type RecordedEvent,
  START_OF_LOG,
  type SubscriberOptions,
  WriteConflictError,
  genericPlan,
  handleCommand,
  handleCommandInTransaction,
  streamVersionsQuery,
  streamsFromSnapshotQuery,
} from '../src';
import { aggregateContract } from './aggregate.contract';
import { at, event, options, streamContract } from './stream.contract';

export interface EventStoreFixture {
  database: Database;
  /** False for PGlite: one connection, so a second transaction waits for the first. */
  concurrentTransactions: boolean;
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Every event store adapter must pass this suite. */
export function eventStoreContract(makeFixture: () => Promise<EventStoreFixture>) {
  let fixture: EventStoreFixture;
  let store: EventStore;
  let schema: string;

  beforeAll(async () => {
    fixture = await makeFixture();
  });

  beforeEach(async () => {
    schema = `es_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    store = new EventStore(fixture.database, { schema });
    await store.migrate();
  });

  afterEach(async () => {
    await fixture.database.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  afterAll(async () => {
    await fixture.database.close();
  });

  streamContract(() => store);
  aggregateContract(() => ({ store, database: fixture.database, schema }));

  describe('several streams at once (appendMany, readStreams)', () => {
    it("looks each stream's version up by the log's index, in the plan a prepared statement keeps", async () => {
      // Planned on an empty, never analysed log, as at a service's first appends: a join was
      // planned as a scan of the whole log, which every later append then paid for.
      const plan = await genericPlan(fixture.database, streamVersionsQuery(store.tables.events), [
        `'[{"stream_id":"a-1","expected":0}]'`,
      ]);
      expect(plan).toMatch(/Index Only Scan Backward using \S+ on events/);
      expect(plan).not.toMatch(/Seq Scan on events/);
    });

    it("reads each stream's snapshot by its key, in the plan a prepared statement keeps", async () => {
      // As above: a join with the snapshots was planned as a scan of every snapshot, paid by every
      // command on an aggregate with snapshots (readFromSnapshot is this read of one stream).
      const plan = await genericPlan(fixture.database, streamsFromSnapshotQuery(store.tables), [
        `'{a-1}'`,
        `'{NULL}'`,
        '1',
      ]);
      expect(plan).toMatch(/Index Scan using snapshots_pkey on snapshots/);
      expect(plan).not.toMatch(/Seq Scan on (snapshots|events)/);
    });

    const many = (appends: Array<[string, number, AppendOptions['expectedVersion']]>) =>
      store.transaction((tx) =>
        tx.appendMany(
          appends.map(([stream, count, expected]) => ({
            stream,
            events: Array.from({ length: count }, (_, i) => event(`${stream}-E`, i)),
            options: options(expected),
          })),
        ),
      );

    it('appends to each stream at its expected version in one step, in the order given, and reads them back', async () => {
      await store.append('b-1', [event('A')], options(0));
      const results = await many([
        ['a-1', 2, 0],
        ['b-1', 1, 1],
        ['c-1', 0, 0],
      ]);
      expect(results.map((r) => [r.nextExpectedVersion, r.events.map((e) => [e.stream, e.stream_version])])).toEqual([
        [
          2,
          [
            ['a-1', 1],
            ['a-1', 2],
          ],
        ],
        [2, [['b-1', 2]]],
        [0, []],
      ]);
      const log = await store.readAll(START_OF_LOG);
      expect(log.map((e) => `${e.stream}@${e.stream_version}`)).toEqual(['b-1@1', 'a-1@1', 'a-1@2', 'b-1@2']);
      const read = await store.readStreams(['a-1', 'b-1', 'c-1']);
      expect([...read].map(([stream, events]) => [stream, events.map((e) => e.type)])).toEqual([
        ['a-1', ['a-1-E', 'a-1-E']],
        ['b-1', ['A', 'b-1-E']],
        ['c-1', []],
      ]);
    });

    it('writes nothing when any stream is not at its expected version, even one with no events', async () => {
      await store.append('b-1', [event('A')], options(0));
      await expect(
        many([
          ['a-1', 1, 0],
          ['b-1', 1, 0],
        ]),
      ).rejects.toBeInstanceOf(ExpectedVersionConflictError);
      await expect(
        many([
          ['a-1', 1, 0],
          ['b-1', 0, 2],
        ]),
      ).rejects.toBeInstanceOf(ExpectedVersionConflictError);
      await expect(
        many([
          ['a-1', 0, 0],
          ['b-1', 0, 0],
        ]),
      ).rejects.toBeInstanceOf(ExpectedVersionConflictError);
      expect(await store.readStream('a-1')).toEqual([]);
      expect(await store.readAll(START_OF_LOG)).toHaveLength(1);
      expect(
        (
          await many([
            ['a-1', 1, 'any'],
            ['b-1', 0, 'any'],
          ])
        ).map((r) => r.nextExpectedVersion),
      ).toEqual([1, 1]);
    });

    it('lets exactly one of N concurrent batches creating the same streams win', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, () =>
          many([
            ['n-1', 1, 0],
            ['n-2', 1, 0],
          ]),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results)
        if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ExpectedVersionConflictError);
      expect((await store.readStreams(['n-1', 'n-2'])).get('n-2')).toHaveLength(1);
      expect(await store.readAll(START_OF_LOG)).toHaveLength(2);
    });
  });

  describe('commands under contention (handleCommand)', () => {
    const { expectedVersion: _none, ...handleOptions } = options(0);
    /** Each command appends the number it carries, decided on the state it read. */
    const numbers = {
      initialState: () => [] as number[],
      evolve: (state: number[], e: RecordedEvent) => [...state, e.data.n as number],
      decide: (n: number) => [event('Numbered', n)],
    };

    it('lands every one of 20 concurrent commands on one stream, or refuses it whole with WriteConflictError', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, n) => handleCommand(store, 'hot-1', numbers, n, handleOptions)),
      );
      const landed = results.flatMap((r, n) => (r.status === 'fulfilled' ? [n] : []));
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(WriteConflictError);
      // The retries absorb a burst of this size.
      expect(landed.length).toBeGreaterThanOrEqual(15);
      const events = await store.readStream('hot-1');
      expect(events.map((e) => e.stream_version)).toEqual(landed.map((_, i) => i + 1));
      expect(events.map((e) => e.data.n as number).sort((a, b) => a - b)).toEqual(landed);
    });

    it('refuses with WriteConflictError after the bounded attempts, writing nothing', async () => {
      await store.append('hot-2', [event('Opened')], options(0));
      // Another writer gets in after every read of ours.
      const racing: EventStore = Object.assign(Object.create(store) as EventStore, {
        readStream: async (stream: string) => {
          const history = await store.readStream(stream);
          await store.append(stream, [event('Rival')], options('any'));
          return history;
        },
      });
      const failure = await handleCommand(racing, 'hot-2', numbers, 7, {
        ...handleOptions,
        retry: { maxAttempts: 3, sleep: async () => undefined },
      }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(WriteConflictError);
      expect(failure).toMatchObject({ attempts: 3 });
      expect((await store.readStream('hot-2')).map((e) => e.type)).toEqual(['Opened', 'Rival', 'Rival', 'Rival']);
    });
  });

  describe('snapshots (bounded reads)', () => {
    const { expectedVersion: _none, ...handleOptions } = options(0);
    type Listed = { numbers: number[]; last: { n: number; at: string } | null };
    /** Appends the number a command carries (none for -1); a snapshot every 5 events. */
    const listed = (snapshotVersion = 1) => ({
      initialState: (): Listed => ({ numbers: [], last: null }),
      evolve: (state: Listed, e: RecordedEvent): Listed => ({
        numbers: [...state.numbers, e.data.n as number],
        last: { n: e.data.n as number, at: e.occurred_at },
      }),
      decide: (n: number) => (n < 0 ? [] : [event('Numbered', n)]),
      snapshotVersion,
      snapshotEvery: 5,
    });
    const replay = async (stream: string, upTo = Number.MAX_SAFE_INTEGER) =>
      (await store.readStream(stream))
        .filter((e) => e.stream_version <= upTo)
        .reduce(listed().evolve, listed().initialState());

    it('gives the state of a full replay after every command, from snapshot and tail', async () => {
      for (let n = 1; n <= 23; n++) {
        const { state } = await handleCommand(store, 'listed-1', listed(), n, handleOptions);
        expect(state).toStrictEqual(await replay('listed-1'));
      }
      const snapshot = await store.readSnapshot<Listed>('listed-1', 1);
      expect(snapshot?.streamVersion).toBe(20);
      expect(snapshot?.state).toStrictEqual(await replay('listed-1', 20));
    });

    it('gives the same state through handleCommandInTransaction', async () => {
      for (let n = 1; n <= 12; n++) {
        const { state } = await store.transaction((tx) =>
          handleCommandInTransaction(tx, store, 'listed-2', listed(), n, handleOptions),
        );
        expect(state.numbers).toEqual((await replay('listed-2')).numbers);
      }
      expect((await store.readSnapshot('listed-2', 1))?.streamVersion).toBe(10);
    });

    it('reads the snapshot and only the events after it', async () => {
      for (let n = 1; n <= 6; n++) await handleCommand(store, 'listed-3', listed(), n, handleOptions);
      // A planted snapshot at version 5 shows that versions 1-5 are not read again.
      await fixture.database.query(`UPDATE ${store.tables.snapshots} SET state = $1::json WHERE stream_id = $2`, [
        JSON.stringify({ numbers: [99], last: null }),
        'listed-3',
      ]);
      const { state } = await handleCommand(store, 'listed-3', listed(), 7, handleOptions);
      expect(state.numbers).toEqual([99, 6, 7]);
    });

    it('ignores a snapshot of another snapshotVersion, and replaces it when the next is due', async () => {
      for (let n = 1; n <= 5; n++) await handleCommand(store, 'listed-4', listed(1), n, handleOptions);
      await fixture.database.query(`UPDATE ${store.tables.snapshots} SET state = $1::json WHERE stream_id = $2`, [
        JSON.stringify({ numbers: [99], last: null }),
        'listed-4',
      ]);
      const { state } = await handleCommand(store, 'listed-4', listed(2), 6, handleOptions);
      expect(state).toStrictEqual(await replay('listed-4'));
      expect(await store.readSnapshot('listed-4', 2)).toMatchObject({
        streamVersion: 6,
        state: await replay('listed-4'),
      });
      expect(await store.readSnapshot('listed-4', 1)).toBeUndefined();
    });

    it('reads several streams at once: from the snapshot, or after a version the caller holds', async () => {
      for (let n = 1; n <= 7; n++) await handleCommand(store, 'listed-6', listed(), n, handleOptions);
      for (let n = 1; n <= 3; n++) await handleCommand(store, 'listed-7', listed(), n, handleOptions);
      const read = await store.readManyFromSnapshot<Listed>(
        [{ stream: 'listed-6' }, { stream: 'listed-7', after: 1 }, { stream: 'listed-none' }],
        1,
      );
      const numbers = (stream: string) => read.get(stream)!.events.map((e) => e.data.n);
      expect(read.get('listed-6')!.snapshot).toEqual({
        streamVersion: 5,
        snapshotVersion: 1,
        state: await replay('listed-6', 5),
      });
      expect(numbers('listed-6')).toEqual([6, 7]);
      expect(read.get('listed-7')!.snapshot).toBeUndefined();
      expect(numbers('listed-7')).toEqual([2, 3]);
      expect(read.get('listed-none')).toEqual({ snapshot: undefined, events: [] });
      // `after` leaves the snapshot out even where there is one.
      const held = await store.readManyFromSnapshot<Listed>([{ stream: 'listed-6', after: 6 }], 1);
      expect(held.get('listed-6')!.snapshot).toBeUndefined();
      expect(held.get('listed-6')!.events.map((e) => e.stream_version)).toEqual([7]);
    });

    it('never moves a snapshot back: an older one of the same snapshotVersion is not written over a newer', async () => {
      const snapshot = (streamVersion: number, snapshotVersion = 1) => ({
        streamVersion,
        snapshotVersion,
        state: { streamVersion },
      });
      await store.saveSnapshot('s-1', snapshot(10));
      await store.saveSnapshot('s-1', snapshot(5));
      expect((await store.readSnapshot('s-1', 1))?.streamVersion).toBe(10);
      await store.saveSnapshot('s-1', snapshot(5, 2));
      expect(await store.readSnapshot('s-1', 2)).toEqual(snapshot(5, 2));
    });

    it('stays equal to a full replay when appends race the commands that write snapshots', async () => {
      await handleCommand(store, 'listed-5', listed(), 0, handleOptions);
      // Another writer appends after each of the first reads of ours, so our appends conflict and retry.
      let rivals = 3;
      const racing: EventStore = Object.assign(Object.create(store) as EventStore, {
        readFromSnapshot: async (stream: string, snapshotVersion: number) => {
          const read = await store.readFromSnapshot(stream, snapshotVersion);
          if (rivals-- > 0) await store.append(stream, [event('Rival', 1000 + rivals)], options('any'));
          return read;
        },
      });
      const retry = { sleep: async () => undefined };
      const results = await Promise.allSettled([
        ...Array.from({ length: 12 }, (_, n) =>
          handleCommand(racing, 'listed-5', listed(), n + 1, { ...handleOptions, retry }),
        ),
        ...Array.from({ length: 6 }, (_, n) => store.append('listed-5', [event('Raw', 500 + n)], options('any'))),
      ]);
      // Concurrent 'any' appends may still collide on a version; the handler retries or gives up whole.
      for (const r of results) {
        if (r.status === 'rejected')
          expect([WriteConflictError, ExpectedVersionConflictError]).toContain(r.reason.constructor);
      }
      const { state } = await handleCommand(store, 'listed-5', listed(), -1, handleOptions);
      expect(state).toStrictEqual(await replay('listed-5'));
      const snapshot = await store.readSnapshot<Listed>('listed-5', 1);
      expect(snapshot).toBeDefined();
      expect(snapshot!.state).toStrictEqual(await replay('listed-5', snapshot!.streamVersion));
    });
  });

  describe('schema', () => {
    const keyOf = async () => {
      const { rows } = await fixture.database.query<{ name: string; columns: string }>(
        `SELECT c.conname AS name, pg_get_constraintdef(c.oid) AS columns FROM pg_constraint c
          WHERE c.conrelid = '${schema}.events'::regclass AND c.contype = 'p'`,
      );
      return rows;
    };
    const indexesOf = async () =>
      (
        await fixture.database.query<{ indexname: string }>(
          `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'events' ORDER BY 1`,
          [schema],
        )
      ).rows.map((row) => row.indexname);

    it('keys the events table by log order, with three indexes in all', async () => {
      expect(await keyOf()).toEqual([
        { name: 'events_log_order', columns: 'PRIMARY KEY (transaction_id, global_position)' },
      ]);
      expect(await indexesOf()).toHaveLength(3);
    });

    it('converts a table keyed by global position, keeping its events, and does it once', async () => {
      await fixture.database.exec(`
        ALTER TABLE ${schema}.events DROP CONSTRAINT events_log_order;
        ALTER TABLE ${schema}.events ADD CONSTRAINT events_pkey PRIMARY KEY (global_position);
        CREATE INDEX events_log_order ON ${schema}.events (transaction_id, global_position);`);
      await store.append('old-1', [event('Old'), event('Older')], options(0));
      expect(await indexesOf()).toHaveLength(4);

      await store.migrate();
      await store.migrate();

      expect(await keyOf()).toEqual([
        { name: 'events_log_order', columns: 'PRIMARY KEY (transaction_id, global_position)' },
      ]);
      expect(await indexesOf()).toHaveLength(3);
      await store.append('old-1', [event('New')], options(2));
      expect((await store.readAll(START_OF_LOG)).map((e) => e.type)).toEqual(['Old', 'Older', 'New']);
    });
  });

  describe('reading the whole log', () => {
    it('reads every stream in commit order from a position, in pages', async () => {
      await store.append('a-1', [event('A1'), event('A2')], options(0));
      await store.append('b-1', [event('B1')], options(0));
      await store.append('a-1', [event('A3')], options(2));

      const all = await store.readAll(START_OF_LOG);
      expect(all.map((e) => e.type)).toEqual(['A1', 'A2', 'B1', 'A3']);

      const firstPage = await store.readAll(START_OF_LOG, 2);
      expect(firstPage.map((e) => e.type)).toEqual(['A1', 'A2']);
      const last = firstPage[1]!;
      const rest = await store.readAll({ transactionId: last.transaction_id, globalPosition: last.global_position });
      expect(rest.map((e) => e.type)).toEqual(['B1', 'A3']);
    });

    it('pages in numeric transaction order where the transaction id gains a digit', async () => {
      // Transactions 9 and 10 are long committed on any cluster; written by hand because a test
      // cannot wait for its own cluster's counter to reach the next power of ten.
      for (const [transactionId, type] of [
        ['9', 'Nine'],
        ['10', 'Ten'],
      ]) {
        await fixture.database.query(
          `INSERT INTO ${schema}.events (transaction_id, event_id, stream_id, stream_version, type,
             schema_version, data, organization, environment, occurred_at)
           VALUES ($1::xid8, $2, $3, 1, $4, 1, '{}', 'org_test', 'SANDBOX', $5)`,
          [transactionId, randomUUID(), `digits-${type}`, type, at],
        );
      }
      const first = await store.readAll(START_OF_LOG, 1);
      const second = await store.readAll(
        { transactionId: first[0]!.transaction_id, globalPosition: first[0]!.global_position },
        1,
      );
      expect([...first, ...second].map((e) => e.type)).toEqual(['Nine', 'Ten']);
    });

    it('reads after a stored checkpoint in one statement, from the start without one', async () => {
      await store.append('a-1', [event('A1'), event('A2')], options(0));
      await store.append('b-1', [event('B1')], options(0));
      expect((await store.readAfterCheckpoint('reader')).map((e) => e.type)).toEqual(['A1', 'A2', 'B1']);
      const firstPage = await store.readAfterCheckpoint('reader', 2);
      await store.saveCheckpoint('reader', {
        transactionId: firstPage[1]!.transaction_id,
        globalPosition: firstPage[1]!.global_position,
      });
      expect((await store.readAfterCheckpoint('reader')).map((e) => e.type)).toEqual(['B1']);
      expect(await store.readAfterCheckpoint('reader')).toEqual(
        await store.readAll((await store.loadCheckpoint('reader'))!),
      );
    });
  });

  describe('subscriber with a stored checkpoint', () => {
    function recordingSubscriber(name: string, seen: RecordedEvent[]) {
      return new EventLogSubscriber(store, { name, handle: async (events) => void seen.push(...events) });
    }

    it('resumes from its checkpoint after a restart without repeating or skipping', async () => {
      await store.append('a-1', [event('A1'), event('A2')], options(0));
      const seen: RecordedEvent[] = [];
      expect(await recordingSubscriber('projector', seen).catchUp()).toBe(2);

      await store.append('b-1', [event('B1')], options(0));
      const restarted = recordingSubscriber('projector', seen);
      expect(await restarted.catchUp()).toBe(1);
      expect(seen.map((e) => e.type)).toEqual(['A1', 'A2', 'B1']);
    });

    it('keeps its checkpoint when the handler fails, so the batch is handled again', async () => {
      await store.append('a-1', [event('A1')], options(0));
      const failing = new EventLogSubscriber(store, {
        name: 'flaky',
        handle: async () => {
          throw new Error('handler down');
        },
      });
      await expect(failing.catchUp()).rejects.toThrow('handler down');
      const seen: RecordedEvent[] = [];
      expect(await recordingSubscriber('flaky', seen).catchUp()).toBe(1);
    });

    it('never skips an event whose transaction wrote something else first and appended last', async () => {
      await fixture.database.exec(`CREATE TABLE ${schema}.read_model (id text PRIMARY KEY)`);
      const seen: RecordedEvent[] = [];
      const subscriber = recordingSubscriber('wrote-first', seen);
      const wrote = deferred();
      const appendNow = deferred();
      // Transaction L gets its transaction id from a read-model row, long before it appends.
      const late = store.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${schema}.read_model (id) VALUES ('row')`);
        wrote.resolve();
        await appendNow.promise;
        await tx.append('late-1', [event('Late')], options(0));
      });
      await wrote.promise;
      try {
        if (fixture.concurrentTransactions) {
          await store.append('early-1', [event('Early')], options(0));
          await subscriber.catchUp();
          expect(seen.map((e) => e.type)).toEqual([]);
        }
      } finally {
        appendNow.resolve();
        await late;
      }
      await subscriber.catchUp();
      if (!fixture.concurrentTransactions) await store.append('early-1', [event('Early')], options(0));
      await subscriber.catchUp();
      expect(seen.map((e) => e.type)).toEqual(['Late', 'Early']);
    });

    it('is not held back by a transaction that writes elsewhere', async () => {
      if (!fixture.concurrentTransactions) return; // one connection: nothing else can be open
      await fixture.database.exec(`CREATE TABLE ${schema}.elsewhere (id text PRIMARY KEY)`);
      const seen: RecordedEvent[] = [];
      const subscriber = recordingSubscriber('elsewhere', seen);
      const wrote = deferred();
      const finish = deferred();
      // Another service's transaction: it has a transaction id and stays open, but never
      // touches this store's events.
      const elsewhere = fixture.database.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${schema}.elsewhere (id) VALUES ('row')`);
        wrote.resolve();
        await finish.promise;
      });
      await wrote.promise;
      try {
        await store.append('after-1', [event('After')], options(0));
        await subscriber.catchUp();
        expect(seen.map((e) => e.type)).toEqual(['After']);
      } finally {
        finish.resolve();
        await elsewhere;
      }
    });

    it('loses no event while writers of every kind race a reader', async () => {
      await fixture.database.exec(`CREATE TABLE ${schema}.side (id text PRIMARY KEY)`);
      const seen: RecordedEvent[] = [];
      const subscriber = recordingSubscriber('race', seen);
      const pause = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      // Three kinds of appender: one statement; a transaction that writes elsewhere first and
      // appends later; a transaction that appends first and stays open a little.
      const write = async (writer: number, op: number) => {
        const stream = `race-${writer}-${op}`;
        if (op % 3 === 0) return store.append(stream, [event('Single')], options(0));
        return store.transaction(async (tx) => {
          if (op % 3 === 1) {
            await tx.query(`INSERT INTO ${schema}.side (id) VALUES ($1)`, [stream]);
            await pause();
          }
          await tx.append(stream, [event('InTransaction')], options(0));
          await pause();
        });
      };
      let writing = true;
      const reading = (async () => {
        while (writing) await subscriber.catchUp();
      })();
      const writers = fixture.concurrentTransactions ? 6 : 1;
      await Promise.all(
        Array.from({ length: writers }, async (_, writer) => {
          for (let op = 0; op < 30; op++) await write(writer, op);
        }),
      );
      writing = false;
      await reading;
      await subscriber.catchUp();
      const logged = (await store.readAll(START_OF_LOG, 10_000)).map((e) => e.id);
      expect(logged).toHaveLength(writers * 30);
      expect(seen.map((e) => e.id)).toEqual(logged);
    });

    it('never skips an event whose transaction began earlier and committed later than another', async () => {
      await store.append('before-1', [event('Before')], options(0));
      const seen: RecordedEvent[] = [];
      const subscriber = recordingSubscriber('late-commit', seen);
      await subscriber.catchUp();

      const lateAppended = deferred();
      const releaseLate = deferred();
      // Transaction L takes its place in the log first and stays open.
      const late = store.transaction(async (tx) => {
        await tx.append('late-1', [event('Late')], options(0));
        lateAppended.resolve();
        await releaseLate.promise;
      });
      await lateAppended.promise;

      try {
        if (fixture.concurrentTransactions) {
          // Transaction E begins after L and commits while L is still open.
          await store.append('early-1', [event('Early')], options(0));
          // A naive reader would deliver Early now and move past Late's position for good.
          await subscriber.catchUp();
          expect(seen.map((e) => e.type)).toEqual(['Before']);
          releaseLate.resolve();
          await late;
        } else {
          // One connection: E and the reader queue behind L; nothing can overtake it.
          const early = store.append('early-1', [event('Early')], options(0));
          const reading = subscriber.catchUp();
          releaseLate.resolve();
          await Promise.all([late, early, reading]);
        }
      } finally {
        // A failed expectation must not leave L open and hang the suite.
        releaseLate.resolve();
        await late.catch(() => undefined);
      }

      await subscriber.catchUp();
      expect(seen.map((e) => e.type).sort()).toEqual(['Before', 'Early', 'Late']);
      expect(new Set(seen.map((e) => e.id)).size).toBe(3);
      expect((await store.readAll(START_OF_LOG)).map((e) => e.type)).toEqual(['Before', 'Late', 'Early']);
    });

    it('delivers every event of many concurrent writers, in stream order, while it follows the log', async () => {
      const seen: RecordedEvent[] = [];
      const failures: unknown[] = [];
      const subscriber = new EventLogSubscriber(store, {
        name: 'follower',
        pollIntervalMs: 5,
        onError: (error) => failures.push(error),
        handle: async (events) => void seen.push(...events),
      });
      subscriber.start();
      const streams = 20;
      const perStream = 5;
      await Promise.all(
        Array.from({ length: streams }, async (_, s) => {
          for (let v = 0; v < perStream; v++) await store.append(`w-${s}`, [event('W', v)], options(v));
        }),
      );
      const expected = streams * perStream;
      for (let i = 0; i < 400 && seen.length < expected; i++) await new Promise((r) => setTimeout(r, 25));
      await subscriber.stop();
      expect(new Set(seen.map((e) => e.id)).size).toBe(expected);
      // At-least-once: a batch repeats only when saving its checkpoint failed.
      if (failures.length === 0) expect(seen).toHaveLength(expected);
      for (let s = 0; s < streams; s++) {
        const values = seen.filter((e) => e.stream === `w-${s}`).map((e) => e.data.n);
        expect([...new Set(values)]).toEqual([0, 1, 2, 3, 4]);
      }
    });

    /** A running subscriber that polls only every minute (unless told), counting its finished reads of the log. */
    function followingSubscriber(
      name: string,
      handle: (events: RecordedEvent[]) => Promise<void>,
      polls: Pick<SubscriberOptions, 'pollIntervalMs' | 'idlePollIntervalMs'> = { pollIntervalMs: 60_000 },
      {
        wokenByTest = false,
        ...more
      }: Pick<SubscriberOptions, 'lingerMs' | 'readIntervalMs'> & { wokenByTest?: boolean } = {},
    ) {
      let reads = 0;
      const counting = Object.create(store) as EventStore;
      // Counted once done, so that a test waiting for a read knows that it has read.
      counting.readAfterCheckpoint = async (...args) => {
        const events = await store.readAfterCheckpoint(...args);
        reads++;
        return events;
      };
      counting.readAll = async (...args) => {
        const events = await store.readAll(...args);
        reads++;
        return events;
      };
      // Appends wake it as the store announces them or, `wokenByTest`, only when the test says (`announce`).
      const announced = new Set<() => void>();
      counting.onAppended = (listener) => {
        announced.add(listener);
        const unsubscribe = wokenByTest ? () => undefined : store.onAppended(listener);
        return () => {
          announced.delete(listener);
          unsubscribe();
        };
      };
      const subscriber = new EventLogSubscriber(counting, { name, handle, ...polls, ...more });
      const announce = () => announced.forEach((listener) => listener());
      return { subscriber, reads: () => reads, announce };
    }

    const until = async (done: () => boolean) => {
      for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
    };

    it('reads the log once per short batch, not again at once to find it empty', async () => {
      const seen: RecordedEvent[] = [];
      const { subscriber, reads } = followingSubscriber('once', async (events) => void seen.push(...events));
      subscriber.start();
      await until(() => reads() === 1);
      await store.append('a-1', [event('A1')], options(0));
      await until(() => seen.length === 1);
      await new Promise((r) => setTimeout(r, 50));
      await subscriber.stop();
      expect(seen.map((e) => e.type)).toEqual(['A1']);
      expect(reads()).toBe(2);
    });

    it('polls a quiet log less and less often, and at once again when an append wakes it', async () => {
      const seen: RecordedEvent[] = [];
      const { subscriber, reads } = followingSubscriber('backing-off', async (events) => void seen.push(...events), {
        pollIntervalMs: 20,
        idlePollIntervalMs: 80,
      });
      subscriber.start();
      // Reads at 0, 20, 60, 140, 220, 300, ... ms: six in the first 350 ms (18 without backing off).
      await new Promise((r) => setTimeout(r, 350));
      const quietReads = reads();
      await store.append('a-1', [event('A1')], options(0));
      await until(() => seen.length === 1);
      await subscriber.stop();
      expect(quietReads).toBeGreaterThanOrEqual(2);
      expect(quietReads).toBeLessThanOrEqual(7);
      expect(seen.map((e) => e.type)).toEqual(['A1']);
    });

    /** A running subscriber of one-event batches that saves its checkpoint at most every minute, recording each save. */
    function seldomSaving(name: string, saves: number[], handle: (events: RecordedEvent[]) => Promise<void>) {
      const counting = Object.create(store) as EventStore;
      counting.saveCheckpoint = (checkpoint, position, sql) => {
        saves.push(position.globalPosition);
        return store.saveCheckpoint(checkpoint, position, sql);
      };
      return new EventLogSubscriber(counting, {
        name,
        handle,
        batchSize: 1,
        pollIntervalMs: 60_000,
        checkpointIntervalMs: 60_000,
      });
    }

    it('saves its checkpoint at most every checkpointIntervalMs while batches come, and at once when the log is quiet', async () => {
      await store.append('a-1', [event('A1'), event('A2'), event('A3')], options(0));
      const seen: RecordedEvent[] = [];
      const saves: number[] = [];
      const subscriber = seldomSaving('seldom', saves, async (events) => void seen.push(...events));
      subscriber.start();
      await until(() => saves.length > 0);
      await subscriber.stop();
      expect(seen.map((e) => e.type)).toEqual(['A1', 'A2', 'A3']);
      // Three batches, one save: after the read that found the log quiet.
      expect(saves).toEqual([seen[2]!.global_position]);
      expect((await store.loadCheckpoint('seldom'))?.globalPosition).toBe(seen[2]!.global_position);
    });

    it('saves what it handled when it stops between saves, and starts again from there', async () => {
      await store.append('a-1', [event('A1'), event('A2'), event('A3')], options(0));
      const seen: RecordedEvent[] = [];
      const saves: number[] = [];
      const second = deferred();
      const release = deferred();
      const subscriber = seldomSaving('stopping', saves, async (events) => {
        seen.push(...events);
        if (seen.length === 2) {
          second.resolve();
          await release.promise;
        }
      });
      subscriber.start();
      await second.promise;
      const stopping = subscriber.stop();
      release.resolve();
      await stopping;
      expect(saves).toEqual([seen[1]!.global_position]);
      const restarted: RecordedEvent[] = [];
      expect(await recordingSubscriber('stopping', restarted).catchUp()).toBe(1);
      expect(restarted.map((e) => e.type)).toEqual(['A3']);
    });

    it('with lingerMs, reads the appends announced within it as one batch', async () => {
      const batches: string[][] = [];
      const { subscriber, reads, announce } = followingSubscriber(
        'lingering',
        async (events) => void batches.push(events.map((e) => e.type)),
        { pollIntervalMs: 60_000 },
        { lingerMs: 50, wokenByTest: true },
      );
      subscriber.start();
      await until(() => reads() === 1);
      // Two commands' appends, announced one after the other (however long the appends took).
      await store.append('a-1', [event('A1')], options(0));
      await store.append('b-1', [event('B1')], options(0));
      announce();
      announce();
      await until(() => batches.length > 0);
      await new Promise((r) => setTimeout(r, 100));
      await subscriber.stop();
      expect(batches).toEqual([['A1', 'B1']]);
      expect(reads()).toBe(2);
    });

    it('with readIntervalMs, reads appends that keep coming at most once per interval, and the first after a quiet spell at once', async () => {
      const batches: string[][] = [];
      const { subscriber, reads } = followingSubscriber(
        'read-interval',
        async (events) => void batches.push(events.map((e) => e.type)),
        { pollIntervalMs: 60_000 },
        { readIntervalMs: 500 },
      );
      subscriber.start();
      await until(() => reads() === 1);
      await new Promise((r) => setTimeout(r, 550)); // quiet for longer than the interval
      const quietAppendAt = Date.now();
      await store.append('a-1', [event('A1')], options(0));
      await until(() => batches.length === 1);
      const firstWaited = Date.now() - quietAppendAt;
      // Appended within the interval after A1's read began: both wait for the next read.
      await store.append('b-1', [event('B1')], options(0));
      await store.append('c-1', [event('C1')], options(0));
      await until(() => batches.length === 2);
      await subscriber.stop();
      expect(batches).toEqual([['A1'], ['B1', 'C1']]);
      expect(firstWaited).toBeLessThan(500);
      expect(reads()).toBe(3);
    });

    it('reads again at once when this process appended while a batch was handled', async () => {
      const seen: RecordedEvent[] = [];
      const handling = deferred();
      const handled = deferred();
      const { subscriber } = followingSubscriber('appended-meanwhile', async (events) => {
        seen.push(...events);
        if (seen.length === 1) {
          handling.resolve();
          await handled.promise;
        }
      });
      await store.append('a-1', [event('A1')], options(0));
      subscriber.start();
      await handling.promise;
      await store.append('b-1', [event('B1')], options(0));
      handled.resolve();
      // Without the re-read, B1 would wait for the minute's poll.
      await until(() => seen.length === 2);
      await subscriber.stop();
      expect(seen.map((e) => e.type)).toEqual(['A1', 'B1']);
    });
  });

  describe('read models in the append transaction', () => {
    beforeEach(async () => {
      await fixture.database.exec(`CREATE TABLE ${schema}.product_names (id text PRIMARY KEY, name text NOT NULL)`);
    });

    it('commits the read model with the events', async () => {
      await store.transaction(async (tx) => {
        await tx.append('product-1', [{ type: 'ProductCreated', data: { name: 'Pro' } }], options(0));
        await tx.query(`INSERT INTO ${schema}.product_names VALUES ($1, $2)`, ['product-1', 'Pro']);
      });
      const { rows } = await fixture.database.query(`SELECT name FROM ${schema}.product_names`);
      expect(rows).toEqual([{ name: 'Pro' }]);
      expect(await store.readStream('product-1')).toHaveLength(1);
    });

    it('rolls the read model back with the append', async () => {
      await expect(
        store.transaction(async (tx) => {
          await tx.append('product-1', [{ type: 'ProductCreated', data: { name: 'Pro' } }], options(0));
          await tx.query(`INSERT INTO ${schema}.product_names VALUES ($1, $2)`, ['product-1', 'Pro']);
          throw new Error('projection failed');
        }),
      ).rejects.toThrow('projection failed');
      const { rows } = await fixture.database.query(`SELECT name FROM ${schema}.product_names`);
      expect(rows).toEqual([]);
      expect(await store.readStream('product-1')).toEqual([]);
      expect(await store.readAll(START_OF_LOG)).toEqual([]);
    });

    it('rolls the read model back when the append conflicts', async () => {
      await store.append('product-1', [event('ProductCreated')], options(0));
      await expect(
        store.transaction(async (tx) => {
          await tx.query(`INSERT INTO ${schema}.product_names VALUES ($1, $2)`, ['product-1', 'Stale']);
          await tx.append('product-1', [event('ProductRenamed')], options(0));
        }),
      ).rejects.toBeInstanceOf(ExpectedVersionConflictError);
      const { rows } = await fixture.database.query(`SELECT name FROM ${schema}.product_names`);
      expect(rows).toEqual([]);
    });
  });
}
