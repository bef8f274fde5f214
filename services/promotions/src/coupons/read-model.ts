import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import { type Coupon, couponEvents, evolve, initialState } from './coupon';

export const couponsTable = (schema: string) => `${schema}.coupons`;

export async function migrateCouponsReadModel(store: EventStore): Promise<void> {
  const table = couponsTable(store.tables.schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${table} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      created_at timestamptz NOT NULL,
      stream_version integer NOT NULL,
      document jsonb NOT NULL
    );
    CREATE INDEX IF NOT EXISTS coupons_newest_first ON ${table} (organization, environment, created_at DESC, id DESC);
  `);
}

/**
 * Applies coupon events to the read model in the append's transaction. An event at or below
 * the row's stream version was applied already and is skipped, so replaying is harmless.
 */
export async function projectCoupons(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const table = couponsTable(schema);
  for (const event of events) {
    const couponEvent = couponEvents.of(event);
    if (!couponEvent) continue;
    const id = couponEvent.data.coupon_id;
    const { rows } = await sql.query<{ document: Coupon; stream_version: number }>(
      `SELECT document, stream_version FROM ${table} WHERE id = $1`,
      [id],
    );
    const current = rows[0];
    if (current && current.stream_version >= event.stream_version) continue;
    const next = evolve(current ? { status: 'Existing', coupon: current.document } : initialState(), couponEvent);
    if (next.status === 'Empty') continue;
    const c = next.coupon;
    await sql.query(
      `INSERT INTO ${table} (id, organization, environment, created_at, stream_version, document)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET stream_version = EXCLUDED.stream_version, document = EXCLUDED.document
       WHERE ${table}.stream_version < EXCLUDED.stream_version`,
      [c.id, c.organization, c.environment, c.created_at, event.stream_version, JSON.stringify(c)],
    );
  }
}
