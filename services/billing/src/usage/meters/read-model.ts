import type { Meter } from '@billing/contracts';
import { type EventStore, type RecordedEvent, type SqlExecutor, documentTable } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { meterEvents, meterOf } from './meter';

/** One row per meter; a key is taken once per environment (the unique index refuses a second). */
const meters = documentTable<Meter>({
  name: 'meters',
  columns: { key: 'text NOT NULL' },
  columnsOf: (meter) => [meter.key],
  indexes: ['CREATE UNIQUE INDEX IF NOT EXISTS meters_by_key ON {table} (organization, environment, key)'],
});

export const metersTable = meters.table;

export async function migrateMetersReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`CREATE SCHEMA IF NOT EXISTS ${schema};${meters.ddl(schema)}`);
}

export async function projectMeters(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  for (const recorded of events) {
    const event = meterEvents.of(recorded);
    if (event) await meters.write(sql, schema, event.data.object, recorded.stream_version, { tenant: recorded });
  }
}

/** A unique index's refusal of a second meter with a key. */
export const isMeterKeyTaken = (error: unknown) =>
  typeof error === 'object' &&
  error !== null &&
  (error as { code?: unknown }).code === '23505' &&
  String((error as { constraint?: unknown }).constraint ?? '') === 'meters_by_key';

/** The tenant's meters in key order. */
export async function listMeters(sql: SqlExecutor, schema: string, tenant: Tenant): Promise<Meter[]> {
  const { rows } = await sql.query<{ document: Meter }>(
    `SELECT document FROM ${metersTable(schema)} WHERE organization = $1 AND environment = $2 ORDER BY key`,
    [tenant.organization, tenant.environment],
  );
  return rows.map((row) => meterOf(row.document));
}

/** One of the tenant's meters, or undefined. */
export async function findMeter(sql: SqlExecutor, schema: string, tenant: Tenant, id: string) {
  const { rows } = await sql.query<{ document: Meter }>(
    `SELECT document FROM ${metersTable(schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0] && meterOf(rows[0].document);
}

/** The tenant's meters by key, of the keys given (those that exist). */
export async function metersByKey(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  keys: string[],
): Promise<Map<string, Meter>> {
  const { rows } = await sql.query<{ document: Meter }>(
    `SELECT document FROM ${metersTable(schema)} WHERE organization = $1 AND environment = $2 AND key = ANY($3::text[])`,
    [tenant.organization, tenant.environment, keys],
  );
  return new Map(rows.map((row) => [row.document.key, meterOf(row.document)]));
}
