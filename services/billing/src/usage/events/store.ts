import type { MeterAggregation } from '@billing/contracts';
import type { EventStore, SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';

// Usage events as rows, not streams (docs/decisions/0029): one row per event and environment,
// inserted many at a time and committed before the report is answered.

export const usageEventsTable = (schema: string) => `${schema}.usage_events`;

/**
 * `credits_state` of an event whose meter spends credits: `pending` until the spender claims it,
 * `spending` (its group's key in `spend_key`) or `single` (its own key) while it spends, then
 * `spent` or `unpaid` (the balance could not pay it: a metered price bills it). Null: no credits.
 */
export type CreditsState = 'pending' | 'spending' | 'single' | 'spent' | 'unpaid';

export async function migrateUsageEvents(store: EventStore): Promise<void> {
  const table = usageEventsTable(store.tables.schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${table} (
      organization text NOT NULL,
      environment text NOT NULL,
      id text NOT NULL,
      customer_id text NOT NULL,
      meter text NOT NULL,
      quantity bigint NOT NULL,
      occurred_at timestamptz NOT NULL,
      received_at timestamptz NOT NULL,
      credits bigint,
      credits_state text,
      spend_key text,
      claimed_at timestamptz,
      invoice_id text,
      PRIMARY KEY (organization, environment, id)
    );
    -- A customer's usage of a meter over time: summaries, and the renewal invoices' claims.
    CREATE INDEX IF NOT EXISTS usage_events_by_customer ON ${table} (customer_id, meter, occurred_at);
    -- The spender's work: events whose credits are not yet spent.
    CREATE INDEX IF NOT EXISTS usage_events_to_spend ON ${table} (received_at)
      WHERE credits_state IN ('pending', 'spending', 'single');
  `);
}

/** An event as stored: its meter and customer known, its time decided. */
export type StoredUsageEvent = {
  id: string;
  customerId: string;
  meter: string;
  quantity: number;
  occurredAt: Date;
  /** Credits it spends; null when its meter spends none. */
  credits: number | null;
};

/** Inserts the events in one statement; answers the ids stored now (an id stored before is not stored again). */
export async function insertUsageEvents(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  events: StoredUsageEvent[],
  receivedAt: Date,
): Promise<number> {
  const { rows } = await sql.query<{ stored: string }>(
    `WITH stored AS (
       INSERT INTO ${usageEventsTable(schema)}
         (organization, environment, id, customer_id, meter, quantity, occurred_at, received_at, credits, credits_state)
       SELECT $1, $2, e.id, e.customer_id, e.meter, e.quantity, e.occurred_at, $3, e.credits,
              CASE WHEN e.credits IS NULL THEN NULL ELSE 'pending' END
       FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::timestamptz[], $9::bigint[])
         AS e(id, customer_id, meter, quantity, occurred_at, credits)
       ON CONFLICT DO NOTHING
       RETURNING 1)
     SELECT count(*) AS stored FROM stored`,
    [
      tenant.organization,
      tenant.environment,
      receivedAt,
      events.map((e) => e.id),
      events.map((e) => e.customerId),
      events.map((e) => e.meter),
      events.map((e) => e.quantity),
      events.map((e) => e.occurredAt.toISOString()),
      events.map((e) => e.credits),
    ],
  );
  return Number(rows[0]?.stored ?? 0);
}

/** Per meter, the events of the customer in [from, to): their number, the sum and the largest of their quantities. */
export async function usageOf(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  customerId: string,
  window: { from: Date; to: Date },
): Promise<Map<string, MeterTotals>> {
  const { rows } = await sql.query<{ meter: string; events: string; sum: string; max: string }>(
    `SELECT meter, count(*) AS events, sum(quantity) AS sum, max(quantity) AS max FROM ${usageEventsTable(schema)}
     WHERE customer_id = $1 AND organization = $2 AND environment = $3 AND occurred_at >= $4 AND occurred_at < $5
     GROUP BY meter`,
    [customerId, tenant.organization, tenant.environment, window.from, window.to],
  );
  return totalsByMeter(rows);
}

export type MeterTotals = { events: number; sum: number; max: number };

/** A meter's quantity from its events' totals: their sum, their number, or the largest (docs/usage.md). */
export function quantityOf(totals: MeterTotals, aggregation: MeterAggregation): number {
  return { sum: totals.sum, count: totals.events, max: totals.max }[aggregation];
}

export function totalsByMeter(rows: Array<{ meter: string; events: string; sum: string; max: string }>) {
  return new Map(
    rows.map((row) => [row.meter, { events: Number(row.events), sum: Number(row.sum), max: Number(row.max) }]),
  );
}
