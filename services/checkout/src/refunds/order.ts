import { livemodeOf, notFound } from '@billing/contracts';
import type { OrderRefunded, Session, SessionEvent, SessionState } from '../sessions/session';
import { decideRefund, decideSettlement, refundsAfter, refused } from './decide';
import { type Payment, type RequestRefund, type SettleRefund, refundedAmount } from './refund';

/** A refund of a checkout order, decided on its session's stream (where the order lives). */
export type RefundOrder = { type: 'RefundOrder'; data: RequestRefund['data'] };

/** The processor key of the session's charge; sessions paid before charges were recorded used the intent. */
export const chargeKeyOfPaid = (session: Session) => session.charge?.key ?? session.intent.id;

/** What a refund of the order may give back: the order's total once PAID, nothing before. */
export function orderPayment(session: Session, invoiceId: string | null): Payment {
  return {
    paid: session.order.status === 'PAID' || session.order.status === 'REFUNDED' ? session.order.amount_total : 0,
    chargeKey: chargeKeyOfPaid(session),
    orderId: session.order.id,
    invoiceId,
    checkoutSessionId: session.id,
    environment: session.environment,
    refunds: session.refunds ?? [],
  };
}

export function decideOrderRefund({ data }: RefundOrder, state: SessionState): SessionEvent[] {
  if (state.status === 'Empty') throw notFound('No such order');
  const { session } = state;
  // A REFUNDED order gave everything back, through refunds or at once (billing's duplicate subscription).
  if (session.order.status === 'REFUNDED' && !session.refunds?.some((r) => r.id === data.refundId)) {
    throw refused({
      path: data.field,
      code: 'already_refunded',
      message: `Order ${session.order.id} has been refunded in full`,
    });
  }
  return decideRefund(orderPayment(session, data.invoiceId), { type: 'RequestRefund', data });
}

/**
 * The processor's answer to a refund of the order. The refund that brings what was given back
 * to the order's total also refunds the order (`OrderRefunded`, public `order.refunded`), so
 * promotions voids its redemption; a partial refund leaves the order PAID.
 */
export function decideOrderSettlement(command: SettleRefund, state: SessionState): SessionEvent[] {
  if (state.status === 'Empty') return [];
  const { session } = state;
  const events = decideSettlement(session.refunds ?? [], command);
  const settled = events[0];
  if (settled?.type !== 'RefundSucceeded' || session.order.status !== 'PAID') return events;
  if (refundedAmount(refundsAfter(session.refunds ?? [], events)) < session.order.amount_total) return events;
  return [...events, orderRefunded(session, settled.data.object.reason, command.data.now)];
}

/** The order, refunded in full: its redemption (if any) is voided by promotions. */
export function orderRefunded(session: Session, reason: string | null, now: Date): OrderRefunded {
  const at = now.toISOString();
  const { order } = session;
  return {
    type: 'OrderRefunded',
    data: {
      order_id: order.id,
      redemption_id: session.redemption_id,
      session_id: session.id,
      ...(reason === null ? {} : { reason }),
      refunded_at: at,
      object: {
        object: 'order',
        id: order.id,
        status: 'REFUNDED',
        checkout_session_id: session.id,
        product_id: order.product_id,
        amount_total: order.amount_total,
        amount_refunded: order.amount_total,
        currency: 'TWD',
        refund_reason: reason,
        metadata: order.metadata ?? null,
        refunded_at: at,
        updated_at: at,
        livemode: livemodeOf(session.environment),
      },
    },
  };
}
