import type {
  Environment,
  Refund,
  RefundCreatedData,
  RefundFailedData,
  RefundReason,
  RefundSucceededData,
} from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

/**
 * Refunds (docs/decisions/0009-refunds.md). A refund is decided on the stream of the payment
 * it gives money back from, so that every refund of one payment is decided against all the
 * others at the stream's expected version: an order's refunds on its checkout session's stream
 * (where the order lives), a renewal invoice's on `invoice_payment-<invoice id>`.
 */
export type RefundCreated = { type: 'RefundCreated'; data: RefundCreatedData };
export type RefundSucceeded = { type: 'RefundSucceeded'; data: RefundSucceededData };
export type RefundFailed = { type: 'RefundFailed'; data: RefundFailedData };
export type RefundEvent = RefundCreated | RefundSucceeded | RefundFailed;

export const refundEvents = streamEvents<RefundEvent>({
  RefundCreated: true,
  RefundSucceeded: true,
  RefundFailed: true,
});

/** A payment's refunds so far, oldest first, each as the API shows it. */
export type RefundLedger = Refund[];

/** The refunds of a payment with a `RefundEvent` applied. */
export function applyRefundEvent(refunds: RefundLedger, event: RefundEvent): RefundLedger {
  const refund = event.data.object;
  return refunds.some((r) => r.id === refund.id)
    ? refunds.map((r) => (r.id === refund.id ? refund : r))
    : [...refunds, refund];
}

/** What is held against the payment: refunds that succeeded, and those the processor has not answered yet. */
export const heldAmount = (refunds: RefundLedger) =>
  refunds.filter((r) => r.status !== 'failed').reduce((sum, r) => sum + r.amount, 0);

/** What the processor gave back. */
export const refundedAmount = (refunds: RefundLedger) =>
  refunds.filter((r) => r.status === 'succeeded').reduce((sum, r) => sum + r.amount, 0);

/** The money a refund may come from: one paid charge. */
export type Payment = {
  /** TWD paid; 0 when nothing was (yet) paid. */
  paid: number;
  /** The processor key the charge was made under. */
  chargeKey: string;
  orderId: string | null;
  invoiceId: string | null;
  checkoutSessionId: string | null;
  environment: Environment;
  refunds: RefundLedger;
};

/** Asked with a new refund id; the same id again (a retried request) decides nothing new. */
export type RequestRefund = {
  type: 'RequestRefund';
  data: {
    refundId: string;
    /** Default: everything not refunded (nor held) yet. */
    amount?: number;
    reason: RefundReason | null;
    /** The field the request named the payment by, where a refusal points. */
    field: 'order_id' | 'invoice_id';
    /** The invoice the request named, kept on the refund (an order's first-period invoice too). */
    invoiceId: string | null;
    /**
     * TWD of the payment that billing already gave back as credit (a plan switch credited its
     * unused time), asked of billing with each request: it cannot be refunded as well.
     */
    credited?: number;
    now: Date;
  };
};

/** The processor's answer to a pending refund; a refund already settled is left alone. */
export type SettleRefund = {
  type: 'SettleRefund';
  data: {
    refundId: string;
    outcome: { status: 'succeeded'; processorRefundId: string } | { status: 'failed'; message: string };
    now: Date;
  };
};

export type RefundCommand = RequestRefund | SettleRefund;
