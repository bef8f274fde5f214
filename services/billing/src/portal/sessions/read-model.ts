import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { type PortalSessionFacts, portalSessionEvents } from './session';

export const portalSessionsTable = (schema: string) => `${schema}.portal_sessions`;

export async function migratePortalSessionsReadModel(store: EventStore): Promise<void> {
  const table = portalSessionsTable(store.tables.schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${table} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      customer_id text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked boolean NOT NULL DEFAULT false,
      stream_version integer NOT NULL,
      document jsonb NOT NULL,
      -- Creation order when the clock gives several sessions one instant (a frozen test clock).
      seq bigint GENERATED ALWAYS AS IDENTITY
    );
    CREATE INDEX IF NOT EXISTS portal_sessions_customer_active ON ${table} (customer_id, created_at DESC, seq DESC)
      WHERE NOT revoked;
  `);
}

/** Applies portal-session events in the append's transaction; replays are skipped by stream version. */
export async function projectPortalSessions(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const table = portalSessionsTable(schema);
  for (const recorded of events) {
    const event = portalSessionEvents.of(recorded);
    if (!event) continue;
    switch (event.type) {
      case 'PortalSessionCreated': {
        const s = event.data.session;
        await sql.query(
          `INSERT INTO ${table} (id, organization, environment, customer_id, created_at, expires_at, stream_version, document)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
          [
            s.id,
            event.data.organization,
            event.data.environment,
            s.customer_id,
            s.created_at,
            s.expires_at,
            recorded.stream_version,
            JSON.stringify(s),
          ],
        );
        break;
      }
      case 'PortalSessionAccessed':
        await sql.query(
          `UPDATE ${table} SET document = jsonb_set(document, '{accessed_at}', to_jsonb($2::text)), stream_version = $3
           WHERE id = $1 AND stream_version < $3`,
          [event.data.session_id, event.data.accessed_at, recorded.stream_version],
        );
        break;
      case 'PortalSessionRevoked':
        await sql.query(
          `UPDATE ${table} SET revoked = true, document = jsonb_set(document, '{revoked_at}', to_jsonb($2::text)),
             stream_version = $3
           WHERE id = $1 AND stream_version < $3`,
          [event.data.session_id, event.data.revoked_at, recorded.stream_version],
        );
        break;
    }
  }
}

export type StoredPortalSession = PortalSessionFacts & { organization: string; environment: Tenant['environment'] };

/** A session by id in the tenant; by id alone (`tenant` null) for the page, whose URL carries it. */
export async function findPortalSession(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant | null,
  id: string,
): Promise<StoredPortalSession | undefined> {
  const { rows } = await sql.query<{
    document: PortalSessionFacts;
    organization: string;
    environment: Tenant['environment'];
  }>(
    `SELECT document, organization, environment FROM ${portalSessionsTable(schema)}
     WHERE id = $1 AND ($2::text IS NULL OR (organization = $2::text AND environment = $3::text))`,
    [id, tenant?.organization ?? null, tenant?.environment ?? null],
  );
  const row = rows[0];
  return row ? { ...row.document, organization: row.organization, environment: row.environment } : undefined;
}

/** The customer's sessions active at `now`, newest first. */
export async function activePortalSessions(sql: SqlExecutor, schema: string, customerId: string, now: Date) {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM ${portalSessionsTable(schema)}
     WHERE customer_id = $1 AND NOT revoked AND expires_at > $2
     ORDER BY created_at DESC, seq DESC`,
    [customerId, now.toISOString()],
  );
  return rows.map((r) => r.id);
}
