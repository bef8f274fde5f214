import { type Database, documentTable, pgliteDatabase } from '../src';

type Item = { id: string; organization: string; environment: string; created_at: string; name: string };

const items = documentTable<Item>({
  name: 'items',
  columns: { name: 'text NOT NULL' },
  columnsOf: (item) => [item.name],
  indexes: ['CREATE INDEX IF NOT EXISTS items_by_name ON {table} (organization, environment, name)'],
});

const item = (name: string): Item => ({
  id: 'itm_1',
  organization: 'org_1',
  environment: 'SANDBOX',
  created_at: '2026-01-01T00:00:00.000Z',
  name,
});

describe('documentTable', () => {
  let db: Database;
  beforeAll(async () => {
    db = await pgliteDatabase();
    await db.exec(`CREATE SCHEMA s; ${items.ddl('s')}`);
    await db.exec(items.ddl('s')); // a second migration changes nothing
  });
  afterAll(() => db.close());

  it('given a document at version 2, when version 3 is written, then the document and its columns move on', async () => {
    await items.write(db, 's', item('first'), 2);
    await items.write(db, 's', item('second'), 3);
    expect(await items.read(db, 's', 'itm_1')).toEqual({ document: item('second'), stream_version: 3 });
    const { rows } = await db.query<{ name: string }>(`SELECT name FROM s.items WHERE id = 'itm_1'`);
    expect(rows[0]!.name).toBe('second');
  });

  it('when a version at or below the stored one is written again, then nothing changes', async () => {
    await items.write(db, 's', item('stale'), 3);
    await items.write(db, 's', item('older'), 1);
    expect(await items.read(db, 's', 'itm_1')).toEqual({ document: item('second'), stream_version: 3 });
  });

  it('given column values from outside the document, writes them and reads them back when asked', async () => {
    await items.write(db, 's', { ...item('doc'), id: 'itm_2' }, 1, ['given']);
    expect(await items.read<{ name: string }>(db, 's', 'itm_2', ['name'])).toEqual({
      document: { ...item('doc'), id: 'itm_2' },
      stream_version: 1,
      name: 'given',
    });
  });

  it('reads nothing for an id it never wrote', async () => {
    expect(await items.read(db, 's', 'itm_none')).toBeUndefined();
  });
});

/** A public object: no tenant in it, a status the table keeps, a kind fixed when it is made. */
type Clock = { id: string; created_at: string; status: string; kind: string };

const clocks = documentTable<Clock>({
  name: 'clocks',
  columns: { status: 'text NOT NULL', kind: 'text NOT NULL' },
  columnsOf: (clock) => [clock.status, clock.kind],
  insertOnly: ['kind'],
  migrations: [
    'ALTER TABLE {table} ADD COLUMN IF NOT EXISTS label text',
    "UPDATE {table} SET label = document->>'status' WHERE label IS NULL",
  ],
  indexes: ['CREATE INDEX IF NOT EXISTS clocks_by_label ON {table} (label)'],
});

const clock = (status: string, kind = 'first'): Clock => ({
  id: 'clk_1',
  created_at: '2026-01-01T00:00:00.000Z',
  status,
  kind,
});
const tenant = { organization: 'org_1', environment: 'SANDBOX' };

describe('documentTable, for documents without their tenant and tables made by earlier versions', () => {
  let db: Database;
  beforeAll(async () => {
    db = await pgliteDatabase();
    await db.exec('CREATE SCHEMA s');
  });
  afterAll(() => db.close());

  it('given a table an earlier version made, when migrated, then the migrations run before the indexes that need them', async () => {
    await db.exec(`CREATE TABLE s.clocks (
      id text PRIMARY KEY, organization text NOT NULL, environment text NOT NULL, status text NOT NULL,
      kind text NOT NULL, created_at timestamptz NOT NULL, stream_version integer NOT NULL, document jsonb NOT NULL);
      INSERT INTO s.clocks VALUES ('clk_old', 'org_1', 'SANDBOX', 'ready', 'k', now(), 1, '{"status": "ready"}')`);
    await db.exec(clocks.ddl('s'));
    await db.exec(clocks.ddl('s')); // a second migration changes nothing
    const { rows } = await db.query<{ label: string }>(`SELECT label FROM s.clocks WHERE id = 'clk_old'`);
    expect(rows[0]!.label).toBe('ready');
    const { rows: indexes } = await db.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'clocks_by_label'`);
    expect(indexes).toHaveLength(1);
  });

  it('writes the tenant it is given, and leaves insert-only columns as the first write set them', async () => {
    // @ts-expect-error a document without its tenant is written with one
    await expect(clocks.write(db, 's', clock('ready'), 1)).rejects.toThrow();
    await clocks.write(db, 's', clock('ready'), 1, { tenant });
    await clocks.write(db, 's', clock('advancing', 'second'), 2, { tenant });
    const { rows } = await db.query(
      `SELECT organization, environment, status, kind, stream_version FROM s.clocks WHERE id = 'clk_1'`,
    );
    expect(rows[0]).toEqual({ ...tenant, status: 'advancing', kind: 'first', stream_version: 2 });
    expect((await clocks.read(db, 's', 'clk_1'))!.document).toEqual(clock('advancing', 'second'));
  });

  it('given columns and a tenant, writes both', async () => {
    await clocks.write(db, 's', { ...clock('doc'), id: 'clk_2' }, 1, { columns: ['given', 'kind'], tenant });
    expect(await clocks.read<{ status: string }>(db, 's', 'clk_2', ['status'])).toMatchObject({ status: 'given' });
  });
});
