import { describeWithServer } from '@billing/testing';
import { postgresDatabase } from '../src';
import { transactionContract } from './transaction.contract';

describeWithServer('DATABASE_URL', 'Transactions on PostgreSQL', (url) => {
  transactionContract(async () => postgresDatabase({ connectionString: url, max: 2 }));
});
