import type { Database } from './database';

/**
 * Runs a migration of `schema` (DDL, several statements allowed) in one transaction that first
 * takes the schema's migration lock. Replicas starting together on a fresh database otherwise
 * race on `CREATE ... IF NOT EXISTS`, which checks the catalog before it inserts: all but one
 * fail with a duplicate key. The lock is transaction-level, so a crash mid-migration releases it.
 *
 * Every migration of a schema takes the same lock, whether it names the schema quoted or not.
 * PGlite has one connection in one process: nothing there to race with.
 */
export async function migrateSchema(database: Database, schema: string, ddl: string): Promise<void> {
  if (database.kind === 'pglite') return database.exec(ddl);
  await database.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [migrationLockOf(schema)]);
    // Without parameters the text goes as a simple query, which may hold several statements.
    await tx.query(ddl);
  });
}

const migrationLockOf = (schema: string) => `migrate:${schema.replaceAll('"', '')}`;
