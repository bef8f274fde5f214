import { EventStore, postgresDatabase } from '@billing/eventstore';
import type { Consumer, Kafka } from 'kafkajs';
import { describeWithServer, eventually, serverUrl, uniqueName } from '@billing/testing';
import { type ConsumedMessage, KafkaBus } from '../src';
import { busContract, eventOf } from './bus.contract';
import { readKafkaTopic } from './kafka-topic-reader';

jest.setTimeout(60000);

describeWithServer('KAFKA_BROKERS', 'KafkaBus on Apache Kafka', (brokerList) => {
  const brokers = brokerList.split(',');
  busContract(async () => {
    const databaseUrl = serverUrl('DATABASE_URL');
    if (!databaseUrl) throw new Error('The Kafka bus suite records processed events in PostgreSQL: set DATABASE_URL');
    const database = postgresDatabase({ connectionString: databaseUrl, max: 5 });
    const schema = uniqueName('bus_test');
    const store = new EventStore(database, { schema });
    await store.migrate();
    const bus = new KafkaBus({ brokers, clientId: 'bus-contract' });
    return {
      bus,
      store,
      batches: true,
      readTopic: (topic, expectedCount) => readKafkaTopic(brokers, topic, expectedCount),
      close: async () => {
        await bus.close();
        await database.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await database.close();
      },
    };
  });

  it('connects one producer for concurrent first publishes, and close() disconnects it', async () => {
    const bus = new KafkaBus({ brokers, clientId: 'bus-one-producer' });
    const kafka = (bus as unknown as { kafka: { producer: (...args: unknown[]) => unknown } }).kafka;
    const made = jest.spyOn(kafka, 'producer');
    const event = (topic: string) => ({
      key: 'k-1',
      value: {
        id: '5b0f4f4e-2a4b-4c1e-9d7a-0c6f1c2b3a4d',
        type: 'Counted',
        schema_version: 1,
        stream: 'k-1',
        stream_version: 1,
        global_position: 1,
        occurred_at: new Date().toISOString(),
        organization: 'org_test',
        environment: 'SANDBOX' as const,
        data: { topic },
      },
    });
    const topics = [uniqueName('one_producer_a'), uniqueName('one_producer_b'), uniqueName('one_producer_c')];
    await Promise.all(topics.map((topic) => bus.publish(topic, [event(topic)])));
    expect(made).toHaveBeenCalledTimes(1);
    const producer = made.mock.results[0]!.value as { disconnect: () => Promise<void> };
    const disconnected = jest.spyOn(producer, 'disconnect');
    await bus.close();
    expect(disconnected).toHaveBeenCalledTimes(1);
  });

  it('keeps buses with different topic prefixes apart on one broker, and hands over names without the prefix', async () => {
    const [one, other] = [uniqueName('one'), uniqueName('other')].map(
      (name) => new KafkaBus({ brokers, clientId: name, topicPrefix: `${name}.` }),
    );
    const topic = uniqueName('prefixed_events');
    const seen = { one: [] as ConsumedMessage[], other: [] as ConsumedMessage[] };
    const subscriptions = [
      await one!.subscribe({ groupId: uniqueName('g'), topics: [topic], handler: async (m) => void seen.one.push(m) }),
      await other!.subscribe({
        groupId: uniqueName('g'),
        topics: [topic],
        handler: async (m) => void seen.other.push(m),
      }),
    ];
    await one!.publish(topic, [{ key: 's-1', value: eventOf('s-1', 1) }]);
    await eventually(async () => expect(seen.one).toHaveLength(1));
    expect(seen.one[0]!.topic).toBe(topic);
    const [onBroker] = await readKafkaTopic(
      brokers,
      `${(one as unknown as { options: { topicPrefix: string } }).options.topicPrefix}${topic}`,
      1,
    );
    expect(onBroker!.key).toBe('s-1');
    await other!.publish(topic, [{ key: 's-2', value: eventOf('s-2', 1) }]);
    await eventually(async () => expect(seen.other).toHaveLength(1));
    expect(seen.other[0]!.key).toBe('s-2');
    expect(seen.one).toHaveLength(1);
    for (const s of subscriptions) await s.stop();
    await Promise.all([one!.close(), other!.close()]);
  });

  it('runs one consumer group per prefix: two deployments with the same group name each get their own messages', async () => {
    const groupId = uniqueName('billing');
    const topic = uniqueName('checkout_events');
    const deployments = [uniqueName('blue'), uniqueName('green')].map((name) => ({
      bus: new KafkaBus({ brokers, clientId: name, topicPrefix: `${name}.` }),
      seen: [] as string[],
    }));
    try {
      await Promise.all(
        deployments.map(({ bus, seen }) =>
          bus.subscribe({ groupId, topics: [topic], handler: async (m) => void seen.push(m.key) }),
        ),
      );
      const keys = Array.from({ length: 12 }, (_, i) => `cs_${i}`);
      for (const [i, { bus }] of deployments.entries()) {
        await bus.publish(
          topic,
          keys.map((key) => ({ key: `${i}-${key}`, value: eventOf(`${i}-${key}`, 1) })),
        );
      }
      for (const [i, { seen }] of deployments.entries()) {
        await eventually(async () => expect(seen.sort()).toEqual(keys.map((key) => `${i}-${key}`).sort()), 15000);
      }
    } finally {
      await Promise.all(deployments.map(({ bus }) => bus.close()));
    }
  });

  it('commits the offsets it handled about once a second rather than after every batch, and at once when quiet or stopped', async () => {
    const bus = new KafkaBus({ brokers, clientId: uniqueName('bus-commits') });
    const kafka = (bus as unknown as { kafka: Kafka }).kafka;
    const made = jest.spyOn(kafka, 'consumer');
    const topic = uniqueName('commit_events');
    const groupId = uniqueName('g');
    const handled: number[] = [];
    const admin = kafka.admin();
    await admin.connect();
    const committed = async () => {
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return offsets!.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    };
    try {
      const subscription = await bus.subscribe({
        groupId,
        topics: [topic],
        handler: async (m) => void handled.push(m.value.stream_version),
      });
      const consumer = made.mock.results[0]!.value as Consumer;
      let commits = 0;
      consumer.on(consumer.events.COMMIT_OFFSETS, () => commits++);
      // Forty messages of one stream (one partition), each handled before the next is published:
      // forty batches, which kafkajs alone would follow with forty commits.
      const started = Date.now();
      for (let n = 1; n <= 40; n++) {
        await bus.publish(topic, [{ key: 's-1', value: eventOf('s-1', n) }]);
        await eventually(async () => expect(handled).toHaveLength(n), 20000, 5);
      }
      const seconds = (Date.now() - started) / 1000;
      expect(commits).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
      // The partition is quiet now: the timer commits the rest without another message.
      await eventually(async () => expect(await committed()).toBe(40), 5000, 100);
      // Handled and stopped at once: the stop commits them before the member leaves.
      await bus.publish(topic, [{ key: 's-1', value: eventOf('s-1', 41) }]);
      await eventually(async () => expect(handled).toHaveLength(41), 20000, 5);
      await subscription.stop();
      expect(await committed()).toBe(41);
    } finally {
      await admin.disconnect();
      await bus.close();
    }
  });

  it('refuses a subscription the broker will never let join (a session timeout below its least) instead of waiting forever', async () => {
    const bus = new KafkaBus({
      brokers,
      clientId: 'bus-short-session',
      sessionTimeoutMs: 3000,
      logger: { error: () => undefined },
    });
    try {
      await expect(
        bus.subscribe({
          groupId: uniqueName('short'),
          topics: [uniqueName('short_events')],
          handler: async () => undefined,
        }),
      ).rejects.toThrow(/session timeout/i);
    } finally {
      await bus.close();
    }
  });
});
