import { type ErrorDetail, type Refund, livemodeOf, validationError } from '@billing/contracts';
import {
  type Payment,
  type RefundEvent,
  type RequestRefund,
  type SettleRefund,
  applyRefundEvent,
  heldAmount,
} from './refund';

/** A refusal of a refund: 422, its reason as the message and in `details`. */
export const refused = (detail: ErrorDetail) => validationError([detail], detail.message);

/**
 * A refund of `payment`: never more than is left of it, which is what was paid, less every
 * refund that succeeded or is still pending (a pending one's amount is held until the processor
 * answers, so two refunds asked at once cannot both pass), less what billing already gave back
 * from it as credit (`credited`: a plan switch credited its unused time to the customer balance
 * or into a proration). The amount defaults to all that is left. Refusals are 422
 * `validation_error` at the field at fault: `not_paid` (nothing was paid), `already_refunded`
 * (nothing is left), `amount_too_large`. The same refund id again decides nothing.
 *
 * Example: 599 paid, a switch to a cheaper plan a day later credited 580, 0 refunded: 19 left.
 */
export function decideRefund(payment: Payment, { data }: RequestRefund): RefundEvent[] {
  if (payment.refunds.some((refund) => refund.id === data.refundId)) return [];
  if (payment.paid <= 0) {
    throw refused({ path: data.field, code: 'not_paid', message: 'Nothing was paid that could be refunded' });
  }
  const credited = data.credited ?? 0;
  const left = payment.paid - heldAmount(payment.refunds) - credited;
  const creditNote = credited > 0 ? `, ${credited} TWD of it given back as credit by a plan switch` : '';
  if (left <= 0) {
    throw refused({
      path: data.field,
      code: 'already_refunded',
      message: `All ${payment.paid} TWD paid has been ${credited > 0 ? 'refunded or credited' : 'refunded'}${creditNote}`,
    });
  }
  const amount = data.amount ?? left;
  if (amount > left) {
    throw refused({
      path: 'amount',
      code: 'amount_too_large',
      message: `Refund amount (${amount} TWD) is more than is left to refund (${left} TWD of ${payment.paid} TWD paid${creditNote})`,
    });
  }
  const at = data.now.toISOString();
  const object: Refund = {
    object: 'refund',
    id: data.refundId,
    amount,
    currency: 'TWD',
    reason: data.reason,
    status: 'pending',
    failure_reason: null,
    order_id: payment.orderId,
    invoice_id: data.invoiceId,
    checkout_session_id: payment.checkoutSessionId,
    created_at: at,
    livemode: livemodeOf(payment.environment),
  };
  return [
    {
      type: 'RefundCreated',
      data: {
        refund_id: object.id,
        amount,
        reason: object.reason,
        order_id: object.order_id,
        invoice_id: object.invoice_id,
        checkout_session_id: object.checkout_session_id,
        charge_key: payment.chargeKey,
        created_at: at,
        object,
      },
    },
  ];
}

/** Records the processor's answer to a pending refund once; an unknown or settled refund is left alone. */
export function decideSettlement(refunds: Refund[], { data }: SettleRefund): RefundEvent[] {
  const refund = refunds.find((r) => r.id === data.refundId);
  if (!refund || refund.status !== 'pending') return [];
  const at = data.now.toISOString();
  if (data.outcome.status === 'succeeded') {
    const object: Refund = { ...refund, status: 'succeeded' };
    const processorRefundId = data.outcome.processorRefundId;
    return [
      {
        type: 'RefundSucceeded',
        data: { refund_id: refund.id, processor_refund_id: processorRefundId, succeeded_at: at, object },
      },
    ];
  }
  const object: Refund = { ...refund, status: 'failed', failure_reason: data.outcome.message };
  return [
    {
      type: 'RefundFailed',
      data: { refund_id: refund.id, failure_reason: data.outcome.message, failed_at: at, object },
    },
  ];
}

/** The refunds after `events`, for a decider that appends more in the same decision. */
export const refundsAfter = (refunds: Refund[], events: RefundEvent[]) => events.reduce(applyRefundEvent, refunds);
