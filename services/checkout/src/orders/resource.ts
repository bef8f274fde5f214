import { type Environment, type Order, livemodeOf } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { sessionTradeOf } from '../payments/session-trade';
import { sessionsTable } from '../sessions/read-model';
import type { Session } from '../sessions/session';

// A paid checkout's order as the API shows it (docs/orders.md), from the session that sold it.

/**
 * The paid session of an order of the tenant (any mode: a one-time purchase, a subscription's
 * first payment), by the order index (`checkout_sessions_by_order`); another organization's or
 * environment's order is none.
 */
export async function paidSessionOf(sql: SqlExecutor, schema: string, tenant: Tenant, orderId: string) {
  const { rows } = await sql.query<{ document: Session }>(
    `SELECT document FROM ${sessionsTable(schema)}
     WHERE document->'order'->>'id' = $1 AND organization = $2 AND environment = $3 AND status = 'COMPLETE'`,
    [orderId, tenant.organization, tenant.environment],
  );
  return rows[0]?.document;
}

/** Who charged the session and under what trade; null when nothing was charged (a 0 TWD order). */
export function chargeOf(session: Session): { processor: Order['processor']; processor_reference: string | null } {
  const charge = session.charge;
  return charge ? sessionTradeOf(charge.processor, charge.key) : { processor: 'sandbox', processor_reference: null };
}

/** paid, partially_refunded or refunded, by what refunds gave back. */
export function refundStatusOf(amountTotal: number, refunded: number): Order['status'] {
  if (refunded === 0) return 'paid';
  return refunded < amountTotal ? 'partially_refunded' : 'refunded';
}

export function orderOf(session: Session, environment: Environment): Order {
  const { order, product } = session;
  const refunded = order.amount_refunded ?? 0;
  const card = session.intent.payment_method;
  return {
    object: 'order',
    id: order.id,
    checkout_session_id: session.id,
    mode: session.mode,
    customer_id: session.customer_id,
    customer_email: session.customer_email,
    product: { id: product.id, name: product.name, type: product.type },
    subscription_id: session.subscription_id,
    status: refundStatusOf(order.amount_total, refunded),
    amount_subtotal: order.amount_subtotal,
    amount_total: order.amount_total,
    amount_refunded: refunded,
    currency: 'TWD',
    payment_method: card ? { brand: card.brand, last4: card.last4 } : null,
    ...chargeOf(session),
    refunds: session.refunds ?? [],
    metadata: order.metadata,
    paid_at: order.paid_at ?? session.completed_at!,
    created_at: session.created_at,
    livemode: livemodeOf(environment),
  };
}
