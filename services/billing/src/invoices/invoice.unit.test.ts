import type { Invoice } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import { type InvoiceCommand, type InvoiceEvent, currentInvoice } from './invoice';
import { invoiceAggregate } from './aggregate';

const spec = deciderSpec(invoiceAggregate);
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
  amount_refunded: 0,
  amount_credited: 0,
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
  it('carries the trade of the checkout that paid it, when the completion names one', () => {
    const charge = { processor: 'ecpay', processor_reference: 'E1a2b3c4d5' } as const;
    spec
      .given([])
      .when({ ...pay, data: { ...pay.data, charge } } as InvoiceCommand)
      .then([{ ...paid, data: { ...paid.data, charge } } as InvoiceEvent]);
  });
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

describe('Renewal invoice', () => {
  const opened = new Date('2026-02-28T10:00:00.000Z');
  const lines = [
    {
      description: 'Pro (every month)',
      amount: 299,
      period: { start: '2026-02-28T10:00:00.000Z', end: '2026-03-31T10:00:00.000Z' },
      kind: 'subscription' as const,
    },
  ];
  const open: InvoiceCommand = {
    type: 'OpenInvoice',
    data: {
      invoiceId: 'in_2',
      number: 'INV-000008',
      organization: 'org_1',
      environment: 'SANDBOX',
      customerId: 'cus_1',
      subscriptionId: 'sub_1',
      lines,
      discountAmount: 0,
      periodStart: lines[0]!.period.start,
      periodEnd: lines[0]!.period.end,
      now: opened,
    },
  };
  const [openedEvent] = invoiceAggregate.decide(open, invoiceAggregate.initialState());
  const attempt = (n: number, outcome: 'succeeded' | 'declined', next: Date | null = null): InvoiceCommand => ({
    type: 'RecordPaymentAttempt',
    data: {
      attempt: n,
      outcome:
        outcome === 'succeeded'
          ? { status: 'succeeded' }
          : { status: 'declined', code: 'card_declined', message: 'No' },
      nextAttemptAt: next,
      now: opened,
    },
  });

  it('opens once, due now, with nothing paid', () => {
    expect(openedEvent).toMatchObject({
      type: 'InvoiceOpened',
      data: {
        organization: 'org_1',
        object: { status: 'open', total: 299, amount_due: 299, amount_paid: 0, attempt_count: 0, number: 'INV-000008' },
      },
    });
    spec.given([openedEvent!]).when(open).then([]);
  });
  it('records a paid attempt once', () => {
    const [paidEvent] = invoiceAggregate.decide(
      attempt(1, 'succeeded'),
      invoiceAggregate.evolve(invoiceAggregate.initialState(), openedEvent!),
    );
    expect(paidEvent).toMatchObject({
      type: 'InvoicePaid',
      data: {
        organization: 'org_1',
        environment: 'SANDBOX',
        object: { status: 'paid', amount_paid: 299, amount_due: 0, attempt_count: 1 },
      },
    });
    spec.given([openedEvent!, paidEvent!]).when(attempt(1, 'succeeded')).then([]);
    spec.given([openedEvent!, paidEvent!]).when(attempt(2, 'succeeded')).then([]);
  });
  it("records the trade of a paid attempt when the processor's answer names it, and none when it does not", () => {
    const opened = invoiceAggregate.evolve(invoiceAggregate.initialState(), openedEvent!);
    const named: InvoiceCommand = {
      type: 'RecordPaymentAttempt',
      data: {
        attempt: 1,
        outcome: { status: 'succeeded', processor: 'payuni', processor_reference: 'rnw1a2b3c' },
        nextAttemptAt: null,
        now: new Date('2026-06-01T00:00:00Z'),
      },
    };
    const [paidEvent] = invoiceAggregate.decide(named, opened);
    expect(paidEvent!.data).toMatchObject({ charge: { processor: 'payuni', processor_reference: 'rnw1a2b3c' } });
    const [unnamed] = invoiceAggregate.decide(attempt(1, 'succeeded'), opened);
    expect(unnamed!.data).not.toHaveProperty('charge');
  });
  it('records a declined attempt with the next try, and ignores the same attempt again', () => {
    const next = new Date('2026-03-03T10:00:00.000Z');
    const [failed] = invoiceAggregate.decide(
      attempt(1, 'declined', next),
      invoiceAggregate.evolve(invoiceAggregate.initialState(), openedEvent!),
    );
    expect(failed).toMatchObject({
      type: 'InvoicePaymentFailed',
      data: {
        failure: { code: 'card_declined' },
        object: { status: 'open', attempt_count: 1, next_payment_attempt: next.toISOString() },
      },
    });
    spec
      .given([openedEvent!, failed!])
      .when(attempt(1, 'declined', next))
      .then([]);
  });
  it('shows the transfer an attempt waits for, once, and forgets it when the attempt is answered', () => {
    const instructions = {
      type: 'atm' as const,
      bank_code: '822',
      account: '12345678901234',
      payment_code: null,
      amount: 299,
      expires_at: '2026-03-03T15:59:59.000Z',
    };
    const pending: InvoiceCommand = { type: 'RecordPaymentPending', data: { attempt: 1, instructions, now: opened } };
    const [waiting] = invoiceAggregate.decide(
      pending,
      invoiceAggregate.evolve(invoiceAggregate.initialState(), openedEvent!),
    );
    expect(waiting).toMatchObject({
      type: 'InvoicePaymentPending',
      data: {
        attempt: 1,
        payment_instructions: instructions,
        object: { status: 'open', attempt_count: 0, payment_instructions: instructions },
      },
    });
    spec.given([openedEvent!, waiting!]).when(pending).then([]);
    const state = [openedEvent!, waiting!].reduce(invoiceAggregate.evolve, invoiceAggregate.initialState());
    const [paidEvent] = invoiceAggregate.decide(attempt(1, 'succeeded'), state);
    expect(paidEvent).toMatchObject({ type: 'InvoicePaid', data: { object: { payment_instructions: null } } });
    // An attempt answered already waits for nothing.
    spec.given([openedEvent!, waiting!, paidEvent!]).when(pending).then([]);
  });
  it('becomes uncollectible when dunning ends, and only from open', () => {
    const [ended] = invoiceAggregate.decide(
      { type: 'MarkUncollectible', data: { now: opened } },
      invoiceAggregate.evolve(invoiceAggregate.initialState(), openedEvent!),
    );
    expect(ended).toMatchObject({
      type: 'InvoiceMarkedUncollectible',
      data: { object: { status: 'uncollectible', next_payment_attempt: null } },
    });
    spec
      .given([openedEvent!, ended!])
      .when({ type: 'MarkUncollectible', data: { now: opened } })
      .then([]);
  });
});
