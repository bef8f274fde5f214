import { type Environment, type Invoice, type InvoicePaidData, conflict, livemodeOf } from '@billing/contracts';
import type { RecordedEvent } from '@billing/eventstore';

export const invoiceStream = (invoiceId: string) => `invoice-${invoiceId}`;

export type InvoicePaid = { type: 'InvoicePaid'; data: InvoicePaidData };
export type InvoiceEvent = InvoicePaid;

export type InvoiceState = { status: 'Empty' } | { status: 'Paid'; invoice: Invoice };

export const initialState = (): InvoiceState => ({ status: 'Empty' });

export function evolve(state: InvoiceState, event: InvoiceEvent): InvoiceState {
  switch (event.type) {
    case 'InvoicePaid':
      return { status: 'Paid', invoice: event.data.object };
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
    organization: string;
    environment: Environment;
    customerId: string;
    subscriptionId: string | null;
    orderId: string | null;
    checkoutSessionId: string | null;
    amountSubtotal: number;
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
    customer_id: data.customerId,
    subscription_id: data.subscriptionId,
    order_id: data.orderId,
    checkout_session_id: data.checkoutSessionId,
    status: 'PAID',
    amount_subtotal: data.amountSubtotal,
    amount_discount: data.amountDiscount,
    amount_total: data.amountTotal,
    currency: 'TWD',
    period_start: data.periodStart,
    period_end: data.periodEnd,
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

export const invoiceDecider = { initialState, evolve, decide };

export const invoiceAggregate = {
  initialState,
  evolve: (state: InvoiceState, event: RecordedEvent) => evolve(state, event as unknown as InvoiceEvent),
  decide,
};
