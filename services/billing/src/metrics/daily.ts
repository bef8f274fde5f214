import { type Metrics, type ProductInterval, emptyMetrics, metricsDayOf, taipeiDayEnd } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { invoicesTable } from '../invoices/read-model';
import { subscriptionsTable } from '../subscriptions/read-model';
import { monthlyEquivalent } from '../proration/proration';

/** A subscription's life as the read model knows it (its current price). */
interface SubscriptionLife {
  started: number;
  /** When it was canceled for good; null while it lives. */
  ended: number | null;
  /** While in its trial it adds nothing to MRR. */
  trialEnd: number | null;
  monthly: number;
}

/**
 * Billing's part of the dashboard's metrics (docs/dashboard-api.md): subscriptions (active, MRR,
 * new, churned) from the subscriptions read model, invoice payments by the day they were paid,
 * and failed invoice charges from the invoices' `InvoicePaymentFailed` events.
 */
export async function billingMetrics(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  range: { from: string; to: string },
): Promise<Metrics> {
  const metrics = emptyMetrics(tenant.environment, range);
  const lives = await subscriptionLives(sql, schema, tenant);
  for (const day of metrics.series) {
    const end = taipeiDayEnd(day.date);
    for (const life of lives) {
      if (life.started >= end || (life.ended !== null && life.ended < end)) continue;
      day.active_subscriptions += 1;
      if (life.trialEnd === null || life.trialEnd < end) day.mrr += life.monthly;
    }
  }
  for (const life of lives) {
    const started = metricsDayOf(metrics, life.started);
    if (started) started.new_subscriptions += 1;
    const ended = life.ended === null ? undefined : metricsDayOf(metrics, life.ended);
    if (ended) ended.churned_subscriptions += 1;
  }
  for (const payment of await paidInvoices(sql, schema, tenant)) {
    const day = metricsDayOf(metrics, payment.paid_at);
    if (!day) continue;
    day.payments_count += 1;
    day.payments_amount += payment.amount_paid;
  }
  for (const failure of await failedCharges(sql, schema, tenant)) {
    const day = metricsDayOf(metrics, failure.at);
    if (day) day.failed_payments_count += 1;
  }
  return metrics;
}

async function subscriptionLives(sql: SqlExecutor, schema: string, tenant: Tenant): Promise<SubscriptionLife[]> {
  const { rows } = await sql.query<{
    created_at: Date | string;
    status: string;
    updated_at: string;
    trial_end: string | null;
    price: number;
    interval: ProductInterval;
    interval_count: number;
  }>(
    `SELECT created_at, status, document->>'updated_at' AS updated_at, document->>'trial_end' AS trial_end,
       (document->>'price')::integer AS price, document->>'interval' AS interval,
       (document->>'interval_count')::integer AS interval_count
     FROM ${subscriptionsTable(schema)} WHERE organization = $1 AND environment = $2`,
    [tenant.organization, tenant.environment],
  );
  // A canceled subscription changes no more: its last update is when it ended.
  return rows.map((row) => ({
    started: new Date(row.created_at).getTime(),
    ended: row.status === 'CANCELED' ? Date.parse(row.updated_at) : null,
    trialEnd: row.trial_end === null ? null : Date.parse(row.trial_end),
    monthly: monthlyEquivalent(row),
  }));
}

async function paidInvoices(sql: SqlExecutor, schema: string, tenant: Tenant) {
  const { rows } = await sql.query<{ paid_at: string; amount_paid: number }>(
    `SELECT document->>'paid_at' AS paid_at, (document->>'amount_paid')::integer AS amount_paid
     FROM ${invoicesTable(schema)}
     WHERE organization = $1 AND environment = $2 AND document->>'paid_at' IS NOT NULL
       AND (document->>'amount_paid')::integer > 0`,
    [tenant.organization, tenant.environment],
  );
  return rows;
}

/** Each declined charge of an invoice, at the invoice's time (a test clock's, if it has one). */
async function failedCharges(sql: SqlExecutor, schema: string, tenant: Tenant) {
  const { rows } = await sql.query<{ at: string }>(
    `SELECT coalesce(data->'object'->>'updated_at', occurred_at::text) AS at FROM ${schema}.events
     WHERE organization = $1 AND environment = $2 AND type = 'InvoicePaymentFailed'`,
    [tenant.organization, tenant.environment],
  );
  return rows;
}
