import { conflict } from '@billing/contracts';
import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import { type Product, type ProductEvent, type ProductState, evolve, initialState, productEvents } from './product';

/** One row per product: what the public reads serve, written in the transaction of the append. */
export type ProductView = Product & { active: boolean };

export const productsTable = (schema: string) => `${schema}.products`;
const SLUG_INDEX = 'products_slug_unique';
const UNIQUE_VIOLATION = '23505';

/** The table lives in the store's own schema, so a test's schema gets its own table. */
export async function migrateProductsReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  const table = productsTable(schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${table} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      slug text,
      type text NOT NULL,
      active boolean NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      stream_version integer NOT NULL,
      document jsonb NOT NULL
    );
    -- Slugs are unique per organization and environment; this index is what enforces it.
    CREATE UNIQUE INDEX IF NOT EXISTS ${SLUG_INDEX} ON ${table} (organization, environment, slug)
      WHERE slug IS NOT NULL;
    CREATE INDEX IF NOT EXISTS products_newest_first
      ON ${table} (organization, environment, active, created_at DESC, id DESC);
  `);
}

/** The projection: a product event turns the row's document into the next one. */
export const productsProjection = {
  handles: productEvents.types,
  evolve(view: ProductView | null, event: ProductEvent): ProductView | null {
    return viewOf(evolve(view ? stateOf(view) : initialState(), event));
  },
};

export function viewOf(state: ProductState): ProductView | null {
  return state.status === 'Empty' ? null : { ...state.product, active: state.status === 'Active' };
}

function stateOf({ active, ...product }: ProductView): ProductState {
  return active ? { status: 'Active', product } : { status: 'Archived', product };
}

/**
 * Applies recorded events to the read model. An event at or below the row's stream version
 * has been applied already and is skipped, so replaying is harmless.
 */
export async function projectProducts(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  for (const event of events) {
    const productEvent = productEvents.of(event);
    if (!productEvent) continue;
    const id = productEvent.data.product_id;
    const { rows } = await sql.query<{ document: ProductView; stream_version: number }>(
      `SELECT document, stream_version FROM ${productsTable(schema)} WHERE id = $1`,
      [id],
    );
    const current = rows[0];
    if (current && current.stream_version >= event.stream_version) continue;
    const next = productsProjection.evolve(current?.document ?? null, productEvent);
    if (next) await upsert(sql, schema, next, event.stream_version);
  }
}

async function upsert(sql: SqlExecutor, schema: string, view: ProductView, streamVersion: number): Promise<void> {
  const table = productsTable(schema);
  try {
    await sql.query(
      `INSERT INTO ${table}
         (id, organization, environment, slug, type, active, created_at, updated_at, stream_version, document)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (id) DO UPDATE SET
         slug = EXCLUDED.slug, type = EXCLUDED.type, active = EXCLUDED.active,
         updated_at = EXCLUDED.updated_at, stream_version = EXCLUDED.stream_version, document = EXCLUDED.document
       WHERE ${table}.stream_version < EXCLUDED.stream_version`,
      [
        view.id,
        view.organization,
        view.environment,
        view.slug,
        view.type,
        view.active,
        view.created_at,
        view.updated_at,
        streamVersion,
        JSON.stringify(view),
      ],
    );
  } catch (error) {
    if (isSlugViolation(error)) {
      throw conflict('A product with this slug already exists', [
        { path: 'slug', message: `slug "${view.slug}" is already used by another product`, code: 'slug_taken' },
      ]);
    }
    throw error;
  }
}

function isSlugViolation(error: unknown): boolean {
  const { code, constraint, message } = error as { code?: string; constraint?: string; message?: string };
  return code === UNIQUE_VIOLATION && (constraint === SLUG_INDEX || (message ?? '').includes(SLUG_INDEX));
}
