import { type Database, type EventStore, defineAggregate, streamEvents } from '../src';
import { at } from './stream.contract';

type LabelEvent = { type: 'LabelSet'; data: { label_id: string; text: string } };
type Label = { text: string | null; changes: number };

const labelAggregate = defineAggregate({
  stream: (id: string) => `label-${id}`,
  events: streamEvents<LabelEvent>({ LabelSet: true }),
  initialState: (): Label => ({ text: null, changes: 0 }),
  evolve: (state: Label, event: LabelEvent): Label => ({ text: event.data.text, changes: state.changes + 1 }),
  decide: (command: { id: string; text: string }, state: Label): LabelEvent[] =>
    command.text === state.text ? [] : [{ type: 'LabelSet', data: { label_id: command.id, text: command.text } }],
  project: async (tx, schema, events) => {
    for (const { data, stream_version } of events) {
      await tx.query(
        `INSERT INTO ${schema}.labels (id, text, version) VALUES ($1, $2, $3)
         ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text, version = EXCLUDED.version`,
        [data.label_id, data.text, stream_version],
      );
    }
  },
  snapshot: { version: 1, every: 3 },
});

const tenant = { organization: 'org_test', environment: 'SANDBOX' as const, occurredAt: at };

/**
 * `defineAggregate` on a real store: its read models commit or roll back with its events, its
 * snapshots give the state of a full replay. Part of the event-store contract.
 */
export function aggregateContract(context: () => { store: EventStore; database: Database; schema: string }) {
  describe('aggregates declared with defineAggregate', () => {
    let store: EventStore;
    let database: Database;
    let schema: string;
    const labels = async () => (await database.query(`SELECT id, text, version FROM ${schema}.labels`)).rows;

    beforeEach(async () => {
      ({ store, database, schema } = context());
      await database.exec(`CREATE TABLE ${schema}.labels (id text PRIMARY KEY, text text NOT NULL, version int)`);
    });

    it("writes its read model in the append's transaction, then the command's own", async () => {
      const seen: unknown[] = [];
      const { state, events } = await labelAggregate.handle(
        store,
        'l1',
        { id: 'l1', text: 'Pro' },
        {
          ...tenant,
          alsoProject: async (tx) => void seen.push(...(await tx.query(`SELECT text FROM ${schema}.labels`)).rows),
        },
      );
      expect(state).toEqual({ text: 'Pro', changes: 1 });
      expect(events.map((e) => [e.stream, e.stream_version])).toEqual([['label-l1', 1]]);
      expect(seen).toEqual([{ text: 'Pro' }]);
      expect(await labels()).toEqual([{ id: 'l1', text: 'Pro', version: 1 }]);
    });

    it('rolls its events and read model back when a later projection fails', async () => {
      const failing = labelAggregate.handle(
        store,
        'l2',
        { id: 'l2', text: 'Pro' },
        {
          ...tenant,
          alsoProject: async () => {
            throw new Error('projection failed');
          },
        },
      );
      await expect(failing).rejects.toThrow('projection failed');
      expect(await store.readStream('label-l2')).toEqual([]);
      expect(await labels()).toEqual([]);
    });

    it('gives the state of a full replay from its snapshot and the events after it', async () => {
      for (const text of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) {
        const { state } = await labelAggregate.handle(store, 'l3', { id: 'l3', text }, tenant);
        expect(state).toEqual(labelAggregate.fold(await store.readStream('label-l3')));
      }
      expect(await store.readSnapshot('label-l3', 1)).toEqual({
        streamVersion: 6,
        snapshotVersion: 1,
        state: { text: 'f', changes: 6 },
      });
    });

    it("commits inside the caller's transaction, with the caller's writes", async () => {
      await store.transaction(async (tx) => {
        await labelAggregate.handleInTransaction(tx, store, 'l4', { id: 'l4', text: 'Basic' }, tenant);
        await tx.query(`UPDATE ${schema}.labels SET version = 0 WHERE id = 'l4'`);
      });
      expect(await labels()).toEqual([{ id: 'l4', text: 'Basic', version: 0 }]);
      expect(labelAggregate.fold(await store.readStream('label-l4'))).toEqual({ text: 'Basic', changes: 1 });
    });
  });
}
