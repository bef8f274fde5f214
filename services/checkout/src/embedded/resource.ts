import type {
  EmbeddedCheckout,
  EmbeddedCheckoutAnswer,
  EmbeddedCheckoutStatus,
  PaidCheckoutAnswer,
} from '@billing/contracts';
import { livemodeOf } from '@billing/contracts';
import { statusAt } from '../sessions/resource';
import type { Session } from '../sessions/session';

const STATUS: Record<Session['status'], EmbeddedCheckoutStatus> = {
  OPEN: 'PENDING',
  COMPLETE: 'SUCCEEDED',
  EXPIRED: 'CANCELED',
};

/** How often a subscription bills, in the SDK's words (`MONTHLY`, ...); null for other modes. */
function billingPeriod(session: Session): string | null {
  const { interval, interval_count } = session.product;
  if (session.mode !== 'SUBSCRIPTION' || !interval) return null;
  const word = { day: 'DAILY', week: 'WEEKLY', month: 'MONTHLY', year: 'YEARLY' }[interval] ?? interval.toUpperCase();
  return interval_count === 1 ? word : `EVERY_${interval_count}_${interval.toUpperCase()}S`;
}

export function toEmbeddedCheckout(session: Session, now: Date): EmbeddedCheckout {
  const sessionStatus = statusAt(session, now);
  const isSetup = session.intent.kind === 'setup_intent';
  return {
    object: 'checkout',
    id: session.id,
    ui_mode: 'embedded',
    status: STATUS[sessionStatus],
    session_status: sessionStatus,
    mode: session.mode,
    product_id: session.product.id,
    product_type: session.product.type,
    amount: session.order.amount_total,
    amount_subtotal: session.order.amount_subtotal,
    discount_amount: session.order.discount_amount,
    currency: 'TWD',
    trial_days: session.trial_days ?? 0,
    requires_payment_method: session.requires_payment_method,
    discount: session.discount,
    promotion_code: session.promotion_code,
    customer_id: session.customer_id,
    customer_email: session.customer_email,
    customer_name: session.customer_name,
    external_customer_id: session.external_customer_id,
    order_id: session.order.id,
    subscription_id: session.subscription_id,
    payment_intent_id: isSetup ? null : session.intent.id,
    setup_intent_id: isSetup ? session.intent.id : null,
    client_secret: session.intent.client_secret,
    expires_at: session.expires_at,
    created_at: session.created_at,
    completed_at: session.completed_at,
    livemode: livemodeOf(session.environment),
  };
}

/** The answer of every embedded-checkout endpoint: the checkout, its product, what the card form needs. */
export function toCheckoutAnswer(session: Session, now: Date, cardFormScript: string): EmbeddedCheckoutAnswer {
  const { product } = session;
  return {
    object: 'checkout',
    checkout: toEmbeddedCheckout(session, now),
    product: {
      id: product.id,
      name: product.name,
      type: product.type,
      price: product.price,
      interval: product.interval,
      interval_count: product.interval_count,
      trial_days: product.trial_days,
    },
    client_secret: session.intent.client_secret,
    sdk_token: session.card_form_token ?? '',
    sdk_timestamp: String(Math.floor(Date.parse(session.created_at) / 1000)),
    credit_token: session.intent.client_secret,
    card_form_script: cardFormScript,
    livemode: livemodeOf(session.environment),
  };
}

/** A paid checkout, with what the SDK shows the buyer: the subscription begun, or the charge. */
export function toPaidAnswer(
  session: Session,
  now: Date,
  cardFormScript: string,
  redirectUrl: string | null,
): PaidCheckoutAnswer {
  const charged = session.intent.kind === 'payment_intent' && session.order.amount_total > 0;
  return {
    ...toCheckoutAnswer(session, now, cardFormScript),
    success: true,
    subscription:
      session.mode === 'SUBSCRIPTION' && session.subscription_id
        ? {
            id: session.subscription_id,
            status: session.trial_days ? 'TRIAL' : 'ACTIVE',
            billing_period: billingPeriod(session),
          }
        : null,
    charge: charged ? { id: session.intent.id, status: 'SUCCEEDED', amount: session.order.amount_total } : null,
    payment_intent: session.intent.kind === 'payment_intent' ? { id: session.intent.id } : null,
    redirect_url: redirectUrl,
  };
}
