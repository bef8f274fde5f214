import { randomUUID } from 'node:crypto';
import type { Database } from '../src';

/**
 * What a transaction promises on either adapter, `write`s included: a write's answer is read
 * later, but its failure still fails the transaction and leaves nothing of it.
 */
export function transactionContract(open: () => Promise<Database>) {
  let db: Database;
  const table = `tx_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  beforeAll(async () => {
    db = await open();
    await db.exec(`CREATE TABLE ${table} (id text PRIMARY KEY, n int NOT NULL)`);
  });
  afterAll(async () => {
    await db.exec(`DROP TABLE ${table}`);
    await db.close();
  });

  const ids = async () =>
    (await db.query<{ id: string }>(`SELECT id FROM ${table} WHERE id LIKE $1 ORDER BY id`, [`${prefix}%`])).rows.map(
      (row) => row.id,
    );
  let prefix = '';
  beforeEach(() => {
    prefix = `${randomUUID()}-`;
  });
  const insert = `INSERT INTO ${table} (id, n) VALUES ($1, $2)`;

  it('given writes, when a later statement of the transaction reads, then it sees them, and they commit', async () => {
    const seen = await db.transaction(async (tx) => {
      await tx.write(insert, [`${prefix}a`, 1]);
      await tx.write(insert, [`${prefix}b`, 2]);
      const { rows } = await tx.query<{ n: number }>(`SELECT sum(n)::int AS n FROM ${table} WHERE id LIKE $1`, [
        `${prefix}%`,
      ]);
      await tx.write(insert, [`${prefix}c`, 3]);
      return rows[0]!.n;
    });
    expect(seen).toBe(3);
    expect(await ids()).toEqual([`${prefix}a`, `${prefix}b`, `${prefix}c`]);
  });

  it('given a write that fails, when the next statement runs, then it throws the write’s error and nothing stays', async () => {
    await db.write(insert, [`${prefix}taken`, 0]);
    await expect(
      db.transaction(async (tx) => {
        await tx.write(insert, [`${prefix}a`, 1]);
        await tx.write(insert, [`${prefix}taken`, 1]);
        await tx.query(`SELECT n FROM ${table} WHERE id = $1`, [`${prefix}a`]);
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await ids()).toEqual([`${prefix}taken`]);
  });

  it('given a write that fails as the last statement, then the commit throws its error and nothing stays', async () => {
    await db.write(insert, [`${prefix}taken`, 0]);
    await expect(
      db.transaction(async (tx) => {
        await tx.query(insert, [`${prefix}a`, 1]);
        await tx.write(insert, [`${prefix}taken`, 1]);
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await ids()).toEqual([`${prefix}taken`]);
    // The connection is usable again.
    await db.transaction((tx) => tx.write(insert, [`${prefix}b`, 2]));
    expect(await ids()).toEqual([`${prefix}b`, `${prefix}taken`]);
  });

  it('given writes, when the transaction’s function throws, then none of them stays', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.write(insert, [`${prefix}a`, 1]);
        throw new Error('changed its mind');
      }),
    ).rejects.toThrow('changed its mind');
    expect(await ids()).toEqual([]);
  });

  it('given a transaction that sends no statement, then it answers what its function returned', async () => {
    await expect(db.transaction(async () => 'nothing to write')).resolves.toBe('nothing to write');
    await db.transaction((tx) => tx.write(insert, [`${prefix}a`, 1]));
    expect(await ids()).toEqual([`${prefix}a`]);
  });

  it('given a first statement, then it runs before the function’s first statement, in the same transaction', async () => {
    const level = await db.transaction(
      async (tx) =>
        (await tx.query<{ level: string }>(`SELECT current_setting($1) AS level`, ['transaction_isolation'])).rows[0]!
          .level,
      { firstStatement: 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ' },
    );
    expect(level).toBe('repeatable read');
    const after = (await db.query<{ level: string }>(`SELECT current_setting($1) AS level`, ['transaction_isolation']))
      .rows[0]!;
    expect(after.level).toBe('read committed');
  });
}
