import type { Invoice } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import { type InvoiceCommand, type InvoiceEvent, currentInvoice, invoiceDecider } from './invoice';

const spec = deciderSpec(invoiceDecider);
const at = new Date('2026-03-01T00:00:00.000Z');
const period = { start: '2026-03-01T00:00:00.000Z', end: '2026-04-01T00:00:00.000Z' };
const pay: InvoiceCommand = {
  type: 'RecordPaidInvoice',
  data: {
    invoiceId: 'in_1',
    number: 'INV-000007',
    organization: 'org_1',
    environment: 'PRODUCTION',
    customerId: 'cus_1',
    subscriptionId: 'sub_1',
    orderId: 'ord_1',
    checkoutSessionId: 'cs_1',
    lines: [{ description: 'Pro (monthly)', amount: 299, period, kind: 'subscription' }],
    amountDiscount: 50,
    amountTotal: 249,
    periodStart: period.start,
    periodEnd: period.end,
    paidAt: '2026-02-28T23:59:00.000Z',
    now: at,
  },
};
const invoice: Invoice = {
  object: 'invoice',
  id: 'in_1',
  number: 'INV-000007',
  customer_id: 'cus_1',
  subscription_id: 'sub_1',
  order_id: 'ord_1',
  checkout_session_id: 'cs_1',
  status: 'paid',
  currency: 'TWD',
  subtotal: 299,
  discount_amount: 50,
  total: 249,
  amount_paid: 249,
  amount_due: 0,
  lines: [{ description: 'Pro (monthly)', amount: 299, period, kind: 'subscription' }],
  period_start: period.start,
  period_end: period.end,
  attempt_count: 1,
  next_payment_attempt: null,
  paid_at: '2026-02-28T23:59:00.000Z',
  created_at: at.toISOString(),
  updated_at: at.toISOString(),
  livemode: true,
};
const paid: InvoiceEvent = {
  type: 'InvoicePaid',
  data: { invoice_id: 'in_1', organization: 'org_1', environment: 'PRODUCTION', object: invoice },
};

describe('Invoice', () => {
  it('is recorded paid with the charge of the checkout: its lines, discount, number and one attempt', () =>
    spec.given([]).when(pay).then([paid]));
  it('is recorded once', () => spec.given([paid]).when(pay).thenThrows('already exists'));
  it('reads an invoice of the first shape (before the invoices API) in the current one', () => {
    const {
      number,
      subtotal,
      discount_amount,
      total,
      amount_paid,
      amount_due,
      lines,
      attempt_count,
      next_payment_attempt,
      ...kept
    } = invoice;
    const first = { ...kept, status: 'PAID', amount_subtotal: 299, amount_discount: 50, amount_total: 249 };
    expect(currentInvoice(first as never)).toEqual({ ...invoice, number: '', lines: [] });
    expect(currentInvoice(invoice)).toBe(invoice);
  });
});
