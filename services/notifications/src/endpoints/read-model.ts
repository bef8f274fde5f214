import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import { type Endpoint, endpointEvents, evolve } from './endpoint';

export const endpointTables = (schema: string) => ({
  endpoints: `${schema}.webhook_endpoints`,
  // Kept out of the events (they are published); written in the append's transaction.
  secrets: `${schema}.webhook_endpoint_secrets`,
});

export async function migrateEndpointsReadModel(store: EventStore): Promise<void> {
  const t = endpointTables(store.tables.schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${t.endpoints} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      url text NOT NULL,
      events text[] NOT NULL,
      is_active boolean NOT NULL,
      deleted boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      stream_version integer NOT NULL,
      document jsonb NOT NULL
    );
    CREATE INDEX IF NOT EXISTS webhook_endpoints_newest_first
      ON ${t.endpoints} (organization, environment, created_at DESC, id DESC);
    CREATE TABLE IF NOT EXISTS ${t.secrets} (
      endpoint_id text PRIMARY KEY,
      secret text NOT NULL
    );
  `);
}

/**
 * Applies endpoint events in the append's transaction. An event at or below the row's stream
 * version was applied already and is skipped, so replaying is harmless.
 */
export async function projectEndpoints(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const table = endpointTables(schema).endpoints;
  for (const event of events) {
    const endpointEvent = endpointEvents.of(event);
    if (!endpointEvent) continue;
    const { rows } = await sql.query<{ document: Endpoint; stream_version: number; deleted: boolean }>(
      `SELECT document, stream_version, deleted FROM ${table} WHERE id = $1`,
      [endpointEvent.data.endpoint_id],
    );
    const current = rows[0];
    if (current && current.stream_version >= event.stream_version) continue;
    const state = current
      ? { status: current.deleted ? ('Deleted' as const) : ('Existing' as const), endpoint: current.document }
      : { status: 'Empty' as const };
    const next = evolve(state, endpointEvent);
    if (next.status === 'Empty') continue;
    const e = next.endpoint;
    await sql.query(
      `INSERT INTO ${table} (id, organization, environment, url, events, is_active, deleted, created_at, stream_version, document)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, events = EXCLUDED.events, is_active = EXCLUDED.is_active,
         deleted = EXCLUDED.deleted, stream_version = EXCLUDED.stream_version, document = EXCLUDED.document
       WHERE ${table}.stream_version < EXCLUDED.stream_version`,
      [
        e.id,
        e.organization,
        e.environment,
        e.url,
        e.events,
        e.is_active,
        next.status === 'Deleted',
        e.created_at,
        event.stream_version,
        JSON.stringify(e),
      ],
    );
  }
}

export async function saveSecret(sql: SqlExecutor, schema: string, endpointId: string, secret: string) {
  await sql.query(
    `INSERT INTO ${endpointTables(schema).secrets} (endpoint_id, secret) VALUES ($1, $2)
     ON CONFLICT (endpoint_id) DO UPDATE SET secret = EXCLUDED.secret`,
    [endpointId, secret],
  );
}
