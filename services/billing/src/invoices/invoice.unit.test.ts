import { deciderSpec } from '@billing/testing';
import { type InvoiceCommand, type InvoiceEvent, invoiceDecider } from './invoice';

const spec = deciderSpec(invoiceDecider);
const at = new Date('2026-03-01T00:00:00.000Z');
const pay: InvoiceCommand = {
  type: 'RecordPaidInvoice',
  data: {
    invoiceId: 'in_1',
    organization: 'org_1',
    environment: 'PRODUCTION',
    customerId: 'cus_1',
    subscriptionId: 'sub_1',
    orderId: 'ord_1',
    checkoutSessionId: 'cs_1',
    amountSubtotal: 299,
    amountDiscount: 50,
    amountTotal: 249,
    periodStart: '2026-03-01T00:00:00.000Z',
    periodEnd: '2026-04-01T00:00:00.000Z',
    paidAt: '2026-02-28T23:59:00.000Z',
    now: at,
  },
};
const paid: InvoiceEvent = {
  type: 'InvoicePaid',
  data: {
    invoice_id: 'in_1',
    organization: 'org_1',
    environment: 'PRODUCTION',
    object: {
      object: 'invoice',
      id: 'in_1',
      customer_id: 'cus_1',
      subscription_id: 'sub_1',
      order_id: 'ord_1',
      checkout_session_id: 'cs_1',
      status: 'PAID',
      amount_subtotal: 299,
      amount_discount: 50,
      amount_total: 249,
      currency: 'TWD',
      period_start: '2026-03-01T00:00:00.000Z',
      period_end: '2026-04-01T00:00:00.000Z',
      paid_at: '2026-02-28T23:59:00.000Z',
      created_at: at.toISOString(),
      updated_at: at.toISOString(),
      livemode: true,
    },
  },
};

describe('Invoice', () => {
  it('is recorded paid with the charge of the checkout', () => spec.given([]).when(pay).then([paid]));
  it('is recorded once', () => spec.given([paid]).when(pay).thenThrows('already exists'));
});
