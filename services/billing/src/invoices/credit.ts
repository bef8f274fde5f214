import type { Invoice } from '@billing/contracts';
import type { InvoiceState } from './state';

/** Part of the invoice's payment given back as credit by a plan switch (`key`: the switch's). */
export type InvoiceCredited = {
  type: 'InvoiceCredited';
  data: { invoice_id: string; key: string; amount: number; object: Invoice };
};

/**
 * A plan switch credited the unused part of the period this invoice paid for (to the
 * customer balance, or into the proration of the new plan): that part of its payment was given
 * back, and can no longer be refunded (`amount_credited`). Each switch once, by its key.
 */
export type RecordInvoiceCredit = {
  type: 'RecordInvoiceCredit';
  data: { key: string; amount: number; now: Date };
};

/** What is left of the invoice's payment to give back, by refund or by credit: the one rule both draw on. */
export function refundableOf(invoice: Invoice): number {
  return Math.max(0, invoice.amount_paid - (invoice.amount_refunded ?? 0) - (invoice.amount_credited ?? 0));
}

export function recordCredit({ data }: RecordInvoiceCredit, state: InvoiceState): InvoiceCredited[] {
  if (state.status === 'Empty' || data.amount <= 0 || state.credits?.includes(data.key)) return [];
  const { invoice } = state;
  // Never above what is left of the payment, whatever the switch computed.
  const amount = Math.min(data.amount, refundableOf(invoice));
  if (amount === 0) return [];
  const object: Invoice = {
    ...invoice,
    amount_credited: (invoice.amount_credited ?? 0) + amount,
    updated_at: data.now.toISOString(),
  };
  return [{ type: 'InvoiceCredited', data: { invoice_id: invoice.id, key: data.key, amount, object } }];
}

/**
 * Splits a switch's credit of `credit` TWD over the paid invoices of the period it credits,
 * oldest first, each giving at most what is left of its payment (`refundableOf`). A credit
 * above what all of them have left is cut to it: the balance never holds more than was paid.
 *
 * Example: invoices of 299 (100 refunded) and 50 (a later top-up), a credit of 220: 199 from
 * the first, 21 from the second.
 */
export function apportionCredit(invoices: Invoice[], credit: number): Array<{ invoiceId: string; amount: number }> {
  const parts: Array<{ invoiceId: string; amount: number }> = [];
  let left = credit;
  const oldestFirst = [...invoices].sort((a, b) => a.created_at.localeCompare(b.created_at));
  for (const invoice of oldestFirst) {
    if (left <= 0) break;
    const amount = Math.min(left, refundableOf(invoice));
    if (amount > 0) parts.push({ invoiceId: invoice.id, amount });
    left -= amount;
  }
  return parts;
}
