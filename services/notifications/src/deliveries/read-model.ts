import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import { DELIVERY_EVENT_TYPES, asDeliveryEvent } from './delivery';

export const deliveryTables = (schema: string) => ({
  deliveries: `${schema}.webhook_deliveries`,
  attempts: `${schema}.webhook_attempts`,
  /** Last time an event id was scheduled for an endpoint: the one-hour dedupe window. */
  dedupe: `${schema}.webhook_dedupe`,
});

export async function migrateDeliveriesReadModel(store: EventStore): Promise<void> {
  const t = deliveryTables(store.tables.schema);
  await store.database.exec(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${t.deliveries} (
      id text PRIMARY KEY,
      endpoint_id text NOT NULL,
      organization text NOT NULL,
      environment text NOT NULL,
      event_id text NOT NULL,
      event_type text NOT NULL,
      status text NOT NULL,
      attempt_count integer NOT NULL,
      next_attempt_at timestamptz,
      -- A claimed attempt: no other scheduler takes the row before this time.
      lease_until timestamptz,
      created_at timestamptz NOT NULL,
      stream_version integer NOT NULL,
      body text NOT NULL
    );
    CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON ${t.deliveries} (next_attempt_at) WHERE status = 'PENDING';
    CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint ON ${t.deliveries} (endpoint_id, created_at DESC);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON ${t.deliveries} (organization, event_id);
    CREATE TABLE IF NOT EXISTS ${t.attempts} (
      delivery_id text NOT NULL,
      attempt integer NOT NULL,
      attempted_at timestamptz NOT NULL,
      status text NOT NULL,
      response_status integer,
      duration_ms integer NOT NULL,
      error text,
      PRIMARY KEY (delivery_id, attempt)
    );
    CREATE TABLE IF NOT EXISTS ${t.dedupe} (
      endpoint_id text NOT NULL,
      event_id text NOT NULL,
      scheduled_at timestamptz NOT NULL,
      PRIMARY KEY (endpoint_id, event_id)
    );
  `);
}

/** Applies delivery events in the append's transaction, guarded by stream version. */
export async function projectDeliveries(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const t = deliveryTables(schema);
  for (const event of events) {
    if (!(DELIVERY_EVENT_TYPES as readonly string[]).includes(event.type)) continue;
    const e = asDeliveryEvent(event);
    const guard = `id = $1 AND stream_version < $2`;
    switch (e.type) {
      case 'WebhookDeliveryScheduled': {
        const d = e.data;
        await sql.query(
          `INSERT INTO ${t.deliveries} (id, endpoint_id, organization, environment, event_id, event_type, status,
             attempt_count, next_attempt_at, created_at, stream_version, body)
           VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', 0, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
          [
            d.delivery_id,
            d.endpoint_id,
            event.organization,
            event.environment,
            d.event_id,
            d.event_type,
            d.next_attempt_at,
            d.created_at,
            event.stream_version,
            d.body,
          ],
        );
        break;
      }
      case 'WebhookDeliveryAttempted': {
        const d = e.data;
        const status = d.outcome === 'succeeded' ? 'SUCCEEDED' : d.outcome === 'failed' ? 'FAILED' : 'PENDING';
        const updated = await sql.query(
          `UPDATE ${t.deliveries} SET status = $3, attempt_count = $4, next_attempt_at = $5, lease_until = NULL,
             stream_version = $2 WHERE ${guard}`,
          [d.delivery_id, event.stream_version, status, d.attempt, d.next_attempt_at],
        );
        if (updated.rowCount === 0) break;
        await sql.query(
          `INSERT INTO ${t.attempts} (delivery_id, attempt, attempted_at, status, response_status, duration_ms, error)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
          [
            d.delivery_id,
            d.attempt,
            d.attempted_at,
            d.outcome === 'succeeded' ? 'succeeded' : 'failed',
            d.response_status,
            d.duration_ms,
            d.error,
          ],
        );
        break;
      }
      case 'WebhookDeliveryReplayed':
        await sql.query(
          `UPDATE ${t.deliveries} SET status = 'PENDING', next_attempt_at = $3, lease_until = NULL, stream_version = $2
           WHERE ${guard}`,
          [e.data.delivery_id, event.stream_version, e.data.next_attempt_at],
        );
        break;
      case 'WebhookDeliveryCanceled':
        await sql.query(
          `UPDATE ${t.deliveries} SET status = 'CANCELED', next_attempt_at = NULL, lease_until = NULL,
             stream_version = $2 WHERE ${guard}`,
          [e.data.delivery_id, event.stream_version],
        );
        break;
      default: {
        const _unknown: never = e;
      }
    }
  }
}

/**
 * Claims the (endpoint, event id) pair for the next hour. Returns false when the same event
 * was scheduled for the endpoint less than an hour ago: the caller then sends nothing.
 */
export async function claimDedupe(
  sql: SqlExecutor,
  schema: string,
  endpointId: string,
  eventId: string,
  now: Date,
  windowMs: number,
): Promise<boolean> {
  const { rows } = await sql.query(
    `INSERT INTO ${deliveryTables(schema).dedupe} AS d (endpoint_id, event_id, scheduled_at) VALUES ($1, $2, $3)
     ON CONFLICT (endpoint_id, event_id) DO UPDATE SET scheduled_at = EXCLUDED.scheduled_at
     WHERE d.scheduled_at <= $4
     RETURNING 1`,
    [endpointId, eventId, now.toISOString(), new Date(now.getTime() - windowMs).toISOString()],
  );
  return rows.length > 0;
}
