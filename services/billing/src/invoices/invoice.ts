import {
  type Environment,
  type Invoice,
  type InvoiceLine,
  type InvoiceMarkedUncollectibleData,
  type InvoiceOpenedData,
  type InvoicePaidData,
  type InvoicePaymentFailedData,
  type InvoicePaymentPendingData,
  type ChargeTrade,
  type PaymentInstructions,
  conflict,
  livemodeOf,
} from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';
import { type InvoiceCredited, type RecordInvoiceCredit, recordCredit } from './credit';
import { type InvoiceRefunded, type RecordInvoiceRefund, recordRefund } from './refund';
import type { InvoiceState } from './state';

export const invoiceStream = (invoiceId: string) => `invoice-${invoiceId}`;

export type InvoicePaid = { type: 'InvoicePaid'; data: InvoicePaidData };
export type InvoiceOpened = { type: 'InvoiceOpened'; data: InvoiceOpenedData };
export type InvoicePaymentFailed = { type: 'InvoicePaymentFailed'; data: InvoicePaymentFailedData };
export type InvoiceMarkedUncollectible = { type: 'InvoiceMarkedUncollectible'; data: InvoiceMarkedUncollectibleData };
export type InvoicePaymentPending = { type: 'InvoicePaymentPending'; data: InvoicePaymentPendingData };
export type { InvoiceCredited, InvoiceRefunded };
export type InvoiceEvent =
  | InvoicePaid
  | InvoiceOpened
  | InvoicePaymentFailed
  | InvoicePaymentPending
  | InvoiceMarkedUncollectible
  | InvoiceRefunded
  | InvoiceCredited;

export const invoiceEvents = streamEvents<InvoiceEvent>({
  InvoicePaid: true,
  InvoiceOpened: true,
  InvoicePaymentFailed: true,
  InvoicePaymentPending: true,
  InvoiceMarkedUncollectible: true,
  InvoiceRefunded: true,
  InvoiceCredited: true,
});

export type { InvoiceState } from './state';

export const initialState = (): InvoiceState => ({ status: 'Empty' });

/** Every invoice event carries the invoice as it is after the change; the first one, its tenant. */
export function evolve(state: InvoiceState, event: InvoiceEvent): InvoiceState {
  const invoice = currentInvoice(event.data.object);
  if ('organization' in event.data && event.data.organization) {
    const { organization, environment } = event.data;
    return {
      status: 'Existing',
      invoice,
      organization,
      environment,
      refunds: state.status === 'Empty' ? [] : state.refunds,
      credits: state.status === 'Empty' ? [] : state.credits,
    };
  }
  if (state.status === 'Empty') return state;
  if (event.type === 'InvoiceRefunded')
    return { ...state, invoice, refunds: [...(state.refunds ?? []), event.data.refund_id] };
  if (event.type === 'InvoiceCredited')
    return { ...state, invoice, credits: [...(state.credits ?? []), event.data.key] };
  return { ...state, invoice };
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
    /** Who charged it and under what trade; absent when nothing was charged or no answer named it. */
    charge?: ChargeTrade;
    now: Date;
  };
};
/** A renewal opens the invoice of the next period (open, nothing paid) before it charges. */
export type OpenInvoice = {
  type: 'OpenInvoice';
  data: {
    invoiceId: string;
    number: string;
    organization: string;
    environment: Environment;
    customerId: string;
    subscriptionId: string;
    lines: InvoiceLine[];
    /** The coupon's part of this invoice (`subscriptions/discount.ts`, `periodDiscount`). */
    discountAmount: number;
    periodStart: string;
    periodEnd: string;
    now: Date;
  };
};

/** A charge's answer: paid (with its trade when the processor's answer named one), or declined. */
export type PaymentOutcome =
  ({ status: 'succeeded' } & Partial<ChargeTrade>) | { status: 'declined'; code: string; message: string };

/** The trade of a charge that succeeded, when its answer named one (not a 0 TWD invoice paid as it was). */
export function paidTrade(outcome: {
  status: string;
  processor?: ChargeTrade['processor'];
  processor_reference?: string;
}): ChargeTrade | undefined {
  if (outcome.status !== 'succeeded' || !outcome.processor || !outcome.processor_reference) return undefined;
  return { processor: outcome.processor, processor_reference: outcome.processor_reference };
}

/**
 * The answer to charge attempt `attempt` (1 for the first). An answer already recorded, or
 * one for an invoice that is not open, changes nothing: a retried or concurrent renewal
 * records it once. `nextAttemptAt` is when dunning tries again after a decline (null: never).
 */
export type RecordPaymentAttempt = {
  type: 'RecordPaymentAttempt';
  data: {
    attempt: number;
    outcome: PaymentOutcome;
    nextAttemptAt: Date | null;
    now: Date;
  };
};

/**
 * Attempt `attempt` is a transfer the customer makes (an ATM account or a store code issued for
 * it): the invoice shows how to pay and by when. The same instructions again record nothing; the
 * attempt's answer (paid, or the deadline passed) is a `RecordPaymentAttempt` later.
 */
export type RecordPaymentPending = {
  type: 'RecordPaymentPending';
  data: { attempt: number; instructions: PaymentInstructions; now: Date };
};

/** Dunning ended without a payment: the invoice is uncollectible, nothing more is tried. */
export type MarkUncollectible = { type: 'MarkUncollectible'; data: { now: Date } };

export type InvoiceCommand =
  | RecordPaidInvoice
  | OpenInvoice
  | RecordPaymentAttempt
  | RecordPaymentPending
  | MarkUncollectible
  | RecordInvoiceRefund
  | RecordInvoiceCredit;

export function decide(command: InvoiceCommand, state: InvoiceState): InvoiceEvent[] {
  switch (command.type) {
    case 'RecordPaidInvoice':
      return recordPaid(command, state);
    case 'OpenInvoice':
      return open(command, state);
    case 'RecordPaymentAttempt':
      return recordAttempt(command, state);
    case 'RecordPaymentPending':
      return recordPending(command, state);
    case 'MarkUncollectible': {
      if (state.status === 'Empty' || state.invoice.status !== 'open') return [];
      const at = command.data.now.toISOString();
      const object: Invoice = { ...state.invoice, status: 'uncollectible', next_payment_attempt: null, updated_at: at };
      return [{ type: 'InvoiceMarkedUncollectible', data: { invoice_id: object.id, object } }];
    }
    case 'RecordInvoiceRefund':
      return recordRefund(command, state);
    case 'RecordInvoiceCredit':
      return recordCredit(command, state);
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

function recordPaid(command: RecordPaidInvoice, state: InvoiceState): InvoiceEvent[] {
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
    amount_refunded: 0,
    amount_credited: 0,
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
        ...(data.charge ? { charge: data.charge } : {}),
      },
    },
  ];
}

function open({ data }: OpenInvoice, state: InvoiceState): InvoiceEvent[] {
  if (state.status !== 'Empty') return [];
  const at = data.now.toISOString();
  const subtotal = data.lines.reduce((sum, line) => sum + line.amount, 0);
  const total = subtotal - data.discountAmount;
  const invoice: Invoice = {
    object: 'invoice',
    id: data.invoiceId,
    number: data.number,
    customer_id: data.customerId,
    subscription_id: data.subscriptionId,
    order_id: null,
    checkout_session_id: null,
    status: 'open',
    currency: 'TWD',
    subtotal,
    discount_amount: data.discountAmount,
    total,
    amount_paid: 0,
    amount_due: total,
    lines: data.lines,
    period_start: data.periodStart,
    period_end: data.periodEnd,
    attempt_count: 0,
    next_payment_attempt: at,
    paid_at: null,
    amount_refunded: 0,
    amount_credited: 0,
    created_at: at,
    updated_at: at,
    livemode: livemodeOf(data.environment),
  };
  const { organization, environment } = data;
  return [{ type: 'InvoiceOpened', data: { invoice_id: data.invoiceId, organization, environment, object: invoice } }];
}

function recordPending({ data }: RecordPaymentPending, state: InvoiceState): InvoiceEvent[] {
  if (state.status === 'Empty') return [];
  const { invoice } = state;
  if (invoice.status !== 'open' || data.attempt <= invoice.attempt_count) return [];
  if (JSON.stringify(invoice.payment_instructions ?? null) === JSON.stringify(data.instructions)) return [];
  const object: Invoice = { ...invoice, payment_instructions: data.instructions, updated_at: data.now.toISOString() };
  return [
    {
      type: 'InvoicePaymentPending',
      data: { invoice_id: invoice.id, attempt: data.attempt, payment_instructions: data.instructions, object },
    },
  ];
}

function recordAttempt({ data }: RecordPaymentAttempt, state: InvoiceState): InvoiceEvent[] {
  if (state.status === 'Empty') return [];
  const { invoice } = state;
  if (invoice.status !== 'open' || data.attempt <= invoice.attempt_count) return [];
  const at = data.now.toISOString();
  // The attempt's answer ends what it asked the customer to pay by transfer, if anything.
  const attempted = { ...invoice, attempt_count: data.attempt, payment_instructions: null, updated_at: at };
  if (data.outcome.status === 'succeeded') {
    const object: Invoice = {
      ...attempted,
      status: 'paid',
      amount_paid: invoice.total,
      amount_due: 0,
      next_payment_attempt: null,
      paid_at: at,
    };
    const { organization, environment } = state;
    const charge = paidTrade(data.outcome);
    return [
      {
        type: 'InvoicePaid',
        data: { invoice_id: invoice.id, organization, environment, object, ...(charge ? { charge } : {}) },
      },
    ];
  }
  const { code, message } = data.outcome;
  const object: Invoice = { ...attempted, next_payment_attempt: data.nextAttemptAt?.toISOString() ?? null };
  return [{ type: 'InvoicePaymentFailed', data: { invoice_id: invoice.id, failure: { code, message }, object } }];
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
  // Invoices recorded before refunds (or switch credits) have no `amount_refunded` (`amount_credited`): none then.
  if (invoice.status !== 'PAID') {
    const current = invoice as Invoice;
    if (current.amount_refunded !== undefined && current.amount_credited !== undefined) return current;
    return { ...current, amount_refunded: current.amount_refunded ?? 0, amount_credited: current.amount_credited ?? 0 };
  }
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
    amount_refunded: 0,
    amount_credited: 0,
  } as Invoice;
}
