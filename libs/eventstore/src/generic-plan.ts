import { randomUUID } from 'node:crypto';
import type { Database } from './database';

/**
 * The plan PostgreSQL keeps for `text` as a prepared statement once it plans it generically
 * (as it does after a statement's fifth run, for every later one), with `args` (SQL literals)
 * for its parameters, as `EXPLAIN` text. For tests that a hot statement looks rows up by an
 * index however its tables grow: a generic plan made while a table was small keeps its scans.
 */
export async function genericPlan(database: Database, text: string, args: readonly string[]): Promise<string> {
  const name = `plan_${randomUUID().replaceAll('-', '')}`;
  return database.transaction(async (tx) => {
    await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await tx.query(`PREPARE ${name} AS ${text}`);
    const { rows } = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${name}(${args.join(', ')})`);
    await tx.query(`DEALLOCATE ${name}`);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}
