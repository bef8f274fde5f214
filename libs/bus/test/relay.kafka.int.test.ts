import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { EventStore, postgresDatabase } from '@billing/eventstore';
import { describeWithServer, serverUrl, uniqueName } from '@billing/testing';
import { KafkaBus } from '../src';
import { readKafkaTopic } from './kafka-topic-reader';
import { relayContract } from './relay.contract';

jest.setTimeout(90000);

function runRelayProcess(
  env: Record<string, string>,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(__dirname, 'relay-child.js')], {
      env: { ...process.env, NODE_OPTIONS: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
      readTopic: (topic, expectedCount) => readKafkaTopic(brokers, topic, expectedCount),
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
});
