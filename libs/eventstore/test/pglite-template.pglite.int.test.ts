import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { inMemoryPglite, pgliteIn } from '../src/pglite-template';

/** One directory for the cases, in order: each initdb costs seconds. */
describe('the empty cluster left as a template', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pglite-template-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const templates = () => readdirSync(dir);

  it('given no template, runs initdb and leaves the empty cluster behind, whole', async () => {
    const db = await inMemoryPglite(dir);
    await db.exec('CREATE TABLE made_before (id int)');
    await db.close();
    expect(templates()).toEqual([expect.stringMatching(/^billing-pglite-\d+\.\d+\.\d+-cluster\.tar$/)]);
    expect(statSync(join(dir, templates()[0]!)).size).toBeGreaterThan(1_000_000);
  }, 60_000);

  it('given a template, each database loads it empty: what one wrote is not in the next', async () => {
    expect(templates()).toHaveLength(1);
    const first = await inMemoryPglite(dir);
    await first.exec('CREATE TABLE written_by_first (id int)');
    await first.close();
    const second = await inMemoryPglite(dir);
    const { rows } = await second.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'written_by_first'`,
    );
    expect(rows[0]!.n).toBe(0);
    await second.exec('CREATE TABLE t (id int); INSERT INTO t VALUES (1)');
    expect((await second.query('SELECT id FROM t')).rows).toEqual([{ id: 1 }]);
    await second.close();
  }, 60_000);

  it('given a damaged template, makes a good one again', async () => {
    const [name] = templates();
    writeFileSync(join(dir, name!), 'not a cluster');
    const db = await inMemoryPglite(dir);
    expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await db.close();
    expect(templates()).toEqual([name]);
    expect(statSync(join(dir, name!)).size).toBeGreaterThan(1_000_000);
  }, 60_000);

  it('given a template, a new data directory starts from it, and keeps what is written there across a reopen', async () => {
    // A template of this test's own, marked, so that what the directory starts from shows.
    const marked = mkdtempSync(join(tmpdir(), 'pglite-marked-'));
    try {
      const [name] = templates();
      const maker = await PGlite.create({ loadDataDir: new Blob([readFileSync(join(dir, name!))]) });
      await maker.exec('CREATE TABLE from_template (id int)');
      writeFileSync(join(marked, name!), Buffer.from(await (await maker.dumpDataDir('none')).arrayBuffer()));
      await maker.close();

      const dataDir = join(marked, 'data', 'pglite');
      const first = await pgliteIn(dataDir, marked);
      expect((await first.query('SELECT count(*)::int AS n FROM from_template')).rows).toEqual([{ n: 0 }]);
      await first.exec('CREATE TABLE kept (id int); INSERT INTO kept VALUES (7)');
      await first.close();
      const again = await pgliteIn(dataDir, marked);
      expect((await again.query('SELECT id FROM kept')).rows).toEqual([{ id: 7 }]);
      await again.close();
    } finally {
      rmSync(marked, { recursive: true, force: true });
    }
  }, 60_000);

  it('given a damaged template, a new data directory gets its own initdb', async () => {
    const [name] = templates().filter((n) => n.endsWith('.tar'));
    writeFileSync(join(dir, name!), 'not a cluster');
    const db = await pgliteIn(join(dir, 'other'), dir);
    expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await db.close();
  }, 60_000);
});
