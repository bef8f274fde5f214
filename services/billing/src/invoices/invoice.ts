import {
  type Environment,
  type Invoice,
  type InvoiceLine,
  type InvoicePaidData,
  conflict,
  livemodeOf,
} from '@billing/contracts';
import type { RecordedEvent } from '@billing/eventstore';

export const invoiceStream = (invoiceId: string) => `invoice-${invoiceId}`;

export type InvoicePaid = { type: 'InvoicePaid'; data: InvoicePaidData };
export type InvoiceEvent = InvoicePaid;

export type InvoiceState = { status: 'Empty' } | { status: 'Paid'; invoice: Invoice };

export const initialState = (): InvoiceState => ({ status: 'Empty' });

export function evolve(state: InvoiceState, event: InvoiceEvent): InvoiceState {
  switch (event.type) {
    case 'InvoicePaid':
      return { status: 'Paid', invoice: currentInvoice(event.data.object) };
    default: {
      const _unknown: never = event.type;
      return state;
    }
  }
}

/** The charge of a paid checkout, recorded as a paid invoice of the period it pays for. */
export type RecordPaidInvoice = {
  type: 'RecordPaidInvoice';
  data: {
    invoiceId: string;
    /** The organization's next invoice number in this environment (`nextInvoiceNumber`). */
    number: string;
    organization: string;
    environment: Environment;
    customerId: string;
    subscriptionId: string | null;
    orderId: string | null;
    checkoutSessionId: string | null;
    lines: InvoiceLine[];
    amountDiscount: number;
    amountTotal: number;
    periodStart: string;
    periodEnd: string;
    paidAt: string;
    now: Date;
  };
};
export type InvoiceCommand = RecordPaidInvoice;

export function decide(command: InvoiceCommand, state: InvoiceState): InvoiceEvent[] {
  const { data } = command;
  if (state.status !== 'Empty') throw conflict(`Invoice ${data.invoiceId} already exists`);
  const at = data.now.toISOString();
  const invoice: Invoice = {
    object: 'invoice',
    id: data.invoiceId,
    number: data.number,
    customer_id: data.customerId,
    subscription_id: data.subscriptionId,
    order_id: data.orderId,
    checkout_session_id: data.checkoutSessionId,
    status: 'paid',
    currency: 'TWD',
    subtotal: data.lines.reduce((sum, line) => sum + line.amount, 0),
    discount_amount: data.amountDiscount,
    total: data.amountTotal,
    amount_paid: data.amountTotal,
    amount_due: 0,
    lines: data.lines,
    period_start: data.periodStart,
    period_end: data.periodEnd,
    attempt_count: 1,
    next_payment_attempt: null,
    paid_at: data.paidAt,
    created_at: at,
    updated_at: at,
    livemode: livemodeOf(data.environment),
  };
  return [
    {
      type: 'InvoicePaid',
      data: {
        invoice_id: data.invoiceId,
        organization: data.organization,
        environment: data.environment,
        object: invoice,
      },
    },
  ];
}

/** Invoices recorded before the invoices API (status `PAID`, `amount_*` fields, no number). */
type FirstShapeInvoice = Omit<Invoice, 'number' | 'status' | 'subtotal' | 'discount_amount' | 'total'> & {
  status: 'PAID';
  amount_subtotal: number;
  amount_discount: number;
  amount_total: number;
};

/** Upcasts an invoice of the first shape to the current one; a current one is returned as it is. */
export function currentInvoice(invoice: Invoice | FirstShapeInvoice): Invoice {
  if (invoice.status !== 'PAID') return invoice as Invoice;
  const { amount_subtotal, amount_discount, amount_total, ...rest } = invoice as FirstShapeInvoice;
  return {
    ...rest,
    number: '',
    status: 'paid',
    subtotal: amount_subtotal,
    discount_amount: amount_discount,
    total: amount_total,
    amount_paid: amount_total,
    amount_due: 0,
    lines: [],
    attempt_count: 1,
    next_payment_attempt: null,
  } as Invoice;
}

export const invoiceDecider = { initialState, evolve, decide };

export const invoiceAggregate = {
  initialState,
  evolve: (state: InvoiceState, event: RecordedEvent) => evolve(state, event as unknown as InvoiceEvent),
  decide,
};
