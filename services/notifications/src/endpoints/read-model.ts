import { type EventStore, type RecordedEvent, type SqlExecutor, documentTable } from '@billing/eventstore';
import { type Endpoint, endpointEvents, evolve } from './endpoint';

/** `deleted` is the state's, not the document's: `write` is given the columns' values. */
const endpoints = documentTable<Endpoint>({
  name: 'webhook_endpoints',
  columns: {
    url: 'text NOT NULL',
    events: 'text[] NOT NULL',
    is_active: 'boolean NOT NULL',
    deleted: 'boolean NOT NULL DEFAULT false',
  },
  indexes: [
    'CREATE INDEX IF NOT EXISTS webhook_endpoints_newest_first ON {table} (organization, environment, created_at DESC, id DESC)',
  ],
});

export const endpointTables = (schema: string) => ({
  endpoints: endpoints.table(schema),
  // Kept out of the events (they are published); written in the append's transaction.
  secrets: `${schema}.webhook_endpoint_secrets`,
});

export async function migrateEndpointsReadModel(store: EventStore): Promise<void> {
  const t = endpointTables(store.tables.schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};${endpoints.ddl(store.tables.schema)}
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
  for (const event of events) {
    const endpointEvent = endpointEvents.of(event);
    if (!endpointEvent) continue;
    const current = await endpoints.read<{ deleted: boolean }>(sql, schema, endpointEvent.data.endpoint_id, [
      'deleted',
    ]);
    if (current && current.stream_version >= event.stream_version) continue;
    const state = current
      ? { status: current.deleted ? ('Deleted' as const) : ('Existing' as const), endpoint: current.document }
      : { status: 'Empty' as const };
    const next = evolve(state, endpointEvent);
    if (next.status === 'Empty') continue;
    const e = next.endpoint;
    await endpoints.write(sql, schema, e, event.stream_version, [
      e.url,
      e.events,
      e.is_active,
      next.status === 'Deleted',
    ]);
  }
}

export async function saveSecret(sql: SqlExecutor, schema: string, endpointId: string, secret: string) {
  await sql.query(
    `INSERT INTO ${endpointTables(schema).secrets} (endpoint_id, secret) VALUES ($1, $2)
     ON CONFLICT (endpoint_id) DO UPDATE SET secret = EXCLUDED.secret`,
    [endpointId, secret],
  );
}
