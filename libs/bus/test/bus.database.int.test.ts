import { type Database, EventStore, pgliteDatabase, postgresDatabase } from '@billing/eventstore';
import { describeWithServer, eventually, uniqueName } from '@billing/testing';
import { type ConsumedMessage, DatabaseBus, type DatabaseBusOptions, type Subscription } from '../src';
import { busContract, eventOf } from './bus.contract';
import { relayContract } from './relay.contract';

jest.setTimeout(60000);

/** A bus and an event store on one database, as the embedded default wires them. */
async function onDatabase(database: Database, schema: string, options: DatabaseBusOptions = {}) {
  const store = new EventStore(database, { schema: `${schema}_store` });
  await store.migrate();
  const bus = new DatabaseBus(database, { schema: `${schema}_bus`, ...options });
  return {
    bus,
    store,
    batches: true,
    /** The messages on `topic` (of `key` only, given one), once there are `expectedCount` of them. */
    readTopic: (topic: string, expectedCount: number, key?: string) =>
      eventually(async () => {
        const messages = (await bus.messages(topic)).filter((m) => key === undefined || m.key === key);
        expect(messages.length).toBeGreaterThanOrEqual(expectedCount);
        return messages;
      }),
  };
}

describe('DatabaseBus on PGlite', () => {
  busContract(async () => {
    const database = await pgliteDatabase();
    const fixture = await onDatabase(database, 'bus_test');
    return {
      ...fixture,
      close: async () => {
        await fixture.bus.close();
        await database.close();
      },
    };
  });

  describe('relay', () => {
    relayContract(async () => {
      const database = await pgliteDatabase();
      const fixture = await onDatabase(database, 'relay_test');
      return {
        ...fixture,
        close: async () => {
          await fixture.bus.close();
          await database.close();
        },
      };
    });
  });
});

describe('DatabaseBus retention', () => {
  it('deletes old messages that every group active since has passed, and keeps the rest', async () => {
    const database = await pgliteDatabase();
    const bus = new DatabaseBus(database, { schema: 'retention' });
    try {
      const topic = 'kept_events';
      const seen: number[] = [];
      const subscription = await bus.subscribe({
        groupId: 'fast',
        topics: [topic],
        handler: async (m) => void seen.push(m.value.stream_version),
      });
      await bus.publish(
        topic,
        [1, 2, 3].map((n) => ({ key: 'k', value: eventOf('k', n) })),
      );
      await eventually(() => expect(seen).toEqual([1, 2, 3]));
      await subscription.stop();
      // Published two days ago; another group has only handled the first message.
      await database.query(`UPDATE retention.messages SET published_at = now() - interval '2 days'`);
      await database.query(
        `INSERT INTO retention.group_offsets (group_id, topic, partition, next_offset)
         SELECT 'slow', topic, partition, 1 FROM retention.partitions WHERE topic = $1`,
        [topic],
      );
      const day = 24 * 3600_000;
      expect(await bus.prune(3 * day)).toBe(0);
      expect(await bus.prune(day)).toBe(1);
      expect((await bus.messages(topic)).map((m) => m.offset)).toEqual(['1', '2']);
      // A group silent for longer than the retention holds nothing back (as Kafka expires its offsets).
      await database.query(
        `UPDATE retention.group_offsets SET committed_at = now() - interval '36 hours' WHERE group_id = 'slow'`,
      );
      expect(await bus.prune(day)).toBe(2);
    } finally {
      await bus.close();
      await database.close();
    }
  });
});

describeWithServer('DATABASE_URL', 'DatabaseBus on PostgreSQL', (databaseUrl) => {
  const schemas: string[] = [];
  const connect = () => postgresDatabase({ connectionString: databaseUrl, max: 5 });
  const dropAll = async (database: Database, ...names: string[]) => {
    for (const name of names) await database.exec(`DROP SCHEMA IF EXISTS ${name}_store, ${name}_bus CASCADE`);
  };

  busContract(async () => {
    const database = connect();
    const schema = uniqueName('bus_test');
    const fixture = await onDatabase(database, schema);
    return {
      ...fixture,
      close: async () => {
        await fixture.bus.close();
        await dropAll(database, schema);
        await database.close();
      },
    };
  });

  describe('relay', () => {
    relayContract(async () => {
      const database = connect();
      const schema = uniqueName('relay_test');
      const fixture = await onDatabase(database, schema);
      return {
        ...fixture,
        close: async () => {
          await fixture.bus.close();
          await dropAll(database, schema);
          await database.close();
        },
      };
    });
  });

  describe('between processes (a bus per connection pool)', () => {
    const databases: Database[] = [];
    const subscriptions: Subscription[] = [];
    const buses: DatabaseBus[] = [];
    let schema: string;

    /** A bus on a pool of its own: to the others it is another process, reached only through the tables and NOTIFY. */
    const processBus = (options: DatabaseBusOptions = {}) => {
      const database = connect();
      databases.push(database);
      const bus = new DatabaseBus(database, { schema, ...options });
      buses.push(bus);
      return bus;
    };

    beforeEach(() => {
      schema = uniqueName('bus_procs');
      schemas.push(schema);
    });

    afterEach(async () => {
      await Promise.all(subscriptions.splice(0).map((s) => s.stop()));
      await Promise.all(buses.splice(0).map((b) => b.close()));
      await Promise.all(databases.splice(0).map((d) => d.close()));
    });

    afterAll(async () => {
      const database = connect();
      for (const name of schemas) await database.exec(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await database.close();
    });

    it("wakes another process's consumer through NOTIFY, not its poll", async () => {
      const topic = uniqueName('notified');
      const publisher = processBus();
      const consumer = processBus({ pollIntervalMs: 600_000 });
      const received: string[] = [];
      subscriptions.push(
        await consumer.subscribe({
          groupId: uniqueName('g'),
          topics: [topic],
          handler: async (m) => void received.push(m.value.id),
        }),
      );
      const events = [1, 2, 3].map((n) => eventOf(`k-${n}`, 1));
      for (const event of events) await publisher.publish(topic, [{ key: event.stream, value: event }]);
      await eventually(() => expect(received.sort()).toEqual(events.map((e) => e.id).sort()), 20000);
    });

    it('keeps offsets gap-free and each key in order when processes publish at once', async () => {
      const topic = uniqueName('contended');
      const publishers = [1, 2, 3, 4].map(() => processBus());
      const keys = ['k-a', 'k-b', 'k-c', 'k-d', 'k-e'];
      // Each publisher owns some keys' versions in turn, so one key's messages come from several
      // processes; a publish carries messages of several partitions.
      await Promise.all(
        publishers.map(async (bus, p) => {
          for (let round = 0; round < 10; round++) {
            const n = round * publishers.length + p + 1;
            await bus.publish(
              topic,
              keys.map((key) => ({ key, value: eventOf(key, n) })),
            );
          }
        }),
      );
      const stored = await publishers[0]!.messages(topic);
      expect(stored).toHaveLength(keys.length * 40);
      for (const partition of new Set(stored.map((m) => m.partition))) {
        const offsets = stored.filter((m) => m.partition === partition).map((m) => Number(m.offset));
        expect(offsets).toEqual(offsets.map((_, i) => i));
      }
      // Within one publish call a key's messages are in order; across processes the order is
      // the commit order, and each publisher's own versions stay in its order.
      for (const key of keys) {
        const versions = stored.filter((m) => m.key === key).map((m) => JSON.parse(m.value).stream_version as number);
        expect(versions.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
        for (let p = 0; p < publishers.length; p++) {
          const own = stored
            .filter((m) => m.key === key)
            .map((m) => JSON.parse(m.value).stream_version as number)
            .filter((v) => (v - 1) % publishers.length === p);
          expect(own).toEqual([...own].sort((a, b) => a - b));
        }
      }
    });

    it('shares partitions between members in different processes, each message once', async () => {
      const topic = uniqueName('shared');
      const groupId = uniqueName('g');
      const seen = new Map<string, string[]>();
      for (const name of ['one', 'two']) {
        const bus = processBus({ heartbeatIntervalMs: 200 });
        seen.set(name, []);
        subscriptions.push(
          await bus.subscribe({
            groupId,
            topics: [topic],
            handler: async (m) => void seen.get(name)!.push(m.value.id),
          }),
        );
      }
      const sent = Array.from({ length: 30 }, (_, i) => eventOf(`stream-${i}`, 1));
      await buses[0]!.publish(
        topic,
        sent.map((value) => ({ key: value.stream, value })),
      );
      await eventually(() => expect(seen.get('one')!.length + seen.get('two')!.length).toBe(30), 20000);
      expect([...seen.get('one')!, ...seen.get('two')!].sort()).toEqual(sent.map((e) => e.id).sort());
      expect(seen.get('one')!.length).toBeGreaterThan(0);
      expect(seen.get('two')!.length).toBeGreaterThan(0);
    });

    it("takes over a dead member's partitions after its session lapses, from the last committed offset", async () => {
      const topic = uniqueName('takeover');
      const groupId = uniqueName('g');
      const options = { heartbeatIntervalMs: 100, sessionTimeoutMs: 1500 };
      const dying = processBus(options);
      const first: ConsumedMessage[] = [];
      let hang: () => void = () => undefined;
      const hung = new Promise<void>((resolve) => (hang = resolve));
      await dying.subscribe({
        groupId,
        topics: [topic],
        handler: async (m) => {
          first.push(m);
          // The third message never finishes: the process "dies" in its handler.
          if (m.value.stream_version === 3) await hung;
        },
      });
      const events = [1, 2, 3, 4].map((n) => eventOf('one-key', n));
      await dying.publish(
        topic,
        events.map((value) => ({ key: 'one-key', value })),
      );
      await eventually(() => expect(first).toHaveLength(3));
      // Death: its heartbeat stops (no stop(), no release), and its pool goes away.
      const internals = dying as unknown as { members: Set<{ timer: NodeJS.Timeout; stopped: boolean }> };
      for (const member of internals.members) {
        clearInterval(member.timer);
        member.stopped = true;
      }

      const survivor = processBus(options);
      const second: number[] = [];
      subscriptions.push(
        await survivor.subscribe({
          groupId,
          topics: [topic],
          handler: async (m) => void second.push(m.value.stream_version),
        }),
      );
      // 1 and 2 were handled but their batch never committed (3 was in it): at-least-once, in order.
      await eventually(() => expect(second).toEqual([1, 2, 3, 4]), 20000);
      hang();
    });
  });
});
