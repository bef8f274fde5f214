import type { Invoice } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import { type InvoiceCommand, type InvoiceEvent } from './invoice';
import { invoiceAggregate } from './aggregate';
import { apportionCredit } from './credit';
import { invoicePaymentOf } from './payment';

const spec = deciderSpec(invoiceAggregate);
const at = new Date('2026-03-31T10:00:00.000Z');
const period = { start: '2026-03-31T10:00:00.000Z', end: '2026-04-30T10:00:00.000Z' };
const invoice: Invoice = {
  object: 'invoice',
  id: 'in_2',
  number: 'INV-000002',
  customer_id: 'cus_1',
  subscription_id: 'sub_1',
  order_id: null,
  checkout_session_id: null,
  status: 'paid',
  currency: 'TWD',
  subtotal: 299,
  discount_amount: 0,
  total: 299,
  amount_paid: 299,
  amount_due: 0,
  amount_refunded: 0,
  amount_credited: 0,
  lines: [{ description: 'Pro (every month)', amount: 299, period, kind: 'subscription' }],
  period_start: period.start,
  period_end: period.end,
  attempt_count: 2,
  next_payment_attempt: null,
  paid_at: at.toISOString(),
  created_at: at.toISOString(),
  updated_at: at.toISOString(),
  livemode: false,
};
const paid: InvoiceEvent = {
  type: 'InvoicePaid',
  data: { invoice_id: 'in_2', organization: 'org_1', environment: 'SANDBOX', object: invoice },
};
const later = new Date('2026-04-02T00:00:00.000Z');
const record = (refundId: string, amount: number): InvoiceCommand => ({
  type: 'RecordInvoiceRefund',
  data: { refundId, amount, now: later },
});
const refunded = (refundId: string, amount: number, total: number): InvoiceEvent => ({
  type: 'InvoiceRefunded',
  data: {
    invoice_id: 'in_2',
    refund_id: refundId,
    amount,
    object: { ...invoice, amount_refunded: total, updated_at: later.toISOString() },
  },
});

describe('Invoice', () => {
  describe('when checkout refunds its payment', () => {
    it('adds each refund to amount_refunded and stays paid', () => {
      spec
        .given([paid])
        .when(record('re_1', 100))
        .then([refunded('re_1', 100, 100)]);
      spec
        .given([paid, refunded('re_1', 100, 100)])
        .when(record('re_2', 199))
        .then([refunded('re_2', 199, 299)]);
    });

    it('records a refund once, however often it is delivered', () => {
      spec
        .given([paid, refunded('re_1', 100, 100)])
        .when(record('re_1', 100))
        .then([]);
    });

    it('never shows more refunded than was paid', () => {
      spec
        .given([paid, refunded('re_1', 299, 299)])
        .when(record('re_2', 5))
        .then([refunded('re_2', 5, 299)]);
    });

    it('leaves an unknown invoice alone', () => {
      spec.given([]).when(record('re_1', 1)).then([]);
    });
  });

  describe('when a plan switch credits the unused part of its period', () => {
    const credit = (key: string, amount: number): InvoiceCommand => ({
      type: 'RecordInvoiceCredit',
      data: { key, amount, now: later },
    });
    const credited = (key: string, amount: number, refunded: number, total: number): InvoiceEvent => ({
      type: 'InvoiceCredited',
      data: {
        invoice_id: 'in_2',
        key,
        amount,
        object: { ...invoice, amount_refunded: refunded, amount_credited: total, updated_at: later.toISOString() },
      },
    });

    it('adds it to amount_credited, once per switch', () => {
      spec
        .given([paid])
        .when(credit('switch:sw_1', 199))
        .then([credited('switch:sw_1', 199, 0, 199)]);
      spec
        .given([paid, credited('switch:sw_1', 199, 0, 199)])
        .when(credit('switch:sw_1', 199))
        .then([]);
    });

    it('credits at most what refunds and earlier credits left of the payment', () => {
      spec
        .given([paid, refunded('re_1', 200, 200)])
        .when(credit('switch:sw_1', 199))
        .then([credited('switch:sw_1', 99, 200, 99)]);
      spec
        .given([paid, refunded('re_1', 299, 299)])
        .when(credit('switch:sw_1', 1))
        .then([]);
    });

    it('shows what checkout may still refund', () => {
      expect(invoicePaymentOf({ ...invoice, amount_credited: 199 }).amount_credited).toBe(199);
    });
  });

  describe('a credit split over the paid invoices of its period', () => {
    const paidInvoice = (id: string, paid: number, refunded: number, created: string): Invoice => ({
      ...invoice,
      id,
      amount_paid: paid,
      amount_refunded: refunded,
      created_at: created,
    });

    it('takes the oldest first, each at most what is left of it, and never more than all have left', () => {
      const first = paidInvoice('in_a', 299, 100, '2026-03-01T00:00:00.000Z');
      const topUp = paidInvoice('in_b', 50, 0, '2026-03-02T00:00:00.000Z');
      expect(apportionCredit([topUp, first], 220)).toEqual([
        { invoiceId: 'in_a', amount: 199 },
        { invoiceId: 'in_b', amount: 21 },
      ]);
      expect(apportionCredit([first, topUp], 1000)).toEqual([
        { invoiceId: 'in_a', amount: 199 },
        { invoiceId: 'in_b', amount: 50 },
      ]);
      expect(apportionCredit([first], 0)).toEqual([]);
    });
  });

  describe('its payment, as checkout refunds it', () => {
    it('names the charge of the attempt that paid a renewal', () => {
      expect(invoicePaymentOf(invoice)).toEqual({
        invoice_id: 'in_2',
        status: 'paid',
        amount_paid: 299,
        amount_credited: 0,
        order_id: null,
        checkout_session_id: null,
        charge_key: 'in_2:2',
      });
    });

    it('names no charge when the checkout order paid it, or nothing was charged', () => {
      expect(invoicePaymentOf({ ...invoice, order_id: 'ord_1' }).charge_key).toBeNull();
      expect(invoicePaymentOf({ ...invoice, status: 'open', amount_paid: 0 }).charge_key).toBeNull();
      expect(invoicePaymentOf({ ...invoice, total: 0, amount_paid: 0 }).charge_key).toBeNull();
    });
  });
});
