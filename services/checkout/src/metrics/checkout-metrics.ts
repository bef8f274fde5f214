import { type Metrics, emptyMetrics, metricsDayOf } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
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
  const metrics = emptyMetrics(tenant.environment, range);
  const paid = await sql.query<{ paid_at: string; amount: number }>(
    `SELECT document->'order'->>'paid_at' AS paid_at, (document->'order'->>'amount_total')::integer AS amount
     FROM ${sessionsTable(schema)}
     WHERE organization = $1 AND environment = $2 AND document->>'mode' = 'PAYMENT'
       AND document->'order'->>'paid_at' IS NOT NULL`,
    [tenant.organization, tenant.environment],
  );
  for (const order of paid.rows) {
    const day = metricsDayOf(metrics, order.paid_at);
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
    const day = metricsDayOf(metrics, attempt.occurred_at);
    if (day) day.failed_payments_count += 1;
  }
  return metrics;
}
