import { type AppendOptions, type EventStore, ExpectedVersionConflictError, actingAs } from '../src';

/** The part of the event store every adapter offers: streams, appends at an expected version. */
export type StreamStore = Pick<EventStore, 'append' | 'readStream' | 'readHistory'>;

/** The time, tenant and expected version the contract's appends are made with. */
export const at = new Date('2026-11-21T08:00:00.000Z');
export const options = (expectedVersion: AppendOptions['expectedVersion']): AppendOptions => ({
  expectedVersion,
  organization: 'org_test',
  environment: 'SANDBOX',
  occurredAt: at,
});
export const event = (type: string, n = 0) => ({ type, data: { n } });

/**
 * Streams: append and read in the domain-event envelope, optimistic concurrency. Part of the
 * event-store contract (./event-store.contract.ts) for the SQL adapters, and all of it that the
 * EventStoreDB adapter can offer (docs/decisions/0012-eventstoredb.md). `store` is the store of
 * the running test; each test's streams must be new to it.
 */
export function streamContract(store: () => StreamStore) {
  describe('append and read a stream', () => {
    it('numbers a new stream from 1 and reads it back in the domain-event envelope', async () => {
      const result = await store().append(
        'product-prod_1',
        [event('ProductCreated', 1), event('ProductRenamed', 2)],
        options(0),
      );
      expect(result.nextExpectedVersion).toBe(2);

      const events = await store().readStream('product-prod_1');
      expect(events.map((e) => [e.type, e.stream_version, e.data])).toEqual([
        ['ProductCreated', 1, { n: 1 }],
        ['ProductRenamed', 2, { n: 2 }],
      ]);
      expect(events[0]).toMatchObject({
        stream: 'product-prod_1',
        schema_version: 1,
        organization: 'org_test',
        environment: 'SANDBOX',
        occurred_at: '2026-11-21T08:00:00.000Z',
      });
      expect(events[0]!.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(events[1]!.global_position).toBeGreaterThan(events[0]!.global_position);
      expect(await store().readStream('product-prod_1', 1)).toHaveLength(1);
      expect(await store().readStream('product-absent')).toEqual([]);
    });

    it('appends after the version read', async () => {
      await store().append('s-1', [event('A')], options(0));
      await store().append('s-1', [event('B')], options(1));
      await store().append('s-1', [event('C')], options('any'));
      expect((await store().readStream('s-1')).map((e) => e.stream_version)).toEqual([1, 2, 3]);
    });
  });

  it('returns the appended events as a read gives them back, data as stored JSON', async () => {
    const data = { at: new Date('2026-11-21T08:00:00.000Z'), gone: undefined, nested: { b: 1, a: [1, null] } };
    const result = await store().append('shape-1', [{ type: 'Shaped', data }, event('Plain', 2)], options(0));
    const read = await store().readStream('shape-1');
    expect(result.events).toStrictEqual(read);
    expect(result.events[0]!.data).toStrictEqual({ at: '2026-11-21T08:00:00.000Z', nested: { b: 1, a: [1, null] } });
  });

  it("keeps each event's actor for the record's history, and pages it", async () => {
    await actingAs({ type: 'api_key', id: 'key_contract' }, () =>
      store().append('history-1', [event('Created', 1), event('Renamed', 2)], options(0)),
    );
    await store().append('history-1', [event('Swept', 3)], options(2));

    const first = await store().readHistory('history-1', { afterVersion: 0, limit: 2 });
    expect(first.hasMore).toBe(true);
    expect(first.events.map((e) => [e.version, e.type, e.actor])).toEqual([
      [1, 'Created', { type: 'api_key', id: 'key_contract' }],
      [2, 'Renamed', { type: 'api_key', id: 'key_contract' }],
    ]);
    expect(first.events[0]).toMatchObject({
      data: { n: 1 },
      organization: 'org_test',
      environment: 'SANDBOX',
      occurredAt: '2026-11-21T08:00:00.000Z',
    });
    const rest = await store().readHistory('history-1', { afterVersion: 2, limit: 2 });
    expect(rest).toEqual({
      hasMore: false,
      events: [expect.objectContaining({ version: 3, type: 'Swept', actor: { type: 'system' } })],
    });
    expect(await store().readHistory('history-absent', { afterVersion: 0, limit: 2 })).toEqual({
      events: [],
      hasMore: false,
    });
  });

  describe('optimistic concurrency', () => {
    it('rejects a stale expected version with a typed conflict and writes nothing', async () => {
      await store().append('s-1', [event('A'), event('B')], options(0));
      await expect(store().append('s-1', [event('C')], options(1))).rejects.toBeInstanceOf(
        ExpectedVersionConflictError,
      );
      await expect(store().append('s-1', [event('C')], options(0))).rejects.toBeInstanceOf(
        ExpectedVersionConflictError,
      );
      expect(await store().readStream('s-1')).toHaveLength(2);
    });

    it('rejects an expected version ahead of the stream', async () => {
      await store().append('s-1', [event('A')], options(0));
      await expect(store().append('s-1', [event('B')], options(5))).rejects.toBeInstanceOf(
        ExpectedVersionConflictError,
      );
      await expect(store().append('s-new', [event('B')], options(3))).rejects.toBeInstanceOf(
        ExpectedVersionConflictError,
      );
      expect(await store().readStream('s-1')).toHaveLength(1);
    });

    it('lets exactly one of N concurrent appends with the same expected version win', async () => {
      await store().append('race-1', [event('Opened')], options(0));
      const writers = 12;
      const results = await Promise.allSettled(
        Array.from({ length: writers }, (_, i) =>
          store().append('race-1', [event('Raced', i), event('Raced2', i)], options(1)),
        ),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(writers - 1);
      for (const failure of lost) expect(failure.reason).toBeInstanceOf(ExpectedVersionConflictError);

      const events = await store().readStream('race-1');
      expect(events.map((e) => e.stream_version)).toEqual([1, 2, 3]);
      expect(new Set(events.slice(1).map((e) => e.data.n)).size).toBe(1);
    });

    it('lets exactly one of N concurrent creators of a new stream win', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => store().append('new-1', [event('Created', i)], options(0))),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(await store().readStream('new-1')).toHaveLength(1);
    });
  });
}
