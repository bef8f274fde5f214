import type {
  CheckoutAsyncPaymentExpiredData,
  CheckoutAsyncPaymentPendingData,
  CheckoutMode,
  CheckoutPaymentUnmatchedData,
  CouponDiscount,
  CheckoutSessionCompletedData,
  CheckoutSessionExpiredData,
  Discount,
  OrderRefundedData,
  Einvoice,
  Environment,
  SoldProduct,
} from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';
import { type RefundEvent, type RefundLedger, applyRefundEvent, refundedAmount } from '../refunds/refund';

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
  /** TWD refunds gave back so far (`docs/decisions/0009-refunds.md`); absent before any refund. */
  amount_refunded?: number;
};

export type CardSummary = {
  /** The processor's reusable reference (`pm_`), for charges without the buyer; absent on older sessions. */
  id?: string;
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
  /** Null only for an embedded checkout created without them (it completes on the merchant's page). */
  success_url: string | null;
  cancel_url: string | null;
  /** `embedded`: an embedded checkout (docs/embedded-checkout.md), paid on the merchant's page, not the hosted one. Absent: hosted. */
  ui_mode?: 'hosted' | 'embedded';
  /** The hosted page's language when the merchant chose one; absent: the buyer's browser decides. */
  locale?: 'zh-TW' | 'en' | null;
  /** Embedded: the payment provider's card-form session (the answer's `sdk_token`). */
  card_form_token?: string | null;
  /**
   * Embedded, created from a browser page with a Publishable Key: that page's origin, the only one
   * whose key-less coupon calls (the recur-tw SDK's coupon box) are taken. Absent: none are.
   */
  page_origin?: string;
  /** Billing's customer the buyer's names pointed to at creation; absent in sessions made before. */
  customer_id?: string | null;
  /** Sandbox: the test clock its subscription lives on; absent in sessions made before. */
  test_clock?: string | null;
  /**
   * The payment link that opened the session, null for none: a session of no link skips the
   * link's sold-out check and completion count. Absent in sessions made before (the link tables say).
   */
  payment_link_id?: string | null;
  /** SUBSCRIPTION mode: free days (plan and code) before the first charge; the card is only saved today. */
  trial_days?: number;
  /** The coupon of the reserved code, for billing's later invoices. */
  coupon?: CouponDiscount | null;
  /** The coupon's name, shown on the hosted page beside the code; absent in sessions made before. */
  coupon_name?: string | null;
  /** The hosted page offers a field for a promotion code while none is applied; absent (false) in sessions made before. */
  allow_promotion_codes?: boolean;
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
  /** The processor's idempotency key of this attempt (`chargeKeyOf`); absent in attempts made before. */
  charge_key?: string;
  /** Who pays in this attempt; a charge found later (the sweep) is completed in their name. */
  buyer?: Buyer;
  /** The processor asked, when not the built-in simulator: the sweep asks it about the key. */
  processor?: ExternalProcessor;
  started_at: string;
};

export type PaymentAttemptFailedData = {
  session_id: string;
  attempt_id: string;
  code: string;
  message: string;
  /** A challenge (3-D Secure) is needed: the intent waits in `requires_action`. */
  requires_action: boolean;
  /**
   * The processor gave no answer (an error, a timeout): the charge may have happened, so the
   * next attempt asks under the same key and gets that charge if there was one. Absent or
   * false: the processor said no, and the next attempt has a key of its own.
   */
  outcome_unknown?: boolean;
  failed_at: string;
};

/** Who paid, as the paying attempt knew them; the completion names them. */
export type Buyer = {
  /** Typed on the page; a prefilled email is never overwritten. */
  email: string | null;
  name: string | null;
  /** Billing's customer, resolved before the charge; null when billing is not configured. */
  customer_id: string | null;
  /**
   * The language of the page they paid on (the session's, else their browser's), which the
   * emails to them are written in; absent when no page said one (an API call, attempts made before).
   */
  locale?: 'zh-TW' | 'en';
};

/** What the buyer gave on the page they pay on. */
export type BuyerInput = { email?: string; name?: string; locale?: 'zh-TW' | 'en' };

export const buyerOf = (input: BuyerInput, customerId: string | null): Buyer => ({
  email: input.email ?? null,
  name: input.name ?? null,
  customer_id: customerId,
  ...(input.locale && { locale: input.locale }),
});

/**
 * The processor charged (or, with nothing to charge, accepted) the session: recorded before
 * the completion and independently of it, so that whatever fails after a charge the session
 * is never charged again and completes from this record.
 */
export type PaymentAttemptSucceededData = {
  session_id: string;
  attempt_id: string;
  charge_key: string;
  payment_method: CardSummary | null;
  buyer: Buyer;
  succeeded_at: string;
};

export type SessionCompletedData = CheckoutSessionCompletedData & {
  completed_at: string;
  payment_method: CardSummary | null;
};

/**
 * An open embedded checkout's promotion code was applied, replaced or removed (null code): the
 * new discount and amounts. The code's redemption is reserved before and the old one released after.
 */
export type PromotionCodeChangedData = {
  session_id: string;
  promotion_code: string | null;
  promotion_code_id: string | null;
  redemption_id: string | null;
  discount: Discount | null;
  coupon: CouponDiscount | null;
  /** Absent in changes recorded before the hosted page showed it. */
  coupon_name?: string | null;
  amount_subtotal: number;
  discount_amount: number;
  amount_total: number;
  requires_payment_method: boolean;
  changed_at: string;
};

/** The buyer chose how to receive the e-invoice on the hosted page, before the charge: the completion carries it. */
export type EinvoiceChosenData = { session_id: string; einvoice: Einvoice; chosen_at: string };

export type SessionCreated = { type: 'CheckoutSessionCreated'; data: CheckoutSessionCreatedData };
export type PromotionCodeChanged = { type: 'PromotionCodeChanged'; data: PromotionCodeChangedData };
export type EinvoiceChosen = { type: 'EinvoiceChosen'; data: EinvoiceChosenData };
export type PaymentAttemptStarted = { type: 'PaymentAttemptStarted'; data: PaymentAttemptStartedData };
export type PaymentAttemptFailed = { type: 'PaymentAttemptFailed'; data: PaymentAttemptFailedData };
export type PaymentAttemptSucceeded = { type: 'PaymentAttemptSucceeded'; data: PaymentAttemptSucceededData };
/** Billing created the subscription this session paid for. */
export type SubscriptionLinkedData = { session_id: string; subscription_id: string; linked_at: string };

export type SessionCompleted = { type: 'CheckoutSessionCompleted'; data: SessionCompletedData };
export type AsyncPaymentPending = { type: 'CheckoutAsyncPaymentPending'; data: CheckoutAsyncPaymentPendingData };
export type AsyncPaymentExpired = { type: 'CheckoutAsyncPaymentExpired'; data: CheckoutAsyncPaymentExpiredData };
export type PaymentUnmatched = { type: 'CheckoutPaymentUnmatched'; data: CheckoutPaymentUnmatchedData };
export type SessionExpired = { type: 'CheckoutSessionExpired'; data: CheckoutSessionExpiredData };
export type SubscriptionLinked = { type: 'SubscriptionLinked'; data: SubscriptionLinkedData };
export type OrderRefunded = { type: 'OrderRefunded'; data: OrderRefundedData };

export type SessionEvent =
  | SessionCreated
  | PromotionCodeChanged
  | EinvoiceChosen
  | PaymentAttemptStarted
  | PaymentAttemptFailed
  | PaymentAttemptSucceeded
  | AsyncPaymentPending
  | AsyncPaymentExpired
  | PaymentUnmatched
  | SessionCompleted
  | SessionExpired
  | SubscriptionLinked
  | OrderRefunded
  | RefundEvent;

/** A `checkout_session-<id>` stream holds only session events. */
export const sessionEvents = streamEvents<SessionEvent>({
  CheckoutSessionCreated: true,
  PromotionCodeChanged: true,
  EinvoiceChosen: true,
  PaymentAttemptStarted: true,
  PaymentAttemptFailed: true,
  PaymentAttemptSucceeded: true,
  CheckoutAsyncPaymentPending: true,
  CheckoutAsyncPaymentExpired: true,
  CheckoutPaymentUnmatched: true,
  CheckoutSessionCompleted: true,
  CheckoutSessionExpired: true,
  SubscriptionLinked: true,
  OrderRefunded: true,
  RefundCreated: true,
  RefundSucceeded: true,
  RefundFailed: true,
});

/** A session as checkout knows it; the stored status never says EXPIRED before the sweep. */
export type Session = Omit<CheckoutSessionCreatedData, 'session_id' | 'customer_id'> & {
  id: string;
  /** Known at creation when billing had the buyer already, and always once paid. */
  customer_id: string | null;
  status: 'OPEN' | 'COMPLETE' | 'EXPIRED';
  /** The charge under way, if any: a second one is refused until it ends. */
  attempt: { id: string; started_at: string; charge_key?: string } | null;
  /**
   * Attempts the processor definitively answered without charging (declines, challenges): the
   * next attempt's key counts them (`chargeKeyOf`). Absent in sessions stored before.
   */
  settled_attempts?: number;
  /**
   * Set while a charge under `key` may have happened without being recorded: from the start of
   * an attempt until the processor's answer is recorded, and after an attempt it never answered.
   */
  pending_charge?: PendingCharge | null;
  /** The charge, once the processor made it; the session then only completes. */
  charge?: RecordedCharge | null;
  /**
   * An ATM account or convenience-store code the processor opened under the pending charge's
   * key: the session waits for it until its deadline (`expires_at` moves there) and takes no
   * other payment. Absent or null: none.
   */
  async_payment?: AsyncPayment | null;
  /** Trades a processor reported paid that the session could not take (money to give back by hand). */
  unmatched_trades?: string[];
  subscription_id: string | null;
  /**
   * The code was applied by the buyer (the hosted page's field, an embedded checkout's coupon
   * box), not given by the merchant at creation: the hosted page lets the buyer remove it.
   */
  promotion_code_by_buyer?: boolean;
  /** The order's refunds (`RefundCreated` ...), oldest first; absent before the first. */
  refunds?: RefundLedger;
  completed_at: string | null;
  expired_at: string | null;
  updated_at: string;
};

/** A processor of the merchant's own, beside the built-in simulator (docs/payments.md). */
export type ExternalProcessor = 'ecpay' | 'payuni';

/** A processor's answer that a pending charge was made: with what charges the subscription later, when there is one. */
export type Charged = { paymentMethod: CardSummary | null };

export type PendingCharge = { key: string; attempt_id: string; buyer: Buyer | null; processor?: ExternalProcessor };

export type AsyncPayment = Pick<
  CheckoutAsyncPaymentPendingData,
  'processor' | 'trade_no' | 'instructions' | 'issued_at'
>;

export type RecordedCharge = {
  key: string;
  attempt_id: string;
  /** The processor that charged, when not the built-in simulator. */
  processor?: ExternalProcessor;
  payment_method: CardSummary | null;
  buyer: Buyer;
  succeeded_at: string;
};

/**
 * The processor's idempotency key for the session's next charge: the payment (or setup) intent
 * and a count that moves only when the processor definitively said no. A crash, a lost answer
 * or a failure after the charge leaves the count where it was, so the retry asks under the same
 * key and the processor answers with the first charge instead of making a second.
 */
export const chargeKeyOf = (session: Session) => `${session.intent.id}-${(session.settled_attempts ?? 0) + 1}`;

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
        allow_promotion_codes: created.allow_promotion_codes ?? false,
        status: 'OPEN',
        attempt: null,
        settled_attempts: 0,
        pending_charge: null,
        charge: null,
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
    case 'PromotionCodeChanged': {
      const d = event.data;
      const total = d.amount_total;
      return next(
        {
          ...s,
          promotion_code: d.promotion_code,
          promotion_code_id: d.promotion_code_id,
          redemption_id: d.redemption_id,
          discount: d.discount,
          coupon: d.coupon,
          coupon_name: d.coupon_name ?? null,
          promotion_code_by_buyer: d.promotion_code !== null,
          requires_payment_method: d.requires_payment_method,
          order: {
            ...s.order,
            amount_subtotal: d.amount_subtotal,
            discount_amount: d.discount_amount,
            amount_total: total,
          },
          intent: { ...s.intent, amount: total },
        },
        d.changed_at,
      );
    }
    case 'EinvoiceChosen':
      return next({ ...s, einvoice: event.data.einvoice }, event.data.chosen_at);
    case 'PaymentAttemptStarted': {
      const { attempt_id: id, started_at, charge_key, buyer, processor } = event.data;
      const attempt = charge_key === undefined ? { id, started_at } : { id, started_at, charge_key };
      const pending_charge =
        charge_key === undefined
          ? null
          : { key: charge_key, attempt_id: id, buyer: buyer ?? null, ...(processor ? { processor } : {}) };
      return next({ ...s, attempt, pending_charge, intent: { ...s.intent, status: 'processing' } }, started_at);
    }
    case 'PaymentAttemptFailed': {
      const { code, message, requires_action, failed_at, outcome_unknown = false } = event.data;
      const status = requires_action ? 'requires_action' : 'requires_payment_method';
      const settled_attempts = (s.settled_attempts ?? 0) + (outcome_unknown ? 0 : 1);
      return next(
        {
          ...s,
          attempt: null,
          settled_attempts,
          pending_charge: outcome_unknown ? (s.pending_charge ?? null) : null,
          intent: { ...s.intent, status, last_payment_error: { code, message } },
        },
        failed_at,
      );
    }
    case 'PaymentAttemptSucceeded': {
      const { attempt_id, charge_key, payment_method, buyer, succeeded_at } = event.data;
      const processor = s.pending_charge?.key === charge_key ? s.pending_charge.processor : undefined;
      const charge = {
        key: charge_key,
        attempt_id,
        ...(processor ? { processor } : {}),
        payment_method,
        buyer,
        succeeded_at,
      };
      return next({ ...s, attempt: null, pending_charge: null, charge }, succeeded_at);
    }
    case 'CheckoutAsyncPaymentPending': {
      const { processor, trade_no, instructions, issued_at } = event.data;
      // The session waits for the payment until its deadline, never less than it had.
      const expires_at =
        Date.parse(instructions.expires_at) > Date.parse(s.expires_at) ? instructions.expires_at : s.expires_at;
      return next(
        { ...s, attempt: null, expires_at, async_payment: { processor, trade_no, instructions, issued_at } },
        issued_at,
      );
    }
    case 'CheckoutAsyncPaymentExpired':
      return next({ ...s, async_payment: null }, event.data.expired_at);
    case 'CheckoutPaymentUnmatched':
      return next(
        { ...s, unmatched_trades: [...(s.unmatched_trades ?? []), event.data.trade_no] },
        event.data.detected_at,
      );
    case 'CheckoutSessionCompleted': {
      const d = event.data;
      const at = d.completed_at;
      return next(
        {
          ...s,
          status: 'COMPLETE',
          attempt: null,
          pending_charge: null,
          async_payment: null,
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
      const order = { ...s.order, status: 'REFUNDED' as const, refunded_at: at, amount_refunded: s.order.amount_total };
      return next({ ...s, subscription_id, order }, at);
    }
    case 'RefundCreated':
    case 'RefundSucceeded':
    case 'RefundFailed': {
      const refunds = applyRefundEvent(s.refunds ?? [], event);
      const at =
        event.type === 'RefundCreated'
          ? event.data.created_at
          : event.type === 'RefundSucceeded'
            ? event.data.succeeded_at
            : event.data.failed_at;
      return next({ ...s, refunds, order: { ...s.order, amount_refunded: refundedAmount(refunds) } }, at);
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
