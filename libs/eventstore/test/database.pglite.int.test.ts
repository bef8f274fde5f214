import { type Database, pgliteDatabase } from '../src';

/** PGlite has one session: the adapter must keep each transaction to itself and recover from errors. */
describe('pgliteDatabase', () => {
  let db: Database;
  beforeAll(async () => {
    db = await pgliteDatabase();
    await db.exec(`CREATE TABLE counters (id text PRIMARY KEY, n int NOT NULL); INSERT INTO counters VALUES ('a', 0)`);
  });
  afterAll(() => db.close());

  const count = async () => (await db.query<{ n: number }>(`SELECT n FROM counters WHERE id = $1`, ['a'])).rows[0]?.n;

  it('given an open transaction, when a statement comes from outside it, then it waits for the commit', async () => {
    let inside!: () => void;
    const holding = new Promise<void>((resolve) => (inside = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const transaction = db.transaction(async (tx) => {
      await tx.query(`UPDATE counters SET n = n + 1 WHERE id = $1`, ['a']);
      inside();
      await released;
      await tx.query(`UPDATE counters SET n = n + 1 WHERE id = $1`, ['a']);
    });
    await holding;
    const outside = count();
    release();
    await transaction;
    expect(await outside).toBe(2);
  });

  it('given a statement that fails in a transaction, then nothing of it stays and the next ones run', async () => {
    const before = await count();
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`UPDATE counters SET n = n + 10 WHERE id = $1`, ['a']);
        await tx.query(`INSERT INTO counters VALUES ($1, $2)`, ['a', 1]);
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await count()).toBe(before);
    await expect(db.query(`SELECT * FROM no_such_table WHERE id = $1`, ['a'])).rejects.toThrow(/does not exist/);
    expect(await count()).toBe(before);
  });

  it('given parameters, then the statement is prepared once for the session', async () => {
    for (let i = 0; i < 3; i++) await db.query(`SELECT n FROM counters WHERE id = $1 AND n >= $2`, ['a', i]);
    const prepared = await db.query<{ statement: string }>(
      `SELECT statement FROM pg_prepared_statements WHERE statement LIKE $1`,
      ['%n >= $2%'],
    );
    expect(prepared.rows).toHaveLength(1);
  });
});
