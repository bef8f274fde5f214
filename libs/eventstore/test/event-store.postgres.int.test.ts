import { describeWithServer } from '@billing/testing';
import { postgresDatabase } from '../src';
import { eventStoreContract } from './event-store.contract';

describeWithServer('DATABASE_URL', 'EventStore on PostgreSQL', (url) => {
  eventStoreContract(async () => ({
    database: postgresDatabase({ connectionString: url, max: 10 }),
    concurrentTransactions: true,
  }));
});
