import { type CheckoutSession, type CheckoutSessionCreated, livemodeOf } from '@billing/contracts';
import type { Session } from './session';

/**
 * An OPEN session past `expires_at` reads as EXPIRED at once, before the sweep records it;
 * unless it was charged, which only completes.
 */
export const statusAt = (session: Session, now: Date): Session['status'] =>
  session.status === 'OPEN' && !session.charge && now.getTime() >= Date.parse(session.expires_at)
    ? 'EXPIRED'
    : session.status;

export const pageUrl = (checkoutUrl: string, id: string) => `${checkoutUrl.replace(/\/+$/, '')}/${id}`;

/** `einvoiceEnabled`: whether billing issues the organization's e-invoices in the session's environment. */
export function toCreatedResource(
  session: Session,
  checkoutUrl: string,
  einvoiceEnabled = false,
): CheckoutSessionCreated {
  return {
    object: 'checkout.session',
    id: session.id,
    url: pageUrl(checkoutUrl, session.id),
    expires_at: session.expires_at,
    amount: session.order.amount_total,
    requires_payment_method: session.requires_payment_method,
    client_secret: session.intent.client_secret,
    discount: session.discount,
    einvoice_enabled: einvoiceEnabled,
    livemode: livemodeOf(session.environment),
  };
}

export function toSessionResource(session: Session, now: Date): CheckoutSession {
  const isSetup = session.intent.kind === 'setup_intent';
  return {
    object: 'checkout.session',
    id: session.id,
    status: statusAt(session, now),
    mode: session.mode,
    customer_id: session.customer_id,
    customer_email: session.customer_email,
    customer_name: session.customer_name,
    external_customer_id: session.external_customer_id,
    order_id: session.order.id,
    subscription_id: session.subscription_id,
    payment_intent_id: isSetup ? null : session.intent.id,
    setup_intent_id: isSetup ? session.intent.id : null,
    amount_subtotal: session.order.amount_subtotal,
    amount_total: session.order.amount_total,
    currency: 'TWD',
    discount: session.discount,
    allow_promotion_codes: session.allow_promotion_codes ?? false,
    product: { id: session.product.id, name: session.product.name },
    metadata: session.metadata,
    expires_at: session.expires_at,
    created_at: session.created_at,
    completed_at: session.completed_at,
    // Only while an ATM or convenience-store payment waits: other sessions keep the spec's fields.
    ...(session.status === 'OPEN' && session.async_payment
      ? { payment_instructions: session.async_payment.instructions }
      : {}),
    livemode: livemodeOf(session.environment),
  };
}
