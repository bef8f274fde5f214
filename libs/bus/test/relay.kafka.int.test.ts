import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { EventStore, postgresDatabase } from '@billing/eventstore';
import { describeWithServer, eventually, serverUrl, uniqueName } from '@billing/testing';
import { EventRelay, KafkaBus, type RawMessage } from '../src';
import { readKafkaTopic } from './kafka-topic-reader';
import { relayContract } from './relay.contract';

jest.setTimeout(90000);

const idsOf = (messages: RawMessage[]) => messages.map((m) => (JSON.parse(m.value) as { id: string }).id);

const spawnRelayProcess = (env: Record<string, string>) =>
  spawn(process.execPath, [join(__dirname, 'relay-child.js')], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });

function runRelayProcess(
  env: Record<string, string>,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnRelayProcess(env);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, output }));
  });
}

describeWithServer('KAFKA_BROKERS', 'EventRelay on PostgreSQL and Kafka', (brokerList) => {
  const brokers = brokerList.split(',');
  const databaseUrl = serverUrl('DATABASE_URL') ?? '';
  const schema = uniqueName('relay_test');
  const database = postgresDatabase({ connectionString: databaseUrl, max: 5 });
  const store = new EventStore(database, { schema });

  relayContract(async () => {
    if (!databaseUrl) throw new Error('The relay suite reads its log from PostgreSQL: set DATABASE_URL');
    await store.migrate();
    const bus = new KafkaBus({ brokers, clientId: 'relay-contract' });
    return {
      store,
      bus,
      readTopic: (topic, expectedCount, key) => readKafkaTopic(brokers, topic, expectedCount, key),
      close: async () => {
        await bus.close();
        await database.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await database.close();
      },
    };
  });

  it('republishes after the relay process is killed between publish and checkpoint', async () => {
    const killSchema = uniqueName('relay_kill');
    const killDb = postgresDatabase({ connectionString: databaseUrl, max: 2 });
    const killStore = new EventStore(killDb, { schema: killSchema });
    await killStore.migrate();
    try {
      const topic = uniqueName('relay_kill_events');
      const { events } = await killStore.append(
        'invoice-in_1',
        [1, 2, 3].map((n) => ({ type: 'InvoiceCounted', data: { n } })),
        { expectedVersion: 0, organization: 'org_test', environment: 'SANDBOX', occurredAt: new Date() },
      );
      const env = {
        DATABASE_URL: databaseUrl,
        KAFKA_BROKERS: brokerList,
        RELAY_SCHEMA: killSchema,
        RELAY_TOPIC: topic,
      };

      const killed = await runRelayProcess({ ...env, RELAY_KILL_AFTER_PUBLISH: '1' });
      expect(killed.signal).toBe('SIGKILL');
      expect(await killStore.loadCheckpoint(`relay:${topic}`)).toBeUndefined();
      expect(await readKafkaTopic(brokers, topic, 3)).toHaveLength(3);

      const restarted = await runRelayProcess(env);
      expect(restarted.code).toBe(0);
      expect(restarted.output).toContain('published 3\n');
      const ids = (await readKafkaTopic(brokers, topic, 6)).map((m) => JSON.parse(m.value).id);
      const expected = events.map((e) => e.id);
      expect(ids).toEqual([...expected, ...expected]);
      expect(await killStore.loadCheckpoint(`relay:${topic}`)).toMatchObject({
        globalPosition: events[2]!.global_position,
      });
    } finally {
      await killDb.exec(`DROP SCHEMA IF EXISTS ${killSchema} CASCADE`);
      await killDb.close();
    }
  });

  it('hands the log over to a standby relay within seconds when the process relaying it is killed, losing nothing', async () => {
    const crashSchema = uniqueName('relay_takeover');
    const crashDb = postgresDatabase({ connectionString: databaseUrl, max: 2 });
    const crashStore = new EventStore(crashDb, { schema: crashSchema });
    await crashStore.migrate();
    const topic = uniqueName('relay_takeover_events');
    const bus = new KafkaBus({ brokers, clientId: 'relay-standby' });
    await bus.ensureTopics([topic]);
    const standby = new EventRelay(crashStore, bus, { topic, pollIntervalMs: 20, standbyRetryMs: 200 });
    const holder = spawnRelayProcess({
      DATABASE_URL: databaseUrl,
      KAFKA_BROKERS: brokerList,
      RELAY_SCHEMA: crashSchema,
      RELAY_TOPIC: topic,
      RELAY_FOLLOW: '1',
    });
    const exited = new Promise((resolve) => holder.on('exit', resolve));
    const append = async (from: number) => {
      const { events } = await crashStore.append(
        'invoice-in_2',
        [from, from + 1].map((n) => ({ type: 'InvoiceCounted', data: { n } })),
        { expectedVersion: from - 1, organization: 'org_test', environment: 'SANDBOX', occurredAt: new Date() },
      );
      return events;
    };
    try {
      const before = await append(1);
      // Only the child runs yet: once these are on the topic, it holds the log's lock.
      expect(idsOf(await readKafkaTopic(brokers, topic, 2))).toEqual(before.map((e) => e.id));
      standby.start();
      holder.kill('SIGKILL');
      await exited;
      const after = await append(3);
      // PostgreSQL frees the dead holder's advisory lock with its connection, so the standby takes
      // over on its next try (every 200 ms here). The wait also covers the standby's first
      // connection to Kafka, which took 6 s on a loaded machine; a handover that waited out a
      // lease of tens of seconds would still miss it.
      await eventually(async () => {
        expect(await crashStore.loadCheckpoint(`relay:${topic}`)).toMatchObject({
          globalPosition: after[1]!.global_position,
        });
      }, 15000);
      const published = new Set(idsOf(await readKafkaTopic(brokers, topic, 4)));
      expect(published).toEqual(new Set([...before, ...after].map((e) => e.id)));
    } finally {
      holder.kill('SIGKILL');
      await standby.stop();
      await bus.close();
      await crashDb.exec(`DROP SCHEMA IF EXISTS ${crashSchema} CASCADE`);
      await crashDb.close();
    }
  });
});
