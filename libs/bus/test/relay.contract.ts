import type { EventStore } from '@billing/eventstore';
import { eventually, uniqueName } from '@billing/testing';
import { type Bus, EventRelay, type RawMessage } from '../src';

export interface RelayFixture {
  store: EventStore;
  bus: Bus;
  /** The messages of `key` on `topic`, once there are `expectedCount` of them. */
  readTopic: (topic: string, expectedCount: number, key: string) => Promise<RawMessage[]>;
  close: () => Promise<void>;
}

const appendOptions = (expectedVersion: number) => ({
  expectedVersion,
  organization: 'org_test',
  environment: 'SANDBOX' as const,
  occurredAt: new Date('2026-11-21T08:00:00.000Z'),
});

const idsOf = (messages: RawMessage[]) => messages.map((m) => (JSON.parse(m.value) as { id: string }).id);

/** The bus, noting the id of every event published through it, once per publish. */
function countingBus(bus: Bus, published: string[]): Bus {
  return {
    publish: async (topic, messages) => {
      await bus.publish(topic, messages);
      published.push(...messages.map((m) => m.value.id));
    },
    publishRaw: (topic, key, value) => bus.publishRaw(topic, key, value),
    subscribe: (options) => bus.subscribe(options),
    close: async () => undefined,
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The relay must behave the same on every pair of store and bus adapters. */
export function relayContract(makeFixture: () => Promise<RelayFixture>) {
  let fixture: RelayFixture;
  let topic: string;

  beforeAll(async () => {
    fixture = await makeFixture();
  });
  beforeEach(() => {
    topic = uniqueName('relay_events');
  });
  afterAll(async () => {
    await fixture.close();
  });

  const appendSome = async (stream: string, from: number, count: number) => {
    const { events } = await fixture.store.append(
      stream,
      Array.from({ length: count }, (_, i) => ({ type: 'Counted', data: { n: from + i } })),
      appendOptions(from - 1),
    );
    return events.map((e) => e.id);
  };

  it('publishes the log keyed by stream in stream order, and only once while nothing fails', async () => {
    const stream = uniqueName('product');
    const ids = await appendSome(stream, 1, 5);
    const relay = new EventRelay(fixture.store, fixture.bus, { topic });
    expect(await relay.catchUp()).toBeGreaterThanOrEqual(5);
    expect(await relay.catchUp()).toBe(0);

    const published = await fixture.readTopic(topic, 5, stream);
    expect(idsOf(published)).toEqual(ids);
    const envelope = JSON.parse(published[0]!.value);
    expect(envelope).toMatchObject({ stream, stream_version: 1, organization: 'org_test', data: { n: 1 } });
    expect(envelope).not.toHaveProperty('transaction_id');
  });

  it('puts the CloudEvents attributes in Kafka headers (binary mode) and leaves the JSON value as it was', async () => {
    const stream = uniqueName('subscription');
    const [id] = await appendSome(stream, 1, 1);
    const relay = new EventRelay(fixture.store, fixture.bus, { topic: `${topic}.events` });
    await relay.catchUp();

    const [message] = await fixture.readTopic(`${topic}.events`, 1, stream);
    expect(message!.headers).toMatchObject({
      ce_specversion: '1.0',
      ce_id: id,
      ce_type: 'Counted',
      ce_source: `/${topic}`,
      ce_time: '2026-11-21T08:00:00.000Z',
      ce_subject: stream,
      'content-type': 'application/json',
    });
    expect(JSON.parse(message!.value)).toMatchObject({ id, type: 'Counted', occurred_at: '2026-11-21T08:00:00.000Z' });
  });

  it('publishes listed events under their public type and the others under their internal one', async () => {
    const stream = uniqueName('checkout_session');
    await fixture.store.append(
      stream,
      [
        { type: 'Counted', data: { n: 1 } },
        { type: 'SessionPaid', data: { n: 2 } },
      ],
      appendOptions(0),
    );
    const relay = new EventRelay(fixture.store, fixture.bus, { topic, publicTypes: { SessionPaid: 'session.paid' } });
    await relay.catchUp();

    const published = await fixture.readTopic(topic, 2, stream);
    expect(published.map((m) => JSON.parse(m.value).type)).toEqual(['Counted', 'session.paid']);
  });

  it('sends the types of topicsByType to their own topic, in stream order, and the rest to the service topic', async () => {
    const ledger = uniqueName('customer_credits');
    const customer = uniqueName('customer');
    const other = uniqueName('relay_credits');
    await fixture.store.append(
      ledger,
      [1, 2, 3].map((n) => ({ type: 'Spent', data: { n } })),
      appendOptions(0),
    );
    await fixture.store.append(customer, [{ type: 'Created', data: { n: 4 } }], appendOptions(0));
    await fixture.store.append(ledger, [{ type: 'Spent', data: { n: 5 } }], appendOptions(3));
    const relay = new EventRelay(fixture.store, fixture.bus, {
      topic,
      topicsByType: { Spent: other },
      publicTypes: { Spent: 'credits.spent' },
    });
    await relay.catchUp();

    const spends = await fixture.readTopic(other, 4, ledger);
    expect(spends.map((m) => JSON.parse(m.value))).toEqual(
      [1, 2, 3, 5].map((n) => expect.objectContaining({ type: 'credits.spent', data: { n } })),
    );
    expect((await fixture.readTopic(topic, 1, customer)).map((m) => JSON.parse(m.value).type)).toEqual(['Created']);
  });
  it('publishes a batch again after a crash between publish and checkpoint, losing nothing', async () => {
    const stream = uniqueName('order');
    const firstIds = await appendSome(stream, 1, 3);
    const crashing = new EventRelay(fixture.store, fixture.bus, {
      topic,
      afterPublish: () => {
        throw new Error('killed after publish');
      },
    });
    await expect(crashing.catchUp()).rejects.toThrow('killed after publish');

    const laterIds = await appendSome(stream, 4, 2);
    const restarted = new EventRelay(fixture.store, fixture.bus, { topic });
    await restarted.catchUp();

    const published = idsOf(await fixture.readTopic(topic, 8, stream));
    expect(published).toEqual([...firstIds, ...firstIds, ...laterIds]);
  });

  it('publishes each event once while two relays of one log run at once: one relays, the other stands by', async () => {
    const published: string[] = [];
    const bus = countingBus(fixture.bus, published);
    const relays = [1, 2].map(
      () => new EventRelay(fixture.store, bus, { topic, pollIntervalMs: 20, standbyRetryMs: 50 }),
    );
    for (const relay of relays) relay.start();
    try {
      const stream = uniqueName('invoice');
      const ids: string[] = [];
      for (let batch = 0; batch < 4; batch++) {
        ids.push(...(await appendSome(stream, ids.length + 1, 5)));
        await pause(30);
      }
      const ours = () => published.filter((id) => ids.includes(id));
      await eventually(async () => expect(new Set(ours())).toEqual(new Set(ids)), 20000);
      await pause(300); // time for a second relay's copies, were there one
      expect(ours()).toEqual(ids);
    } finally {
      await Promise.all(relays.map((relay) => relay.stop()));
    }
  });

  it('hands the log over to a standby relay when the one relaying stops, losing nothing', async () => {
    const published: string[] = [];
    const bus = countingBus(fixture.bus, published);
    const relayOf = () => new EventRelay(fixture.store, bus, { topic, pollIntervalMs: 20, standbyRetryMs: 50 });
    const stream = uniqueName('payment');
    const ours = (ids: string[]) => published.filter((id) => ids.includes(id));
    const first = relayOf();
    const standby = relayOf();
    first.start();
    try {
      const before = await appendSome(stream, 1, 2);
      await eventually(async () => expect(ours(before)).toEqual(before), 20000);
      standby.start();
      await first.stop();
      const after = await appendSome(stream, 3, 2);
      const stoppedAt = Date.now();
      await eventually(async () => expect(ours([...before, ...after])).toEqual([...before, ...after]), 20000);
      expect(Date.now() - stoppedAt).toBeLessThan(3000);
    } finally {
      await Promise.all([first.stop(), standby.stop()]);
    }
  });

  it('follows the log while running', async () => {
    const relay = new EventRelay(fixture.store, fixture.bus, { topic, pollIntervalMs: 20 });
    relay.start();
    try {
      const stream = uniqueName('customer');
      const ids = await appendSome(stream, 1, 2);
      await eventually(async () => {
        const published = await fixture.readTopic(topic, 2, stream);
        expect(idsOf(published)).toEqual(ids);
      }, 30000);
    } finally {
      await relay.stop();
    }
  });
}
