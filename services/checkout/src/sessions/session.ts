import type {
  CheckoutMode,
  CheckoutSessionCompletedData,
  CheckoutSessionExpiredData,
  Discount,
  OrderRefundedData,
  Einvoice,
  Environment,
  SoldProduct,
} from '@billing/contracts';
import type { RecordedEvent } from '@billing/eventstore';

export const sessionStream = (sessionId: string) => `checkout_session-${sessionId}`;

/** The refund reason when billing found a live subscription to the product after payment. */
export const DUPLICATE_SUBSCRIPTION = 'duplicate_subscription';

/** What checkout needs of the product, copied at creation: later catalog changes do not move a session. */
export type SessionProduct = SoldProduct;

/**
 * The order a session sells: `ord_`, OPEN until paid, then PAID; CANCELED when the session
 * expires; REFUNDED when checkout gives the money back.
 */
export type Order = {
  id: string;
  status: 'OPEN' | 'PAID' | 'CANCELED' | 'REFUNDED';
  product_id: string;
  amount_subtotal: number;
  discount_amount: number;
  amount_total: number;
  currency: 'TWD';
  /** The session's metadata at creation, `ref` and `utm_*` of a payment link included. */
  metadata: Record<string, string> | null;
  created_at: string;
  paid_at: string | null;
  refunded_at?: string | null;
};

export type CardSummary = {
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
};

/** `pi_` (PAYMENT, SUBSCRIPTION) or `seti_` (SETUP): what the processor is asked to do. */
export type Intent = {
  id: string;
  kind: 'payment_intent' | 'setup_intent';
  status: 'requires_payment_method' | 'requires_action' | 'processing' | 'succeeded' | 'canceled';
  amount: number;
  currency: 'TWD';
  client_secret: string;
  payment_method: CardSummary | null;
  last_payment_error: { code: string; message: string } | null;
  created_at: string;
  succeeded_at: string | null;
};

export type CheckoutSessionCreatedData = {
  session_id: string;
  organization: string;
  environment: Environment;
  mode: CheckoutMode;
  product: SessionProduct;
  success_url: string;
  cancel_url: string;
  /** Billing's customer the buyer's names pointed to at creation; absent in sessions made before. */
  customer_id?: string | null;
  customer_email: string | null;
  customer_name: string | null;
  external_customer_id: string | null;
  collect_payment_method: 'always' | 'if_required';
  requires_payment_method: boolean;
  metadata: Record<string, string> | null;
  einvoice: Einvoice | null;
  promotion_code: string | null;
  promotion_code_id: string | null;
  redemption_id: string | null;
  discount: Discount | null;
  order: Order;
  intent: Intent;
  created_at: string;
  expires_at: string;
};

export type PaymentAttemptStartedData = {
  session_id: string;
  attempt_id: string;
  started_at: string;
};

export type PaymentAttemptFailedData = {
  session_id: string;
  attempt_id: string;
  code: string;
  message: string;
  /** A challenge (3-D Secure) is needed: the intent waits in `requires_action`. */
  requires_action: boolean;
  failed_at: string;
};

export type SessionCompletedData = CheckoutSessionCompletedData & {
  completed_at: string;
  payment_method: CardSummary | null;
};

export type SessionCreated = { type: 'CheckoutSessionCreated'; data: CheckoutSessionCreatedData };
export type PaymentAttemptStarted = { type: 'PaymentAttemptStarted'; data: PaymentAttemptStartedData };
export type PaymentAttemptFailed = { type: 'PaymentAttemptFailed'; data: PaymentAttemptFailedData };
/** Billing created the subscription this session paid for. */
export type SubscriptionLinkedData = { session_id: string; subscription_id: string; linked_at: string };

export type SessionCompleted = { type: 'CheckoutSessionCompleted'; data: SessionCompletedData };
export type SessionExpired = { type: 'CheckoutSessionExpired'; data: CheckoutSessionExpiredData };
export type SubscriptionLinked = { type: 'SubscriptionLinked'; data: SubscriptionLinkedData };
export type OrderRefunded = { type: 'OrderRefunded'; data: OrderRefundedData };

export type SessionEvent =
  | SessionCreated
  | PaymentAttemptStarted
  | PaymentAttemptFailed
  | SessionCompleted
  | SessionExpired
  | SubscriptionLinked
  | OrderRefunded;

export const SESSION_EVENT_TYPES: ReadonlyArray<SessionEvent['type']> = [
  'CheckoutSessionCreated',
  'PaymentAttemptStarted',
  'PaymentAttemptFailed',
  'CheckoutSessionCompleted',
  'CheckoutSessionExpired',
  'SubscriptionLinked',
  'OrderRefunded',
];

/** A session as checkout knows it; the stored status never says EXPIRED before the sweep. */
export type Session = Omit<CheckoutSessionCreatedData, 'session_id' | 'customer_id'> & {
  id: string;
  /** Known at creation when billing had the buyer already, and always once paid. */
  customer_id: string | null;
  status: 'OPEN' | 'COMPLETE' | 'EXPIRED';
  /** The charge under way, if any: a second one is refused until it ends. */
  attempt: { id: string; started_at: string } | null;
  subscription_id: string | null;
  completed_at: string | null;
  expired_at: string | null;
  updated_at: string;
};

export type SessionState = { status: 'Empty' } | { status: 'Exists'; session: Session };

export const initialState = (): SessionState => ({ status: 'Empty' });

export function evolve(state: SessionState, event: SessionEvent): SessionState {
  if (event.type === 'CheckoutSessionCreated') {
    const { session_id, ...created } = event.data;
    return {
      status: 'Exists',
      session: {
        ...created,
        id: session_id,
        customer_id: created.customer_id ?? null,
        status: 'OPEN',
        attempt: null,
        subscription_id: null,
        completed_at: null,
        expired_at: null,
        updated_at: created.created_at,
      },
    };
  }
  if (state.status === 'Empty') return state;
  const s = state.session;
  switch (event.type) {
    case 'PaymentAttemptStarted': {
      const { attempt_id: id, started_at } = event.data;
      return next({ ...s, attempt: { id, started_at }, intent: { ...s.intent, status: 'processing' } }, started_at);
    }
    case 'PaymentAttemptFailed': {
      const { code, message, requires_action, failed_at } = event.data;
      const status = requires_action ? 'requires_action' : 'requires_payment_method';
      return next(
        { ...s, attempt: null, intent: { ...s.intent, status, last_payment_error: { code, message } } },
        failed_at,
      );
    }
    case 'CheckoutSessionCompleted': {
      const d = event.data;
      const at = d.completed_at;
      return next(
        {
          ...s,
          status: 'COMPLETE',
          attempt: null,
          completed_at: at,
          customer_id: d.customer_id ?? s.customer_id,
          subscription_id: d.subscription_id ?? s.subscription_id,
          customer_email: d.customer_email,
          customer_name: d.customer_name ?? null,
          order: { ...s.order, status: 'PAID', paid_at: at },
          intent: {
            ...s.intent,
            status: 'succeeded',
            succeeded_at: at,
            payment_method: d.payment_method,
            last_payment_error: null,
          },
        },
        at,
      );
    }
    case 'CheckoutSessionExpired': {
      const at = event.data.expired_at ?? s.expires_at;
      return next(
        {
          ...s,
          status: 'EXPIRED',
          attempt: null,
          expired_at: at,
          order: { ...s.order, status: 'CANCELED' },
          intent: { ...s.intent, status: 'canceled' },
        },
        at,
      );
    }
    case 'SubscriptionLinked': {
      const { subscription_id, linked_at } = event.data;
      return next({ ...s, subscription_id }, linked_at);
    }
    case 'OrderRefunded': {
      const at = event.data.refunded_at ?? s.updated_at;
      // Billing started no subscription for a duplicate: the id named at completion never came to be.
      const subscription_id = event.data.reason === DUPLICATE_SUBSCRIPTION ? null : s.subscription_id;
      return next({ ...s, subscription_id, order: { ...s.order, status: 'REFUNDED', refunded_at: at } }, at);
    }
    default: {
      // Compile-time exhaustiveness; at run time an unknown (newer) event type leaves the state alone.
      const _unknown: never = event;
      return state;
    }
  }
}

const next = (session: Session, at: string): SessionState => ({
  status: 'Exists',
  session: { ...session, updated_at: at },
});

/** A `checkout_session-<id>` stream holds only session events. */
export const asSessionEvent = (event: RecordedEvent): SessionEvent =>
  ({ type: event.type, data: event.data }) as SessionEvent;
