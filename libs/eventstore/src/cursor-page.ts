import type { SqlExecutor } from './database';

/** Where a page starts: after the row with this `created_at` and `id` (the last one seen). */
export type PageCursor = { created_at: string | Date; id: string };

/** The columns a list is ordered by, each descending, and their SQL types (for the cursor's values). */
export type PageOrder = readonly { column: string; type: string }[];

/** Newest first: `created_at` desc, then `id` desc (rows of one instant ordered by id), of the table `alias` names. */
export const newestFirst = (alias?: string): PageOrder => {
  const prefix = alias ? `${alias}.` : '';
  return [
    { column: `${prefix}created_at`, type: 'timestamptz' },
    { column: `${prefix}id`, type: 'text' },
  ];
};

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

/** A filter beyond column equality: SQL built with `param`, which answers a value's placeholder. */
export type PageFilter = (param: (value: unknown) => string) => string;

/**
 * `created_at` (of the table `alias` names) in `[from, to)`, ISO instants; an end not given
 * leaves the range open there. With a newest-first index, a range of it.
 */
export function createdBetween(alias: string | undefined, range: { from?: string; to?: string }): PageFilter[] {
  const column = alias ? `${alias}.created_at` : 'created_at';
  const { from, to } = range;
  return [
    ...(from === undefined ? [] : [(param: (value: unknown) => string) => `${column} >= ${param(from)}::timestamptz`]),
    ...(to === undefined ? [] : [(param: (value: unknown) => string) => `${column} < ${param(to)}::timestamptz`]),
  ];
}

export interface KeysetQuery {
  /** The FROM clause: a table, with an alias when `select` or the filters use one. */
  from: string;
  /** The select list. */
  select: string;
  /** Each column equals its (text) value; an undefined value does not filter. */
  where: Record<string, string | undefined>;
  filters?: PageFilter[];
  /** Defaults to `newestFirst()`. */
  order?: PageOrder;
  /** The last row seen (its order columns' values, or its cursor when newest first), or null for the first page. */
  after: readonly unknown[] | PageCursor | null;
  limit: number;
}

/**
 * One page of a list ordered by a unique key, descending, and whether more rows follow (one row
 * more than `limit` is read to know). Every list of the platform is paged by this: table, column
 * and filter SQL come from code, values only as parameters.
 */
export async function keysetPage<Row>(
  sql: SqlExecutor,
  query: KeysetQuery,
): Promise<{ rows: Row[]; hasMore: boolean }> {
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const conditions: string[] = [];
  for (const [column, value] of Object.entries(query.where)) {
    if (value !== undefined) conditions.push(`${column} = ${param(value)}::text`);
  }
  for (const filter of query.filters ?? []) conditions.push(`(${filter(param)})`);
  const order = query.order ?? newestFirst();
  if (query.after) {
    const after = Array.isArray(query.after) ? query.after : cursorValues(query.after as PageCursor);
    const values = order.map(({ type }, i) => `${param(after[i])}::${type}`);
    conditions.push(`(${order.map((o) => o.column).join(', ')}) < (${values.join(', ')})`);
  }
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const { rows } = await sql.query<Row>(
    `SELECT ${query.select} FROM ${query.from} ${where}
     ORDER BY ${order.map((o) => `${o.column} DESC`).join(', ')} LIMIT ${param(query.limit + 1)}`,
    params,
  );
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}

const cursorValues = (cursor: PageCursor) => [new Date(cursor.created_at).toISOString(), cursor.id];

/**
 * One page of a read model's `document`s (or of the column `select` names), newest first, after
 * `after` when given, where each column of `where` equals its value.
 */
export async function cursorPage<T>(
  sql: SqlExecutor,
  table: string,
  page: { where: Record<string, string | undefined>; after: PageCursor | null; limit: number; select?: string },
): Promise<{ documents: T[]; hasMore: boolean }> {
  const column = page.select ?? 'document';
  const { rows, hasMore } = await keysetPage<Record<string, T>>(sql, {
    from: table,
    select: column,
    where: page.where,
    after: page.after,
    limit: page.limit,
  });
  return { documents: rows.map((row) => row[column]!), hasMore };
}
