import { describeWithServer, eventually, uniqueName } from '@billing/testing';
import { postgresDatabase } from '../src';

describeWithServer('DATABASE_URL', 'Locks held across processes on PostgreSQL', (url) => {
  const database = postgresDatabase({ connectionString: url, max: 2 });

  afterAll(() => database.close());

  /** Ends the session that holds advisory lock `name`, as a dead connection would. */
  async function killHolderOf(name: string): Promise<void> {
    const { rows } = await database.query<{ killed: boolean }>(
      `SELECT pg_terminate_backend(pid) AS killed FROM pg_locks
       WHERE locktype = 'advisory' AND granted AND objsubid = 1
         AND objid = (hashtext($1)::bigint & 4294967295)::oid
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [name],
    );
    expect(rows).toEqual([{ killed: true }]);
  }

  it('has one holder at a time, and the next takes it as soon as the holder releases it', async () => {
    const name = uniqueName('relay');
    const holder = await database.tryLock(name);
    expect(holder).toBeDefined();
    expect(await database.tryLock(name)).toBeUndefined();
    await holder!.release();
    const next = await database.tryLock(name);
    expect(next).toBeDefined();
    await next!.release();
  });

  it("tells the holder its lock is lost when its connection dies, and lets another take it", async () => {
    const name = uniqueName('relay');
    const holder = await database.tryLock(name);
    await killHolderOf(name);
    await holder!.lost;
    const next = await eventually(async () => {
      const lock = await database.tryLock(name);
      expect(lock).toBeDefined();
      return lock!;
    }, 5000);
    await next.release();
  });
});
