import { type EventStore, type RecordedEvent, type SqlExecutor, documentTable } from '@billing/eventstore';
import { type Coupon, couponEvents, evolve, initialState } from './coupon';

/** One row per coupon: what the public reads serve, written in the transaction of the append. */
const coupons = documentTable<Coupon>({
  name: 'coupons',
  indexes: [
    'CREATE INDEX IF NOT EXISTS coupons_newest_first ON {table} (organization, environment, created_at DESC, id DESC)',
  ],
});

export const couponsTable = coupons.table;

export async function migrateCouponsReadModel(store: EventStore): Promise<void> {
  await store.migrateSchema(`CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};${coupons.ddl(store.tables.schema)}`);
}

/**
 * Applies coupon events to the read model in the append's transaction. An event at or below
 * the row's stream version was applied already and is skipped, so replaying is harmless.
 */
export async function projectCoupons(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  for (const event of events) {
    const couponEvent = couponEvents.of(event);
    if (!couponEvent) continue;
    const current = await coupons.read(sql, schema, couponEvent.data.coupon_id);
    if (current && current.stream_version >= event.stream_version) continue;
    const next = evolve(current ? { status: 'Existing', coupon: current.document } : initialState(), couponEvent);
    if (next.status !== 'Empty') await coupons.write(sql, schema, next.coupon, event.stream_version);
  }
}
