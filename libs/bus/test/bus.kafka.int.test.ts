import { EventStore, postgresDatabase } from '@billing/eventstore';
import { describeWithServer, serverUrl, uniqueName } from '@billing/testing';
import { KafkaBus } from '../src';
import { busContract } from './bus.contract';
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
      readTopic: (topic, expectedCount) => readKafkaTopic(brokers, topic, expectedCount),
      close: async () => {
        await bus.close();
        await database.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await database.close();
      },
    };
  });
});
