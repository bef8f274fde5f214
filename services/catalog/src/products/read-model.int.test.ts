import { ApiError } from '@billing/contracts';
import { type Database, EventStore, type RecordedEvent, pgliteDatabase, postgresDatabase } from '@billing/eventstore';
import { uniqueName } from '@billing/testing';
import type { ProductEvent } from './product';
import { migrateProductsReadModel, productsTable, projectProducts } from './read-model';

/** The projection on the database the tests are given: PostgreSQL with DATABASE_URL, else PGlite. */
describe('products read model', () => {
  let database: Database;
  let store: EventStore;
  const schema = uniqueName('catalog_rm');
  const at = new Date('2026-01-01T00:00:00.000Z');

  beforeAll(async () => {
    database = process.env.DATABASE_URL ? postgresDatabase(process.env.DATABASE_URL) : await pgliteDatabase();
    store = new EventStore(database, { schema });
    await store.migrate();
    await migrateProductsReadModel(store);
    await migrateProductsReadModel(store); // migrating twice is harmless
  });
  afterAll(async () => {
    await database.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await database.close();
  });

  const createdEvent = (id: string, slug: string | null): ProductEvent => ({
    type: 'ProductCreated',
    data: {
      product_id: id,
      organization: 'org_1',
      environment: 'SANDBOX',
      name: 'Pro',
      slug,
      description: null,
      type: 'ONE_TIME',
      interval: null,
      interval_count: 1,
      price: 100,
      currency: 'TWD',
      trial_days: null,
      display_order: null,
      metadata: null,
      created_at: at.toISOString(),
    },
  });

  /** Appends and projects in one transaction, as the command handler does. */
  async function appendAndProject(id: string, events: ProductEvent[], expectedVersion: number) {
    return store.transaction(async (tx) => {
      const { events: recorded } = await tx.append(`product-${id}`, events, {
        expectedVersion,
        organization: 'org_1',
        environment: 'SANDBOX',
        occurredAt: at,
      });
      await projectProducts(tx, store.tables.schema, recorded);
      return recorded;
    });
  }

  const rowOf = async (id: string) =>
    (
      await database.query<{ stream_version: number; active: boolean; slug: string | null; document: unknown }>(
        `SELECT stream_version, active, slug, document FROM ${productsTable(store.tables.schema)} WHERE id = $1`,
        [id],
      )
    ).rows;

  it('is idempotent: projecting the same events twice leaves the same row', async () => {
    const recorded = await appendAndProject(
      'prod_a',
      [
        createdEvent('prod_a', 'a'),
        {
          type: 'ProductUpdated',
          data: { product_id: 'prod_a', changes: { price: 150 }, updated_at: '2026-01-02T00:00:00.000Z' },
        },
        { type: 'ProductArchived', data: { product_id: 'prod_a', archived_at: '2026-01-03T00:00:00.000Z' } },
      ],
      0,
    );
    const once = await rowOf('prod_a');
    await store.transaction((tx) => projectProducts(tx, store.tables.schema, recorded));
    await store.transaction((tx) => projectProducts(tx, store.tables.schema, recorded));
    expect(await rowOf('prod_a')).toEqual(once);
    expect(once).toEqual([
      expect.objectContaining({
        stream_version: 3,
        active: false,
        slug: 'a',
        document: expect.objectContaining({ price: 150, active: false, updated_at: '2026-01-03T00:00:00.000Z' }),
      }),
    ]);
  });

  it('skips an event older than the row, so a late replay cannot undo a newer change', async () => {
    const [created] = await appendAndProject('prod_b', [createdEvent('prod_b', null)], 0);
    await appendAndProject(
      'prod_b',
      [
        {
          type: 'ProductUpdated',
          data: { product_id: 'prod_b', changes: { name: 'Max' }, updated_at: at.toISOString() },
        },
      ],
      1,
    );
    await store.transaction((tx) => projectProducts(tx, store.tables.schema, [created as RecordedEvent]));
    expect(await rowOf('prod_b')).toEqual([
      expect.objectContaining({ stream_version: 2, document: expect.objectContaining({ name: 'Max' }) }),
    ]);
  });

  it('rebuilds the same rows from the streams', async () => {
    const before = await rowOf('prod_a');
    await database.query(`DELETE FROM ${productsTable(store.tables.schema)} WHERE id = 'prod_a'`);
    const history = await store.readStream('product-prod_a');
    await store.transaction((tx) => projectProducts(tx, store.tables.schema, history));
    expect(await rowOf('prod_a')).toEqual(before);
  });

  it('turns a slug taken in the same organization and environment into 409 slug_taken, and appends nothing', async () => {
    const attempt = appendAndProject('prod_c', [createdEvent('prod_c', 'a')], 0);
    await expect(attempt).rejects.toBeInstanceOf(ApiError);
    await expect(attempt).rejects.toMatchObject({
      status: 409,
      code: 'conflict',
      details: [expect.objectContaining({ path: 'slug', code: 'slug_taken' })],
    });
    expect(await store.readStream('product-prod_c')).toEqual([]);
    expect(await rowOf('prod_c')).toEqual([]);
  });
});
