import { type Metrics, type MetricsDay, emptyMetrics } from '@billing/contracts';
import type { Database, EventStore, SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { startPeriodic } from './periodic';
import type { ServiceContext } from './run-service';
import { positiveNumberSetting } from './settings';

/**
 * A service's daily metrics as a projection (docs/dashboard-api.md, "Metrics"): what the
 * dashboard's overview reads, at a cost bounded by the days the organization has history on,
 * never by its subscriptions, invoices or orders.
 *
 * Writers record changes in the transaction of the event that caused them, into
 * `metrics_changes` (an insert: concurrent writers of one organization never wait on a shared
 * row). A periodic fold moves them into one row per organization, environment and Taipei day,
 * `metrics_days`; a read sums both, so what was recorded is seen at once.
 *
 * Every column is a per-day value. `active_subscriptions` and `mrr` are changes of a level: the
 * level at the end of a day is the sum of its changes on that day and before. The other
 * columns are that day's counts and amounts.
 */
export type MetricsChange = { date: string } & Partial<Omit<MetricsDay, 'date'>>;

type MetricsField = Exclude<keyof MetricsDay, 'date'>;

const FIELDS: readonly MetricsField[] = [
  'active_subscriptions',
  'mrr',
  'new_subscriptions',
  'churned_subscriptions',
  'payments_count',
  'payments_amount',
  'failed_payments_count',
];
/** Fields whose per-day values are changes of a level, summed up to each day when read. */
const LEVELS: ReadonlySet<MetricsField> = new Set(['active_subscriptions', 'mrr']);

const changesTable = (schema: string) => `${schema}.metrics_changes`;
const daysTable = (schema: string) => `${schema}.metrics_days`;
const columns = FIELDS.map((field) => `${field} bigint NOT NULL DEFAULT 0`).join(', ');

/**
 * Creates the projection's tables. When they did not exist yet and the service already has
 * history, `backfill` records it once, in the transaction that marks the projection started
 * (a replica starting at the same time waits for it, then finds it done).
 */
export async function migrateDailyMetrics(
  store: EventStore,
  database: Database,
  backfill: (tx: SqlExecutor) => Promise<MetricsChangeOf[]>,
): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${changesTable(schema)} (
      id bigserial PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      date date NOT NULL,
      ${columns}
    );
    CREATE INDEX IF NOT EXISTS metrics_changes_tenant ON ${changesTable(schema)} (organization, environment);
    CREATE TABLE IF NOT EXISTS ${daysTable(schema)} (
      organization text NOT NULL,
      environment text NOT NULL,
      date date NOT NULL,
      ${columns},
      PRIMARY KEY (organization, environment, date)
    );
    CREATE TABLE IF NOT EXISTS ${schema}.metrics_projection (id integer PRIMARY KEY, started_at timestamptz NOT NULL);
  `);
  await database.transaction(async (tx) => {
    const { rows } = await tx.query(
      `INSERT INTO ${schema}.metrics_projection (id, started_at) VALUES (1, now()) ON CONFLICT (id) DO NOTHING RETURNING id`,
    );
    if (rows.length === 0) return;
    const history = await backfill(tx);
    for (let i = 0; i < history.length; i += 5000) await insertChanges(tx, schema, history.slice(i, i + 5000));
  });
}

/** A change with the tenant it belongs to. */
export type MetricsChangeOf = MetricsChange & Tenant;

/** Records changes of one tenant in the caller's transaction: one statement, none when there are none. */
export async function recordMetricsChanges(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  changes: MetricsChange[],
): Promise<void> {
  const nonZero = changes.filter((change) => FIELDS.some((field) => (change[field] ?? 0) !== 0));
  if (nonZero.length === 0) return;
  await insertChanges(
    sql,
    schema,
    nonZero.map((change) => ({ ...change, organization: tenant.organization, environment: tenant.environment })),
  );
}

async function insertChanges(sql: SqlExecutor, schema: string, changes: MetricsChangeOf[]): Promise<void> {
  if (changes.length === 0) return;
  const arrays = [
    changes.map((c) => c.organization),
    changes.map((c) => c.environment),
    changes.map((c) => c.date),
    ...FIELDS.map((field) => changes.map((c) => c[field] ?? 0)),
  ];
  await sql.write(
    `INSERT INTO ${changesTable(schema)} (organization, environment, date, ${FIELDS.join(', ')})
     SELECT * FROM unnest($1::text[], $2::text[], $3::date[], ${FIELDS.map((_, i) => `$${i + 4}::bigint[]`).join(', ')})`,
    arrays,
  );
}

/**
 * Moves up to `limit` recorded changes into the day rows, in one statement: the oldest first,
 * skipping those another replica is folding, and updating day rows in key order so that two
 * folds never wait on each other in a cycle. Answers how many it moved.
 */
export async function foldMetricsChanges(sql: SqlExecutor, schema: string, limit = 10_000): Promise<number> {
  const sums = FIELDS.map((field) => `sum(${field})`).join(', ');
  const adds = FIELDS.map((field) => `${field} = ${daysTable(schema)}.${field} + EXCLUDED.${field}`).join(', ');
  const { rows } = await sql.query<{ moved: number }>(
    `WITH moved AS (
       DELETE FROM ${changesTable(schema)} WHERE id IN (
         SELECT id FROM ${changesTable(schema)} ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING *
     ), folded AS (
       INSERT INTO ${daysTable(schema)} (organization, environment, date, ${FIELDS.join(', ')})
       SELECT organization, environment, date, ${sums} FROM moved
       GROUP BY organization, environment, date ORDER BY organization, environment, date
       ON CONFLICT (organization, environment, date) DO UPDATE SET ${adds}
     )
     SELECT count(*)::int AS moved FROM moved`,
    [limit],
  );
  return rows[0]?.moved ?? 0;
}

/** Folds until fewer than a batch are left. */
export async function foldAllMetricsChanges(sql: SqlExecutor, schema: string, batch = 10_000): Promise<void> {
  while ((await foldMetricsChanges(sql, schema, batch)) >= batch);
}

/**
 * The tenant's metrics over a range of Taipei days: one statement reading its day rows and the
 * changes not folded yet, up to the range's last day; levels summed from the first day on.
 */
export async function readDailyMetrics(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  range: { from: string; to: string },
): Promise<Metrics> {
  const picked = `date, ${FIELDS.join(', ')}`;
  const where = 'organization = $1 AND environment = $2 AND date <= $3::date';
  const { rows } = await sql.query<Record<MetricsField, string> & { date: string }>(
    `SELECT to_char(date, 'YYYY-MM-DD') AS date, ${FIELDS.map((field) => `sum(${field}) AS ${field}`).join(', ')}
     FROM (SELECT ${picked} FROM ${daysTable(schema)} WHERE ${where}
           UNION ALL SELECT ${picked} FROM ${changesTable(schema)} WHERE ${where}) AS recorded
     GROUP BY date ORDER BY date`,
    [tenant.organization, tenant.environment, range.to],
  );
  const metrics = emptyMetrics(tenant.environment, range);
  const byDate = new Map(rows.map((row) => [row.date, row]));
  const levels = { active_subscriptions: 0, mrr: 0 };
  for (const row of rows) {
    if (row.date >= range.from) break;
    levels.active_subscriptions += Number(row.active_subscriptions);
    levels.mrr += Number(row.mrr);
  }
  for (const day of metrics.series) {
    const row = byDate.get(day.date);
    for (const field of FIELDS) {
      const value = row ? Number(row[field]) : 0;
      if (LEVELS.has(field)) {
        levels[field as keyof typeof levels] += value;
        day[field] = levels[field as keyof typeof levels];
      } else {
        day[field] = value;
      }
    }
  }
  return metrics;
}

/**
 * What a change of one subscription's metrics adds, given the per-day values of its life before
 * and after a change on `date` (see `subscriptionMetrics` in billing): history before that day
 * stays as it was reported. A level's differences on earlier days land on the day itself (the
 * level moves from then on); a count's differences on earlier days are dropped.
 */
export function metricsChangeOn(date: string, before: MetricsChange[], after: MetricsChange[]): MetricsChange[] {
  const byDate = new Map<string, MetricsChange>();
  const add = (change: MetricsChange, sign: 1 | -1) => {
    for (const field of FIELDS) {
      const value = change[field];
      if (!value) continue;
      if (change.date < date && !LEVELS.has(field)) continue;
      const on = change.date < date ? date : change.date;
      const entry = byDate.get(on) ?? { date: on };
      entry[field] = (entry[field] ?? 0) + sign * value;
      byDate.set(on, entry);
    }
  };
  for (const change of after) add(change, 1);
  for (const change of before) add(change, -1);
  const changed = [...byDate.values()].map(
    (change) => Object.fromEntries(Object.entries(change).filter(([, value]) => value !== 0)) as MetricsChange,
  );
  return changed.filter((change) => Object.keys(change).length > 1).sort((a, b) => a.date.localeCompare(b.date));
}

export const DEFAULT_METRICS_FOLD_INTERVAL_MS = 60_000;

/** Folds the recorded changes every `METRICS_FOLD_INTERVAL_MS` (default a minute). */
export function startMetricsFolding(context: ServiceContext): () => Promise<void> {
  const intervalMs = positiveNumberSetting(
    context.config,
    'METRICS_FOLD_INTERVAL_MS',
    DEFAULT_METRICS_FOLD_INTERVAL_MS,
  );
  return startPeriodic(async () => {
    try {
      await foldAllMetricsChanges(context.infrastructure.database, context.store.tables.schema);
    } catch (err) {
      context.logger.error({ err }, 'folding the daily metrics failed; the next run tries again');
    }
  }, intervalMs);
}
