import { type TestClock, unknownCursor } from '@billing/contracts';
import { type EventStore, type RecordedEvent, type SqlExecutor, cursorPage } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { testClockEvents } from './clock';

export const testClocksTable = (schema: string) => `${schema}.test_clocks`;

export async function migrateTestClocksReadModel(store: EventStore): Promise<void> {
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${testClocksTable(store.tables.schema)} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      status text NOT NULL,
      stream_version integer NOT NULL,
      document jsonb NOT NULL
    );
    CREATE INDEX IF NOT EXISTS test_clocks_advancing ON ${testClocksTable(store.tables.schema)} (id) WHERE status = 'advancing';
    ALTER TABLE ${testClocksTable(store.tables.schema)} ADD COLUMN IF NOT EXISTS created_at timestamptz;
    UPDATE ${testClocksTable(store.tables.schema)} SET created_at = (document->>'created_at')::timestamptz
      WHERE created_at IS NULL;
    CREATE INDEX IF NOT EXISTS test_clocks_by_tenant
      ON ${testClocksTable(store.tables.schema)} (organization, environment, created_at DESC, id DESC);
  `);
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
    const clock = event.data.object;
    await sql.query(
      `INSERT INTO ${table} (id, organization, environment, status, stream_version, document, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, stream_version = EXCLUDED.stream_version,
         document = EXCLUDED.document
       WHERE ${table}.stream_version < EXCLUDED.stream_version`,
      [
        clock.id,
        recorded.organization,
        recorded.environment,
        clock.status,
        recorded.stream_version,
        JSON.stringify(clock),
        clock.created_at,
      ],
    );
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
