import type { Environment, PortalConfiguration } from '@billing/contracts';
import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import { portalConfigurationEvents } from './configuration';

export const portalConfigurationsTable = (schema: string) => `${schema}.portal_configurations`;

export async function migratePortalConfigurationsReadModel(store: EventStore): Promise<void> {
  const table = portalConfigurationsTable(store.tables.schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${table} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      is_default boolean NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      stream_version integer NOT NULL,
      document jsonb NOT NULL
    );
    CREATE INDEX IF NOT EXISTS portal_configurations_tenant ON ${table} (organization, environment, created_at DESC);
  `);
}

/** Applies configuration events in the append's transaction; replays are skipped by stream version. */
export async function projectPortalConfigurations(
  sql: SqlExecutor,
  schema: string,
  events: RecordedEvent[],
): Promise<void> {
  const table = portalConfigurationsTable(schema);
  for (const recorded of events) {
    const event = portalConfigurationEvents.of(recorded);
    if (!event) continue;
    const c = event.data.object;
    if (event.type === 'PortalConfigurationCreated') {
      await sql.query(
        `INSERT INTO ${table} (id, organization, environment, is_default, created_at, updated_at, stream_version, document)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
        [
          c.id,
          event.data.organization,
          c.environment,
          c.is_default,
          c.created_at,
          c.updated_at,
          recorded.stream_version,
          JSON.stringify(c),
        ],
      );
    } else {
      await sql.query(
        `UPDATE ${table} SET is_default = $2, updated_at = $3, document = $4, stream_version = $5
         WHERE id = $1 AND stream_version < $5`,
        [c.id, c.is_default, c.updated_at, JSON.stringify(c), recorded.stream_version],
      );
    }
  }
}

type Scope = { organization: string; environment?: Environment };

export async function findPortalConfiguration(
  sql: SqlExecutor,
  schema: string,
  scope: Scope,
  id: string,
): Promise<PortalConfiguration | undefined> {
  const { rows } = await sql.query<{ document: PortalConfiguration }>(
    `SELECT document FROM ${portalConfigurationsTable(schema)}
     WHERE id = $1 AND organization = $2 AND ($3::text IS NULL OR environment = $3::text)`,
    [id, scope.organization, scope.environment ?? null],
  );
  return rows[0]?.document;
}

/** Newest first; one environment's or both. */
export async function listPortalConfigurations(sql: SqlExecutor, schema: string, scope: Scope) {
  const { rows } = await sql.query<{ document: PortalConfiguration }>(
    `SELECT document FROM ${portalConfigurationsTable(schema)}
     WHERE organization = $1 AND ($2::text IS NULL OR environment = $2::text)
     ORDER BY created_at DESC, id DESC LIMIT 100`,
    [scope.organization, scope.environment ?? null],
  );
  return rows.map((r) => r.document);
}

/**
 * The environment's default: the one marked default most recently (while a change of default
 * is being applied two may be marked for a moment; the newer wins).
 */
export async function defaultPortalConfiguration(
  sql: SqlExecutor,
  schema: string,
  scope: Required<Scope>,
): Promise<PortalConfiguration | undefined> {
  const { rows } = await sql.query<{ document: PortalConfiguration }>(
    `SELECT document FROM ${portalConfigurationsTable(schema)}
     WHERE organization = $1 AND environment = $2 AND is_default
     ORDER BY updated_at DESC, id DESC LIMIT 1`,
    [scope.organization, scope.environment],
  );
  return rows[0]?.document;
}

/** Ids of the environment's configurations marked default, but `except`. */
export async function otherDefaults(sql: SqlExecutor, schema: string, scope: Required<Scope>, except: string) {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM ${portalConfigurationsTable(schema)}
     WHERE organization = $1 AND environment = $2 AND is_default AND id <> $3`,
    [scope.organization, scope.environment, except],
  );
  return rows.map((r) => r.id);
}

export async function hasPortalConfigurations(sql: SqlExecutor, schema: string, scope: Required<Scope>) {
  const { rows } = await sql.query(
    `SELECT 1 FROM ${portalConfigurationsTable(schema)} WHERE organization = $1 AND environment = $2 LIMIT 1`,
    [scope.organization, scope.environment],
  );
  return rows.length > 0;
}
