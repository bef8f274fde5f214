import { EventStore, pgliteDatabase } from '@billing/eventstore';
import { eventually } from '@billing/testing';
import { InProcessBus } from '../src';
import { busContract } from './bus.contract';

describe('InProcessBus', () => {
  busContract(async () => {
    const bus = new InProcessBus();
    const database = await pgliteDatabase();
    const store = new EventStore(database, { schema: 'bus_test' });
    await store.migrate();
    return {
      bus,
      store,
      readTopic: (topic, expectedCount) =>
        eventually(() => {
          const messages = bus.messages(topic);
          expect(messages.length).toBeGreaterThanOrEqual(expectedCount);
          return messages;
        }),
      close: async () => {
        await bus.close();
        await database.close();
      },
    };
  });
});
