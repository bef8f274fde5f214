import type { Environment, PortalConfiguration } from '@billing/contracts';
import {
  type EventStore,
  type RecordedEvent,
  type RowTenant,
  type SqlExecutor,
  documentTable,
} from '@billing/eventstore';
import { portalConfigurationEvents } from './configuration';

/** One row per configuration; the configuration has no organization, so `write` is given the tenant. */
const configurations = documentTable<PortalConfiguration>({
  name: 'portal_configurations',
  columns: { is_default: 'boolean NOT NULL', updated_at: 'timestamptz NOT NULL' },
  columnsOf: (configuration) => [configuration.is_default, configuration.updated_at],
  indexes: [
    'CREATE INDEX IF NOT EXISTS portal_configurations_tenant ON {table} (organization, environment, created_at DESC)',
  ],
});

export const portalConfigurationsTable = configurations.table;

export async function migratePortalConfigurationsReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`CREATE SCHEMA IF NOT EXISTS ${schema};${configurations.ddl(schema)}`);
}

/**
 * Applies configuration events in the append's transaction; replays are skipped by stream
 * version. An update of a configuration whose row is absent changes nothing.
 */
export async function projectPortalConfigurations(
  sql: SqlExecutor,
  schema: string,
  events: RecordedEvent[],
): Promise<void> {
  for (const recorded of events) {
    const event = portalConfigurationEvents.of(recorded);
    if (!event) continue;
    const c = event.data.object;
    if (event.type === 'PortalConfigurationCreated') {
      const tenant = { organization: event.data.organization, environment: c.environment };
      await configurations.write(sql, schema, c, recorded.stream_version, { tenant });
      continue;
    }
    const current = await configurations.read<RowTenant>(sql, schema, c.id, ['organization', 'environment']);
    if (!current || current.stream_version >= recorded.stream_version) continue;
    await configurations.write(sql, schema, c, recorded.stream_version, { tenant: current });
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
