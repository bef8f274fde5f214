import { randomUUID } from 'node:crypto';
import type { DomainEventEnvelope } from '@billing/contracts';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import { eventually, uniqueName } from '@billing/testing';
import {
  type Bus,
  type ConsumedMessage,
  DLQ_HEADERS,
  type RawMessage,
  type Subscription,
  dlqTopicOf,
  exactlyOnce,
} from '../src';

export interface BusFixture {
  bus: Bus;
  /** Every message of a topic as stored, parsed or not (to read DLQs). */
  readTopic: (topic: string, expectedCount: number) => Promise<RawMessage[]>;
  /** An event store for the consumer-side dedupe tests. */
  store: EventStore;
  /** The adapter hands a batching handler the messages it has at once (the in-process bus does not). */
  batches?: boolean;
  close: () => Promise<void>;
}

export function eventOf(stream: string, n: number, id: string = randomUUID()): DomainEventEnvelope {
  return {
    id,
    type: 'TestHappened',
    schema_version: 1,
    stream,
    stream_version: n,
    global_position: n,
    occurred_at: new Date(Date.UTC(2026, 10, 21)).toISOString(),
    organization: 'org_test',
    environment: 'SANDBOX',
    data: { n },
  };
}

const quickRetry = { maxAttempts: 3, initialDelayMs: 20, maxDelayMs: 200 };

/** Every bus adapter must pass this suite. */
export function busContract(makeFixture: () => Promise<BusFixture>) {
  let fixture: BusFixture;
  let topic: string;
  const subscriptions: Subscription[] = [];

  const subscribe = async (groupId: string, handler: (m: ConsumedMessage) => Promise<void>, retry = quickRetry) => {
    const subscription = await fixture.bus.subscribe({ groupId, topics: [topic], handler, retry });
    subscriptions.push(subscription);
    return subscription;
  };

  beforeAll(async () => {
    fixture = await makeFixture();
  });

  beforeEach(() => {
    topic = uniqueName('test_events');
  });

  afterEach(async () => {
    await Promise.all(subscriptions.splice(0).map((s) => s.stop()));
  });

  afterAll(async () => {
    await fixture.close();
  });

  it('delivers every keyed message, in publish order per key', async () => {
    const keys = ['product-a', 'product-b', 'product-c'];
    const received: ConsumedMessage[] = [];
    await subscribe(uniqueName('g'), async (m) => void received.push(m));
    for (let n = 1; n <= 15; n++) {
      await fixture.bus.publish(
        topic,
        keys.map((key) => ({ key, value: eventOf(key, n), headers: { source: 'test' } })),
      );
    }
    await eventually(() => expect(received).toHaveLength(45), 20000);
    for (const key of keys) {
      const ofKey = received.filter((m) => m.key === key);
      expect(ofKey.map((m) => m.value.stream_version)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
      expect(new Set(ofKey.map((m) => m.partition)).size).toBe(1);
    }
    expect(received[0]!.headers.source).toBe('test');
    expect(received[0]!.value).toMatchObject({ type: 'TestHappened', organization: 'org_test' });
  });

  it('shares a topic between the members of a group, and gives every group all of it', async () => {
    const groupA = uniqueName('group_a');
    const groupB = uniqueName('group_b');
    const byMember = { a1: [] as string[], a2: [] as string[], b: [] as string[] };
    await subscribe(groupA, async (m) => void byMember.a1.push(m.value.id));
    await subscribe(groupA, async (m) => void byMember.a2.push(m.value.id));
    await subscribe(groupB, async (m) => void byMember.b.push(m.value.id));

    const sent = Array.from({ length: 30 }, (_, i) => eventOf(`stream-${i}`, 1));
    await fixture.bus.publish(
      topic,
      sent.map((value) => ({ key: value.stream, value })),
    );

    await eventually(() => {
      expect(byMember.b).toHaveLength(30);
      expect(byMember.a1.length + byMember.a2.length).toBe(30);
    }, 20000);
    const ids = sent.map((e) => e.id).sort();
    expect([...byMember.a1, ...byMember.a2].sort()).toEqual(ids);
    expect([...byMember.b].sort()).toEqual(ids);
    expect(byMember.a1.length).toBeGreaterThan(0);
    expect(byMember.a2.length).toBeGreaterThan(0);
  });

  it('retries a failing handler with growing delays until it succeeds', async () => {
    const attempts: number[] = [];
    await subscribe(
      uniqueName('g'),
      async () => {
        attempts.push(Date.now());
        if (attempts.length < 4) throw new Error('not yet');
      },
      { maxAttempts: 5, initialDelayMs: 60, maxDelayMs: 1000 },
    );
    await fixture.bus.publish(topic, [{ key: 'k', value: eventOf('k', 1) }]);
    await eventually(() => expect(attempts).toHaveLength(4), 20000);
    const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
    // 60, 120, 240 ms: never early. Timers may fire late, by any amount on a loaded machine, so
    // two measured gaps are not compared; the doubling itself is delivery.unit.test.ts's.
    expect(gaps[0]).toBeGreaterThanOrEqual(55);
    expect(gaps[1]).toBeGreaterThanOrEqual(115);
    expect(gaps[2]).toBeGreaterThanOrEqual(235);
  });

  it('redelivers a message whose consumer stopped before finishing it (at-least-once)', async () => {
    const groupId = uniqueName('g');
    let firstAttempts = 0;
    const first = await subscribe(
      groupId,
      async () => {
        firstAttempts++;
        throw new Error('crashing consumer');
      },
      { maxAttempts: 5, initialDelayMs: 5000, maxDelayMs: 5000 },
    );
    const event = eventOf('k', 1);
    await fixture.bus.publish(topic, [{ key: 'k', value: event }]);
    await eventually(() => expect(firstAttempts).toBe(1), 20000);
    await first.stop(); // during the backoff: the message was never committed

    const redelivered: string[] = [];
    await subscribe(groupId, async (m) => void redelivered.push(m.value.id));
    await eventually(() => expect(redelivered).toEqual([event.id]), 30000);
    expect(await fixture.readTopic(dlqTopicOf(topic), 0)).toEqual([]);
  });

  it('parks a message that fails every attempt on <topic>.dlq with the reason, and moves on', async () => {
    const handled: number[] = [];
    await subscribe(uniqueName('g'), async (m) => {
      if (m.value.stream_version === 1) throw new Error('card processor exploded');
      handled.push(m.value.stream_version);
    });
    await fixture.bus.publish(
      topic,
      [1, 2].map((n) => ({ key: 'same-key', value: eventOf('same-key', n) })),
    );
    await eventually(() => expect(handled).toEqual([2]), 20000);

    const [parked] = await fixture.readTopic(dlqTopicOf(topic), 1);
    expect(parked!.key).toBe('same-key');
    expect(JSON.parse(parked!.value).stream_version).toBe(1);
    expect(parked!.headers).toMatchObject({
      [DLQ_HEADERS.reason]: 'card processor exploded',
      [DLQ_HEADERS.originalTopic]: topic,
      [DLQ_HEADERS.attempts]: '3',
    });
  });

  describe('batches (exactlyOnce)', () => {
    let effects: string;

    beforeEach(async () => {
      effects = `${fixture.store.tables.schema}.batch_effects_${uniqueName('t')}`;
      await fixture.store.database.exec(`CREATE TABLE ${effects} (event_id text NOT NULL, n integer NOT NULL)`);
    });

    const effectRows = async () =>
      (await fixture.store.database.query<{ event_id: string; n: number }>(`SELECT event_id, n FROM ${effects}`)).rows;

    /** An exactlyOnce handler whose effect writes a row; `poison` ids always fail. Counts batches of more than one. */
    const recording = (consumer: string, poison = new Set<string>()) => {
      const counts = { batches: 0, effects: 0 };
      const effect = async (event: DomainEventEnvelope, tx: EventStoreTransaction) => {
        counts.effects++;
        if (poison.has(event.id)) throw new Error(`poison ${event.stream_version}`);
        await tx.query(`INSERT INTO ${effects} VALUES ($1, $2)`, [event.id, event.stream_version]);
      };
      const handler = exactlyOnce(fixture.store, consumer, effect);
      const batch = handler.batch;
      const counted = Object.assign((m: ConsumedMessage) => handler(m), {
        batch: async (messages: ConsumedMessage[]) => {
          if (messages.length > 1) counts.batches++;
          await batch(messages);
        },
      });
      return { counted, counts, handler };
    };

    it('applies a batch once, in order, and a redelivered batch changes nothing', async () => {
      const consumer = uniqueName('consumer');
      const { handler, counts } = recording(consumer);
      const sent = Array.from({ length: 5 }, (_, i) => eventOf('k', i + 1));
      const messages = sent.map((value, i) => ({
        topic,
        partition: 0,
        offset: String(i),
        key: 'k',
        value,
        headers: {},
      }));
      await handler.batch(messages);
      await handler.batch(messages); // redelivered whole
      await handler.batch([...messages.slice(2), ...messages.slice(0, 2)]); // and out of a crash's order
      expect(await effectRows()).toEqual(sent.map((e) => ({ event_id: e.id, n: e.stream_version })));
      expect(counts.effects).toBe(5);
      const inbox = await fixture.store.database.query(
        `SELECT event_id FROM ${fixture.store.tables.processedMessages} WHERE consumer = $1`,
        [consumer],
      );
      expect(inbox.rows).toHaveLength(5);
    });

    it('hands a partition over in batches through the bus, each event once, redeliveries ignored', async () => {
      const consumer = uniqueName('consumer');
      const { counted, counts } = recording(consumer);
      const sent = Array.from({ length: 20 }, (_, i) => eventOf('same-key', i + 1));
      // Published before anyone consumes: the first read finds them all.
      await fixture.bus.publish(
        topic,
        sent.map((value) => ({ key: 'same-key', value })),
      );
      await subscribe(uniqueName('g'), counted);
      await eventually(async () => expect(await effectRows()).toHaveLength(20), 20000);
      await fixture.bus.publish(
        topic,
        sent.slice(0, 10).map((value) => ({ key: 'same-key', value })),
      );
      const marker = eventOf('same-key', 21);
      await fixture.bus.publish(topic, [{ key: 'same-key', value: marker }]);
      await eventually(async () => expect(await effectRows()).toHaveLength(21), 20000);
      expect((await effectRows()).map((r) => r.n)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
      expect(counts.effects).toBe(21);
      if (fixture.batches) expect(counts.batches).toBeGreaterThan(0);
    });

    it('parks a poison message of a batch on the DLQ alone, and applies the others once, in order', async () => {
      const consumer = uniqueName('consumer');
      const sent = Array.from({ length: 6 }, (_, i) => eventOf('same-key', i + 1));
      const { counted, counts } = recording(consumer, new Set([sent[2]!.id]));
      await fixture.bus.publish(
        topic,
        sent.map((value) => ({ key: 'same-key', value })),
      );
      await subscribe(uniqueName('g'), counted);
      await eventually(async () => expect(await effectRows()).toHaveLength(5), 20000);
      expect((await effectRows()).map((r) => r.n)).toEqual([1, 2, 4, 5, 6]);
      const parked = await fixture.readTopic(dlqTopicOf(topic), 1);
      expect(parked).toHaveLength(1);
      expect(JSON.parse(parked[0]!.value).stream_version).toBe(3);
      expect(parked[0]!.headers).toMatchObject({ [DLQ_HEADERS.reason]: 'poison 3', [DLQ_HEADERS.attempts]: '3' });
      if (fixture.batches) expect(counts.batches).toBeGreaterThan(0);
    });
  });

  it('parks a message that is not a domain event without calling the handler', async () => {
    const handled: string[] = [];
    await subscribe(uniqueName('g'), async (m) => void handled.push(m.value.id));
    await fixture.bus.publishRaw(topic, 'k', '{not json');
    await fixture.bus.publishRaw(topic, 'k', JSON.stringify({ hello: 'world' }));
    const good = eventOf('k', 1);
    await fixture.bus.publish(topic, [{ key: 'k', value: good }]);
    await eventually(() => expect(handled).toEqual([good.id]), 20000);
    const parked = await fixture.readTopic(dlqTopicOf(topic), 2);
    expect(parked.map((m) => m.value)).toEqual(['{not json', '{"hello":"world"}']);
    expect(parked.map((m) => m.headers[DLQ_HEADERS.reason])).toEqual([
      'malformed: value is not JSON',
      expect.stringMatching(/^malformed: not a domain event/),
    ]);
  });

  describe('exactly-once effect', () => {
    let effects: string;

    beforeEach(async () => {
      effects = `${fixture.store.tables.schema}.effects_${uniqueName('t')}`;
      await fixture.store.database.exec(`CREATE TABLE ${effects} (event_id text NOT NULL, n integer NOT NULL)`);
    });

    const effectRows = async () =>
      (await fixture.store.database.query<{ event_id: string }>(`SELECT event_id FROM ${effects}`)).rows;

    it('applies a redelivered event once', async () => {
      const consumer = uniqueName('consumer');
      let calls = 0;
      await subscribe(
        uniqueName('g'),
        exactlyOnce(fixture.store, consumer, async (event, tx) => {
          calls++;
          await tx.query(`INSERT INTO ${effects} VALUES ($1, $2)`, [event.id, event.stream_version]);
        }),
      );
      const event = eventOf('k', 1);
      await fixture.bus.publish(topic, [{ key: 'k', value: event }]);
      await fixture.bus.publish(topic, [{ key: 'k', value: event }]);
      const marker = eventOf('k', 2);
      await fixture.bus.publish(topic, [{ key: 'k', value: marker }]);
      await eventually(async () => expect(await effectRows()).toHaveLength(2), 20000);
      expect((await effectRows()).map((r) => r.event_id)).toEqual([event.id, marker.id]);
      expect(calls).toBe(2);
    });

    it('forgets the event id when the effect fails, so the retry applies it', async () => {
      const consumer = uniqueName('consumer');
      let calls = 0;
      await subscribe(
        uniqueName('g'),
        exactlyOnce(fixture.store, consumer, async (event, tx) => {
          calls++;
          await tx.query(`INSERT INTO ${effects} VALUES ($1, $2)`, [event.id, event.stream_version]);
          if (calls === 1) throw new Error('effect failed after writing');
        }),
      );
      const event = eventOf('k', 1);
      await fixture.bus.publish(topic, [{ key: 'k', value: event }]);
      await eventually(() => expect(calls).toBe(2), 20000);
      await eventually(async () => expect(await effectRows()).toEqual([{ event_id: event.id }]));
      const inbox = await fixture.store.database.query(
        `SELECT event_id FROM ${fixture.store.tables.processedMessages} WHERE consumer = $1`,
        [consumer],
      );
      expect(inbox.rows).toEqual([{ event_id: event.id }]);
    });

    it('with `only`, skips other event types without an inbox row or a call', async () => {
      const consumer = uniqueName('consumer');
      const seen: string[] = [];
      const handler = exactlyOnce(fixture.store, consumer, async (event) => void seen.push(event.id), {
        only: ['Wanted'],
      });
      await subscribe(uniqueName('g'), handler);
      const ignored = eventOf('k', 1);
      const wanted = { ...eventOf('k', 2), type: 'Wanted' };
      await fixture.bus.publish(topic, [
        { key: 'k', value: ignored },
        { key: 'k', value: wanted },
      ]);
      await eventually(() => expect(seen).toEqual([wanted.id]), 20000);
      // The handler runs inside the transaction that writes the inbox row: wait for its commit.
      await eventually(async () => {
        const inbox = await fixture.store.database.query(
          `SELECT event_id FROM ${fixture.store.tables.processedMessages} WHERE consumer = $1`,
          [consumer],
        );
        expect(inbox.rows).toEqual([{ event_id: wanted.id }]);
      });
    });
  });
}
