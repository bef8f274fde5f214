import { taipeiDateOf } from '@billing/contracts';
import type { RecordedEvent } from '@billing/eventstore';
import type { MetricsChange } from '@billing/runtime';

/** A paid invoice's payment on the Taipei day it was paid; a declined charge on the invoice's time. */
export function invoiceMetricsChange(event: RecordedEvent): MetricsChange[] {
  const invoice = (event.data as { object?: { amount_paid?: number; paid_at?: string | null; updated_at?: string } })
    .object;
  if (event.type === 'InvoicePaid' && invoice?.paid_at && (invoice.amount_paid ?? 0) > 0) {
    return [{ date: taipeiDateOf(invoice.paid_at), payments_count: 1, payments_amount: invoice.amount_paid }];
  }
  if (event.type === 'InvoicePaymentFailed') {
    return [{ date: taipeiDateOf(invoice?.updated_at ?? event.occurred_at), failed_payments_count: 1 }];
  }
  return [];
}
