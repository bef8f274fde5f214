import type { SqlExecutor } from './database';

/** Where a page starts: after the row with this `created_at` and `id` (the last one seen). */
export type PageCursor = { created_at: string | Date; id: string };

/**
 * The cursor of a list's `starting_after`: the row it names, found by `find` (which confines it
 * to the caller's organization and environment), or `unknown(id)` thrown when it names none.
 */
export async function cursorAfter(
  startingAfter: string | undefined,
  find: (id: string) => Promise<PageCursor | undefined>,
  unknown: (id: string) => Error,
): Promise<PageCursor | null> {
  if (startingAfter === undefined) return null;
  const row = await find(startingAfter);
  if (!row) throw unknown(startingAfter);
  return { created_at: row.created_at, id: row.id };
}

/**
 * One page of a read model's `document`s (or of the column `select` names), newest first
 * (`created_at` desc, then `id` desc), after `after` when given, where each column of `where`
 * equals its value (an undefined value does not filter). The table and column names come from
 * code, never from a request. One row more than `limit` is read to know whether more follow.
 */
export async function cursorPage<T>(
  sql: SqlExecutor,
  table: string,
  page: { where: Record<string, string | undefined>; after: PageCursor | null; limit: number; select?: string },
): Promise<{ documents: T[]; hasMore: boolean }> {
  const params: unknown[] = [];
  const conditions: string[] = [];
  for (const [column, value] of Object.entries(page.where)) {
    if (value === undefined) continue;
    params.push(value);
    conditions.push(`${column} = $${params.length}::text`);
  }
  if (page.after) {
    params.push(new Date(page.after.created_at).toISOString(), page.after.id);
    conditions.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::text)`);
  }
  params.push(page.limit + 1);
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const column = page.select ?? 'document';
  const { rows } = await sql.query<Record<string, T>>(
    `SELECT ${column} FROM ${table} ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
    params,
  );
  return { documents: rows.slice(0, page.limit).map((row) => row[column]!), hasMore: rows.length > page.limit };
}
