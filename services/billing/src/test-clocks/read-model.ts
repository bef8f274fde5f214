import { type TestClock, unknownCursor } from '@billing/contracts';
import { type EventStore, type RecordedEvent, type SqlExecutor, cursorPage, documentTable } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { testClockEvents } from './clock';

/** One row per clock; the clock (a public object) has no tenant, so `write` is given the event's. */
const testClocks = documentTable<TestClock>({
  name: 'test_clocks',
  columns: { status: 'text NOT NULL' },
  columnsOf: (clock) => [clock.status],
  migrations: [
    // Tables made before created_at was kept: the column, filled from the documents.
    'ALTER TABLE {table} ADD COLUMN IF NOT EXISTS created_at timestamptz',
    "UPDATE {table} SET created_at = (document->>'created_at')::timestamptz WHERE created_at IS NULL",
  ],
  indexes: [
    "CREATE INDEX IF NOT EXISTS test_clocks_advancing ON {table} (id) WHERE status = 'advancing'",
    'CREATE INDEX IF NOT EXISTS test_clocks_by_tenant ON {table} (organization, environment, created_at DESC, id DESC)',
  ],
});

export const testClocksTable = testClocks.table;

export async function migrateTestClocksReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`CREATE SCHEMA IF NOT EXISTS ${schema};${testClocks.ddl(schema)}`);
}

/** A deleted clock's row goes: it is absent to every read. */
export async function projectTestClocks(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const table = testClocksTable(schema);
  for (const recorded of events) {
    const event = testClockEvents.of(recorded);
    if (!event) continue;
    if (event.type === 'TestClockDeleted') {
      await sql.query(`DELETE FROM ${table} WHERE id = $1`, [event.data.clock_id]);
      continue;
    }
    await testClocks.write(sql, schema, event.data.object, recorded.stream_version, { tenant: recorded });
  }
}

export async function findTestClock(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  id: string,
): Promise<TestClock | undefined> {
  const { rows } = await sql.query<{ document: TestClock }>(
    `SELECT document FROM ${testClocksTable(schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0]?.document;
}

/** One page of the tenant's clocks, newest first; an unknown `starting_after` is a 400. */
export async function listTestClocks(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  page: { limit: number; starting_after?: string },
): Promise<{ documents: TestClock[]; hasMore: boolean }> {
  const after = page.starting_after ? await findTestClock(sql, schema, tenant, page.starting_after) : null;
  if (page.starting_after && !after) throw unknownCursor(page.starting_after, 'test clock');
  return cursorPage<TestClock>(sql, testClocksTable(schema), {
    where: { organization: tenant.organization, environment: tenant.environment },
    after: after ? { created_at: after.created_at, id: after.id } : null,
    limit: page.limit,
  });
}

/**
 * The time for something on test clock `clockId` (a customer's or a subscription's): the clock's
 * frozen time, or `now()` when it is on none (or the clock is gone).
 */
export async function timeOn(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  clockId: string | null | undefined,
  now: () => Date,
): Promise<Date> {
  const clock = clockId ? await findTestClock(sql, schema, tenant, clockId) : undefined;
  return clock ? new Date(clock.frozen_time) : now();
}

/** Clocks whose advance has not finished: after a crash, the sweep runs them again. */
export async function findAdvancingClocks(sql: SqlExecutor, schema: string) {
  const { rows } = await sql.query<{ id: string; organization: string; environment: Tenant['environment'] }>(
    `SELECT id, organization, environment FROM ${testClocksTable(schema)} WHERE status = 'advancing'`,
  );
  return rows;
}
