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
