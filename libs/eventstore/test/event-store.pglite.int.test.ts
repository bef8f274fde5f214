import { pgliteDatabase } from '../src';
import { eventStoreContract } from './event-store.contract';

describe('EventStore on embedded PGlite', () => {
  eventStoreContract(async () => ({ database: await pgliteDatabase(), concurrentTransactions: false }));
});
