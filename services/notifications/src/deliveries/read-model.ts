import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import { type WebhookDeliveryEvent, deliveryEvents } from './delivery';

export const deliveryTables = (schema: string) => ({
  deliveries: `${schema}.webhook_deliveries`,
  attempts: `${schema}.webhook_attempts`,
  /** Last time an event id was scheduled for an endpoint: the one-hour dedupe window. */
  dedupe: `${schema}.webhook_dedupe`,
});

export async function migrateDeliveriesReadModel(store: EventStore): Promise<void> {
  const t = deliveryTables(store.tables.schema);
  await store.migrateSchema(`
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
    -- The scheduler's claims (./claim.ts): pending deliveries by endpoint, earliest due first.
    CREATE INDEX IF NOT EXISTS webhook_deliveries_pending ON ${t.deliveries} (endpoint_id, next_attempt_at, id)
      WHERE status = 'PENDING';
    DROP INDEX IF EXISTS ${store.tables.schema}.webhook_deliveries_due;
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

/**
 * Applies delivery events in the append's transaction, guarded by stream version. Runs of
 * `WebhookDeliveryScheduled` or `WebhookDeliveryAttempted` events of distinct deliveries (a
 * batch of new deliveries, a batch of recorded attempts) are written with one statement each.
 */
export async function projectDeliveries(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  let run: RecordedEvent[] = [];
  const flush = async () => {
    if (run.length > 0) await projectRun(sql, schema, run);
    run = [];
  };
  for (const event of events) {
    const delivery = deliveryEvents.of(event);
    if (!delivery) continue;
    const batchable = event.type === 'WebhookDeliveryScheduled' || event.type === 'WebhookDeliveryAttempted';
    const joins =
      batchable && run.length > 0 && run[0]!.type === event.type && run.every((e) => e.stream !== event.stream);
    if (!joins) await flush();
    if (batchable) run.push(event);
    else await projectOne(sql, schema, delivery, event.stream_version);
  }
  await flush();
}

/** Events of one type (Scheduled or Attempted), each of another delivery. */
async function projectRun(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const t = deliveryTables(schema);
  const data = events.map((event) => event.data);
  const column = (name: string) => data.map((d) => d[name] ?? null);
  const versions = events.map((event) => event.stream_version);
  if (events[0]!.type === 'WebhookDeliveryScheduled') {
    await sql.write(
      `INSERT INTO ${t.deliveries} (id, endpoint_id, organization, environment, event_id, event_type, status,
         attempt_count, next_attempt_at, created_at, stream_version, body)
       SELECT id, endpoint_id, organization, environment, event_id, event_type, 'PENDING', 0, next_attempt_at,
         created_at, stream_version, body
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
         $8::timestamptz[], $9::integer[], $10::text[])
         AS s(id, endpoint_id, organization, environment, event_id, event_type, next_attempt_at, created_at,
           stream_version, body)
       ON CONFLICT (id) DO NOTHING`,
      [
        column('delivery_id'),
        column('endpoint_id'),
        events.map((e) => e.organization),
        events.map((e) => e.environment),
        column('event_id'),
        column('event_type'),
        column('next_attempt_at'),
        column('created_at'),
        versions,
        column('body'),
      ],
    );
    return;
  }
  const outcomes = column('outcome') as string[];
  // The attempt is logged only for a delivery the update moved (not one applied already).
  await sql.write(
    `WITH a AS (
       SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::integer[], $5::timestamptz[], $6::text[],
         $7::integer[], $8::integer[], $9::text[], $10::timestamptz[])
         AS a(delivery_id, stream_version, status, attempt, next_attempt_at, outcome, response_status, duration_ms,
           error, attempted_at)
     ), updated AS (
       UPDATE ${t.deliveries} d SET status = a.status, attempt_count = a.attempt, next_attempt_at = a.next_attempt_at,
         lease_until = NULL, stream_version = a.stream_version
       FROM a WHERE d.id = a.delivery_id AND d.stream_version < a.stream_version
       RETURNING d.id
     )
     INSERT INTO ${t.attempts} (delivery_id, attempt, attempted_at, status, response_status, duration_ms, error)
     SELECT a.delivery_id, a.attempt, a.attempted_at, a.outcome, a.response_status, a.duration_ms, a.error
     FROM a JOIN updated u ON u.id = a.delivery_id
     ON CONFLICT DO NOTHING`,
    [
      column('delivery_id'),
      versions,
      outcomes.map((o) => (o === 'succeeded' ? 'SUCCEEDED' : o === 'failed' ? 'FAILED' : 'PENDING')),
      column('attempt'),
      column('next_attempt_at'),
      outcomes.map((o) => (o === 'succeeded' ? 'succeeded' : 'failed')),
      column('response_status'),
      column('duration_ms'),
      column('error'),
      column('attempted_at'),
    ],
  );
}

/** A replay or a cancel: one statement each. */
async function projectOne(sql: SqlExecutor, schema: string, e: WebhookDeliveryEvent, version: number): Promise<void> {
  const t = deliveryTables(schema);
  const guard = `id = $1 AND stream_version < $2`;
  if (e.type === 'WebhookDeliveryReplayed') {
    await sql.query(
      `UPDATE ${t.deliveries} SET status = 'PENDING', next_attempt_at = $3, lease_until = NULL, stream_version = $2
       WHERE ${guard}`,
      [e.data.delivery_id, version, e.data.next_attempt_at],
    );
  } else if (e.type === 'WebhookDeliveryCanceled') {
    await sql.query(
      `UPDATE ${t.deliveries} SET status = 'CANCELED', next_attempt_at = NULL, lease_until = NULL,
         stream_version = $2 WHERE ${guard}`,
      [e.data.delivery_id, version],
    );
  }
}

/**
 * Claims (endpoint, event id) pairs for the next hour, in one statement. Returns the pairs
 * claimed, as `endpoint\0event`; a pair scheduled for the endpoint less than an hour ago is
 * left out (the caller sends nothing for it), and a pair given twice is claimed once.
 */
export async function claimDedupes(
  sql: SqlExecutor,
  schema: string,
  pairs: Array<{ endpointId: string; eventId: string }>,
  now: Date,
  windowMs: number,
): Promise<Set<string>> {
  const keyOf = (endpointId: string, eventId: string) => `${endpointId}\u0000${eventId}`;
  const distinct = [...new Map(pairs.map((p) => [keyOf(p.endpointId, p.eventId), p])).values()];
  if (distinct.length === 0) return new Set();
  const { rows } = await sql.query<{ endpoint_id: string; event_id: string }>(
    `INSERT INTO ${deliveryTables(schema).dedupe} AS d (endpoint_id, event_id, scheduled_at)
     SELECT endpoint_id, event_id, $3 FROM unnest($1::text[], $2::text[]) AS p(endpoint_id, event_id)
     ON CONFLICT (endpoint_id, event_id) DO UPDATE SET scheduled_at = EXCLUDED.scheduled_at
     WHERE d.scheduled_at <= $4
     RETURNING d.endpoint_id, d.event_id`,
    [
      distinct.map((p) => p.endpointId),
      distinct.map((p) => p.eventId),
      now.toISOString(),
      new Date(now.getTime() - windowMs).toISOString(),
    ],
  );
  return new Set(rows.map((row) => keyOf(row.endpoint_id, row.event_id)));
}
