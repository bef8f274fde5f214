import type { Invoice, InvoiceRefundedData } from '@billing/contracts';
import type { InvoiceState } from './state';

export type InvoiceRefunded = { type: 'InvoiceRefunded'; data: InvoiceRefundedData };

/**
 * Checkout refunded part or all of the invoice's payment (`refund.updated`, succeeded): the
 * invoice adds it to `amount_refunded` and stays `paid`. Checkout decides the refund against
 * what was paid, so this only records it; each refund once, however often it is delivered.
 */
export type RecordInvoiceRefund = {
  type: 'RecordInvoiceRefund';
  data: { refundId: string; amount: number; now: Date };
};

export function recordRefund({ data }: RecordInvoiceRefund, state: InvoiceState): InvoiceRefunded[] {
  if (state.status === 'Empty' || state.refunds?.includes(data.refundId)) return [];
  const { invoice } = state;
  const object: Invoice = {
    ...invoice,
    // Never above what was paid, whatever arrives.
    amount_refunded: Math.min(invoice.amount_paid, (invoice.amount_refunded ?? 0) + data.amount),
    updated_at: data.now.toISOString(),
  };
  return [
    {
      type: 'InvoiceRefunded',
      data: { invoice_id: invoice.id, refund_id: data.refundId, amount: data.amount, object },
    },
  ];
}
