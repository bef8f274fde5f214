import { taipeiDateOf } from '@billing/contracts';
import type { RecordedEvent } from '@billing/eventstore';
import type { MetricsChange } from '@billing/runtime';
import type { Session } from './session';

/**
 * Checkout's part of the dashboard's metrics (docs/dashboard-api.md): a one-time purchase
 * (PAYMENT session) on the Taipei day its order was paid, and each declined attempt on a
 * checkout page. Subscription sessions are left to billing, whose invoices record their payments.
 */
export function sessionMetricsChange(
  before: Session | null,
  after: Session,
  events: readonly RecordedEvent[],
): MetricsChange[] {
  const changes: MetricsChange[] = events
    .filter((event) => event.type === 'PaymentAttemptFailed')
    .map((event) => ({ date: taipeiDateOf(event.occurred_at), failed_payments_count: 1 }));
  const { paid_at: paidAt, amount_total: amount } = after.order;
  if (after.mode === 'PAYMENT' && paidAt && !before?.order.paid_at && amount > 0) {
    changes.push({ date: taipeiDateOf(paidAt), payments_count: 1, payments_amount: amount });
  }
  return changes;
}
