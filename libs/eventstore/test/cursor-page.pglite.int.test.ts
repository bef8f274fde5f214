import { type Database, cursorAfter, cursorPage, keysetPage, newestFirst, pgliteDatabase } from '../src';

/** Five rows of two tenants, two of them created in the same instant (ordered by id then). */
async function seeded(): Promise<Database> {
  const db = await pgliteDatabase();
  await db.exec(`CREATE TABLE items (id text PRIMARY KEY, organization text, created_at timestamptz, document jsonb)`);
  const rows = [
    ['a', 'org_1', '2026-01-01T00:00:00Z'],
    ['b', 'org_1', '2026-01-02T00:00:00Z'],
    ['c', 'org_1', '2026-01-02T00:00:00Z'],
    ['d', 'org_1', '2026-01-03T00:00:00Z'],
    ['x', 'org_2', '2026-01-04T00:00:00Z'],
  ];
  for (const [id, organization, at] of rows) {
    await db.query(`INSERT INTO items VALUES ($1, $2, $3, $4)`, [id, organization, at, { id }]);
  }
  return db;
}

const findIn = (db: Database, organization: string) => async (id: string) =>
  (
    await db.query<{ id: string; created_at: Date }>(
      `SELECT id, created_at FROM items WHERE id = $1 AND organization = $2`,
      [id, organization],
    )
  ).rows[0];

describe('cursorPage', () => {
  let db: Database;
  beforeAll(async () => {
    db = await seeded();
  });
  afterAll(() => db.close());

  const page = (after: Awaited<ReturnType<typeof cursorAfter>>, limit = 2) =>
    cursorPage<{ id: string }>(db, 'items', { where: { organization: 'org_1' }, after, limit });

  it('given rows of two tenants, pages one tenant newest first, ties by id descending, with has_more', async () => {
    const first = await page(null);
    expect(first.documents.map((d) => d.id)).toEqual(['d', 'c']);
    expect(first.hasMore).toBe(true);
    const second = await page(await cursorAfter('c', findIn(db, 'org_1'), () => new Error('unknown')));
    expect(second.documents.map((d) => d.id)).toEqual(['b', 'a']);
    expect(second.hasMore).toBe(false);
  });

  it('reads another column when asked', async () => {
    const ids = await cursorPage<string>(db, 'items', { where: {}, after: null, limit: 10, select: 'id' });
    expect(ids.documents).toEqual(['x', 'd', 'c', 'b', 'a']);
  });

  it("when starting_after names another tenant's row, throws the caller's unknown-cursor error", async () => {
    await expect(cursorAfter('x', findIn(db, 'org_1'), (id) => new Error(`no such cursor ${id}`))).rejects.toThrow(
      'no such cursor x',
    );
    await expect(cursorAfter(undefined, findIn(db, 'org_1'), () => new Error('unused'))).resolves.toBeNull();
  });

  it('pages by another key with filters of its own: an aliased table, a numeric order column, parameters of a filter', async () => {
    const byPosition = [{ column: 'i.position', type: 'integer' }] as const;
    const query = (after: number[] | null) =>
      keysetPage<{ id: string; position: number }>(db, {
        from: `(SELECT *, ascii(id) AS position FROM items) i`,
        select: 'i.id, i.position',
        where: { 'i.organization': 'org_1' },
        filters: [(param) => `i.id <> ${param('a')}::text AND i.id >= ${param('a')}::text`],
        order: byPosition,
        after,
        limit: 2,
      });
    const first = await query(null);
    expect(first.rows.map((r) => r.id)).toEqual(['d', 'c']);
    expect(first.hasMore).toBe(true);
    const second = await query([first.rows[1]!.position]);
    expect(second).toEqual({ rows: [{ id: 'b', position: 98 }], hasMore: false });
  });

  it('takes a newest-first cursor of an aliased table', async () => {
    const { rows } = await keysetPage<{ id: string }>(db, {
      from: 'items t',
      select: 't.id',
      where: { 't.organization': undefined },
      order: newestFirst('t'),
      after: { created_at: '2026-01-02T00:00:00Z', id: 'c' },
      limit: 10,
    });
    expect(rows.map((r) => r.id)).toEqual(['b', 'a']);
  });
});
