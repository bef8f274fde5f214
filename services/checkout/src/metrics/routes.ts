import {
  type Metrics,
  type MetricsDay,
  MetricsQuery,
  emptyMetricsDay,
  metricsRange,
  taipeiDateOf,
  taipeiDays,
} from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { sessionsTable } from '../sessions/read-model';

/**
 * Checkout's part of the dashboard's metrics (docs/dashboard-api.md): one-time purchases
 * (PAYMENT sessions) by the day their order was paid, and declined attempts on checkout pages.
 * Subscription sessions are left to billing, whose invoices record their payments.
 */
export async function checkoutMetrics(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  range: { from: string; to: string },
): Promise<Metrics> {
  const byDate = new Map<string, MetricsDay>(
    taipeiDays(range.from, range.to).map((date) => [date, emptyMetricsDay(date)]),
  );
  const paid = await sql.query<{ paid_at: string; amount: number }>(
    `SELECT document->'order'->>'paid_at' AS paid_at, (document->'order'->>'amount_total')::integer AS amount
     FROM ${sessionsTable(schema)}
     WHERE organization = $1 AND environment = $2 AND document->>'mode' = 'PAYMENT'
       AND document->'order'->>'paid_at' IS NOT NULL`,
    [tenant.organization, tenant.environment],
  );
  for (const order of paid.rows) {
    const day = byDate.get(taipeiDateOf(order.paid_at));
    if (!day || order.amount <= 0) continue;
    day.payments_count += 1;
    day.payments_amount += order.amount;
  }
  const declined = await sql.query<{ occurred_at: Date | string }>(
    `SELECT occurred_at FROM ${schema}.events
     WHERE organization = $1 AND environment = $2 AND type = 'PaymentAttemptFailed'`,
    [tenant.organization, tenant.environment],
  );
  for (const attempt of declined.rows) {
    const day = byDate.get(taipeiDateOf(attempt.occurred_at));
    if (day) day.failed_payments_count += 1;
  }
  return {
    object: 'metrics',
    environment: tenant.environment,
    currency: 'TWD',
    ...range,
    series: [...byDate.values()],
  };
}

/** `GET /admin/metrics`: checkout's part; the gateway adds it to billing's. */
export function mountMetricsRoutes(app: Express, context: ServiceContext): void {
  app.get('/admin/metrics', validate({ query: MetricsQuery }), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const query = res.locals.input.query as MetricsQuery;
    const tenant = { organization, environment: query.environment };
    const range = metricsRange(query, context.now());
    res.json(await checkoutMetrics(context.infrastructure.database, context.store.tables.schema, tenant, range));
  });
}
