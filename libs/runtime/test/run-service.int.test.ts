import { exactlyOnce } from '@billing/bus';
import { createLogger } from '@billing/service';
import {
  describeWithServer,
  eventually,
  serverUrl,
  signedFetch,
  testInternalSecret,
  uniqueName,
} from '@billing/testing';
import { createInfrastructure, type Infrastructure, runService, type ServiceDefinition, topicOf } from '../src';

jest.setTimeout(60000);
const silent = createLogger('test', { level: 'silent' });

/** A publisher whose POST appends an event, and a consumer that records what it learns. */
function twoServices(suffix: string) {
  const publisherName = `pub_${suffix}`;
  const consumerName = `sub_${suffix}`;
  const seen: string[] = [];
  const order: string[] = [];
  const publisher: ServiceDefinition = {
    name: publisherName,
    defaultPort: 0,
    routes: (app, { store }) => {
      app.post('/things/:id', async (req, res) => {
        const { events } = await store.append(
          `thing-${req.params.id}`,
          [{ type: 'ThingMade', data: { id: req.params.id } }],
          {
            expectedVersion: 0,
            organization: 'org_1',
            environment: 'SANDBOX',
            occurredAt: new Date(),
          },
        );
        res.status(201).json({ id: events[0]!.id });
      });
    },
  };
  const consumer: ServiceDefinition = {
    name: consumerName,
    defaultPort: 0,
    start: async ({ store, infrastructure }) => {
      const subscription = await infrastructure.bus.subscribe({
        groupId: consumerName,
        topics: [topicOf(publisherName)],
        handler: exactlyOnce(store, consumerName, async (event) => void seen.push(event.id)),
      });
      return [
        async () => {
          order.push('consumer stopped');
          await subscription.stop();
        },
      ];
    },
  };
  return { publisher, consumer, seen, order };
}

async function flowAcrossServices(infrastructure: Infrastructure) {
  const suffix = uniqueName('s').replace(/^s_/, '');
  const { publisher, consumer, seen, order } = twoServices(suffix);
  const options = { port: 0, logger: silent, internalSecret: testInternalSecret() };
  const pub = await runService(publisher, infrastructure, options);
  const sub = await runService(consumer, infrastructure, options);
  try {
    const created = await signedFetch(`${pub.url}/things/t1`, { method: 'POST' });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    await eventually(() => expect(seen).toEqual([id]), 30000);
  } finally {
    await sub.shutdown();
    await pub.shutdown();
    await infrastructure.database.exec(`DROP SCHEMA ${publisher.name} CASCADE; DROP SCHEMA ${consumer.name} CASCADE`);
  }
  expect(order).toEqual(['consumer stopped']);
}

describe('runService on the embedded default', () => {
  let infrastructure: Infrastructure;
  beforeAll(async () => {
    infrastructure = await createInfrastructure({ clientId: 'runtime-test', dataDir: 'memory', env: {} });
  });
  afterAll(() => infrastructure.close());

  it('runs embedded when no server is configured', () => {
    expect(infrastructure.mode).toBe('embedded');
    expect(infrastructure.database.kind).toBe('pglite');
  });

  it("relays one service's events to <name>.events, where another service consumes them", async () => {
    await flowAcrossServices(infrastructure);
  });
});

describeWithServer('KAFKA_BROKERS', 'runService on PostgreSQL and Kafka', (brokers) => {
  let infrastructure: Infrastructure;
  beforeAll(async () => {
    infrastructure = await createInfrastructure({
      clientId: 'runtime-test',
      env: { DATABASE_URL: serverUrl('DATABASE_URL'), KAFKA_BROKERS: brokers },
    });
  });
  afterAll(() => infrastructure.close());

  it('runs distributed on the configured servers', () => {
    expect(infrastructure.mode).toBe('distributed');
    expect(infrastructure.database.kind).toBe('postgres');
  });

  it("relays one service's events through Kafka to another service", async () => {
    await flowAcrossServices(infrastructure);
  });
});
