import { conflict } from '@billing/contracts';
import { type EventStore, type RecordedEvent, type SqlExecutor, documentTable } from '@billing/eventstore';
import { type Product, type ProductEvent, type ProductState, evolve, initialState, productEvents } from './product';

/** One row per product: what the public reads serve, written in the transaction of the append. */
export type ProductView = Product & { active: boolean };

const SLUG_INDEX = 'products_slug_unique';
const UNIQUE_VIOLATION = '23505';

const products = documentTable<ProductView>({
  name: 'products',
  columns: { slug: 'text', type: 'text NOT NULL', active: 'boolean NOT NULL', updated_at: 'timestamptz NOT NULL' },
  columnsOf: (view) => [view.slug, view.type, view.active, view.updated_at],
  indexes: [
    // Slugs are unique per organization and environment; this index is what enforces it.
    `CREATE UNIQUE INDEX IF NOT EXISTS ${SLUG_INDEX} ON {table} (organization, environment, slug) WHERE slug IS NOT NULL`,
    'CREATE INDEX IF NOT EXISTS products_newest_first ON {table} (organization, environment, active, created_at DESC, id DESC)',
  ],
});

export const productsTable = products.table;

/** The table lives in the store's own schema, so a test's schema gets its own table. */
export async function migrateProductsReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`CREATE SCHEMA IF NOT EXISTS ${schema};${products.ddl(schema)}`);
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
    const current = await products.read(sql, schema, productEvent.data.product_id);
    if (current && current.stream_version >= event.stream_version) continue;
    const next = productsProjection.evolve(current?.document ?? null, productEvent);
    if (next) await upsert(sql, schema, next, event.stream_version);
  }
}

async function upsert(sql: SqlExecutor, schema: string, view: ProductView, streamVersion: number): Promise<void> {
  try {
    await products.write(sql, schema, view, streamVersion);
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
