import { type Environment, taipeiDateOf } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { MetricsChangeOf } from '@billing/runtime';
import { sessionsTable } from '../sessions/read-model';

/** Checkout's history before the projection existed, every tenant's: what the metrics computed per view until then. */
export async function checkoutMetricsHistory(sql: SqlExecutor, schema: string): Promise<MetricsChangeOf[]> {
  const paid = await sql.query<{ organization: string; environment: Environment; paid_at: string; amount: number }>(
    `SELECT organization, environment, document->'order'->>'paid_at' AS paid_at,
       (document->'order'->>'amount_total')::integer AS amount
     FROM ${sessionsTable(schema)}
     WHERE document->>'mode' = 'PAYMENT' AND document->'order'->>'paid_at' IS NOT NULL
       AND (document->'order'->>'amount_total')::integer > 0`,
  );
  const declined = await sql.query<{ organization: string; environment: Environment; occurred_at: Date | string }>(
    `SELECT organization, environment, occurred_at FROM ${schema}.events WHERE type = 'PaymentAttemptFailed'`,
  );
  return [
    ...paid.rows.map(({ organization, environment, paid_at, amount }) => ({
      organization,
      environment,
      date: taipeiDateOf(paid_at),
      payments_count: 1,
      payments_amount: amount,
    })),
    ...declined.rows.map(({ organization, environment, occurred_at }) => ({
      organization,
      environment,
      date: taipeiDateOf(occurred_at),
      failed_payments_count: 1,
    })),
  ];
}
