import type { Environment } from '@billing/contracts';
import { defineAggregate } from '@billing/eventstore';
import { decideRefund, decideSettlement } from './decide';
import { projectRefunds } from './read-model';
import {
  type RefundCommand,
  type RefundEvent,
  type RefundLedger,
  type RequestRefund,
  type SettleRefund,
  applyRefundEvent,
  refundEvents,
} from './refund';

/**
 * The payment of an invoice that billing charged through checkout (a renewal or a retry):
 * checkout keeps no stream of those charges, so their refunds get one of their own, started by
 * the first refund. What was paid comes from billing with each request (an invoice's
 * `amount_paid` never changes once it is paid); the refunds are decided here.
 */
export const invoicePaymentStream = (invoiceId: string) => `invoice_payment-${invoiceId}`;

export type InvoicePaymentState = { refunds: RefundLedger };

/** Billing's word on the invoice, asked for at each request (`GET /internal/invoices/:id/payment`). */
export type InvoicePaid = { invoiceId: string; amountPaid: number; chargeKey: string; environment: Environment };

export type RefundInvoice = { type: 'RefundInvoice'; data: RequestRefund['data'] & { invoice: InvoicePaid } };

export type InvoicePaymentCommand = RefundInvoice | SettleRefund;

export const initialState = (): InvoicePaymentState => ({ refunds: [] });

export function evolve(state: InvoicePaymentState, event: RefundEvent): InvoicePaymentState {
  return { refunds: applyRefundEvent(state.refunds, event) };
}

export function decide(command: InvoicePaymentCommand, state: InvoicePaymentState): RefundEvent[] {
  switch (command.type) {
    case 'RefundInvoice': {
      const { invoice, ...request } = command.data;
      const payment = {
        paid: invoice.amountPaid,
        chargeKey: invoice.chargeKey,
        orderId: null,
        invoiceId: invoice.invoiceId,
        checkoutSessionId: null,
        environment: invoice.environment,
        refunds: state.refunds,
      };
      return decideRefund(payment, { type: 'RequestRefund', data: request });
    }
    case 'SettleRefund':
      return decideSettlement(state.refunds, command);
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as RefundCommand).type}`);
    }
  }
}

/** The invoice payment aggregate: the decider its tests check, run with the refunds table. */
export const invoicePaymentAggregate = defineAggregate({
  stream: invoicePaymentStream,
  events: refundEvents,
  initialState,
  evolve,
  decide,
  project: projectRefunds,
});
