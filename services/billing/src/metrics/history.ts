import { type Environment, type Subscription, taipeiDateOf } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { MetricsChangeOf } from '@billing/runtime';
import { invoicesTable } from '../invoices/read-model';
import { subscriptionMetrics } from '../subscriptions/metrics';
import { subscriptionsTable } from '../subscriptions/read-model';

/**
 * Billing's history before the projection existed, every tenant's, from the read models and the
 * declined charges' events: what the metrics computed per view until then (each subscription at
 * its current price).
 */
export async function billingMetricsHistory(sql: SqlExecutor, schema: string): Promise<MetricsChangeOf[]> {
  const history: MetricsChangeOf[] = [];
  const subscriptions = await sql.query<{ organization: string; environment: Environment; document: Subscription }>(
    `SELECT organization, environment, document FROM ${subscriptionsTable(schema)}`,
  );
  for (const { organization, environment, document } of subscriptions.rows) {
    for (const change of subscriptionMetrics(document)) history.push({ ...change, organization, environment });
  }
  const paid = await sql.query<{ organization: string; environment: Environment; paid_at: string; amount: number }>(
    `SELECT organization, environment, document->>'paid_at' AS paid_at, (document->>'amount_paid')::integer AS amount
     FROM ${invoicesTable(schema)}
     WHERE document->>'paid_at' IS NOT NULL AND (document->>'amount_paid')::integer > 0`,
  );
  for (const { organization, environment, paid_at, amount } of paid.rows) {
    history.push({
      organization,
      environment,
      date: taipeiDateOf(paid_at),
      payments_count: 1,
      payments_amount: amount,
    });
  }
  const failed = await sql.query<{ organization: string; environment: Environment; at: string }>(
    `SELECT organization, environment, coalesce(data->'object'->>'updated_at', occurred_at::text) AS at
     FROM ${schema}.events WHERE type = 'InvoicePaymentFailed'`,
  );
  for (const { organization, environment, at } of failed.rows) {
    history.push({ organization, environment, date: taipeiDateOf(at), failed_payments_count: 1 });
  }
  return history;
}
