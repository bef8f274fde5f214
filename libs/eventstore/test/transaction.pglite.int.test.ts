import { pgliteDatabase } from '../src';
import { transactionContract } from './transaction.contract';

describe('Transactions on embedded PGlite', () => {
  transactionContract(() => pgliteDatabase());
});
