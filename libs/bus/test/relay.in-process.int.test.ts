import { EventStore, pgliteDatabase } from '@billing/eventstore';
import { InProcessBus } from '../src';
import { relayContract } from './relay.contract';

describe('EventRelay on PGlite and the in-process bus', () => {
  relayContract(async () => {
    const database = await pgliteDatabase();
    const store = new EventStore(database, { schema: 'relay_test' });
    await store.migrate();
    const bus = new InProcessBus();
    return {
      store,
      bus,
      readTopic: async (topic, _count, key) => bus.messages(topic).filter((m) => m.key === key),
      close: async () => {
        await bus.close();
        await database.close();
      },
    };
  });
});
