import {
  ApiError,
  type AsyncPaymentProcessor,
  type UnmatchedPaymentReason,
  type CheckoutSession,
  type Einvoice,
  type PaymentInstructions,
  type ReservedRedemption,
  conflict,
  einvoiceViolations,
  notFound,
  validationError,
} from '@billing/contracts';
import { type RefundOrder, decideOrderRefund, decideOrderSettlement, orderRefunded } from '../refunds/order';
import type { SettleRefund } from '../refunds/refund';
import { sessionTradeOf } from '../payments/session-trade';
import { toSessionResource } from './resource';
import type {
  Buyer,
  CardSummary,
  CheckoutSessionCreatedData,
  ExternalProcessor,
  Session,
  SessionEvent,
  SessionState,
} from './session';
import { chargeKeyOf, evolve } from './session';

/** A charge that has not ended after this long is taken as crashed: another attempt may start. */
export const STALE_ATTEMPT_MS = 60_000;

export type CreateSession = { type: 'CreateSession'; data: CheckoutSessionCreatedData };

export type StartPayment = {
  type: 'StartPayment';
  data: {
    sessionId: string;
    attemptId: string;
    buyer?: Buyer;
    processor?: ExternalProcessor;
    /**
     * What the caller will charge, as it read the session: another amount now (a promotion code
     * changed since) is 409 and nothing starts, so that nobody is charged what they were not shown.
     */
    amount?: number;
    now: Date;
  };
};
/**
 * The processor opened an ATM account or a convenience-store code under the pending charge's
 * key: the session waits for its payment. The same trade again records nothing.
 */
/** A processor reported a payment the session cannot take: recorded once per trade, for a refund by hand. */
export type RecordUnmatchedPayment = {
  type: 'RecordUnmatchedPayment';
  data: {
    processor: AsyncPaymentProcessor;
    tradeNo: string;
    amount: number;
    reason: UnmatchedPaymentReason;
    now: Date;
  };
};
export type RecordAsyncPayment = {
  type: 'RecordAsyncPayment';
  data: {
    chargeKey: string;
    processor: AsyncPaymentProcessor;
    tradeNo: string;
    instructions: PaymentInstructions;
    now: Date;
  };
};

export type FailPayment = {
  type: 'FailPayment';
  data: {
    attemptId: string;
    code: string;
    message: string;
    requiresAction: boolean;
    /** The processor gave no answer: the charge may have happened (the next attempt keeps the key). */
    outcomeUnknown?: boolean;
    now: Date;
  };
};

/** The processor charged under `chargeKey` (or there was nothing to charge): recorded before completing. */
export type RecordCharge = {
  type: 'RecordCharge';
  data: { attemptId: string; chargeKey: string; paymentMethod: CardSummary | null; buyer: Buyer; now: Date };
};

/** Completes a session from its recorded charge; a session already complete is left alone. */
export type CompleteSession = {
  type: 'CompleteSession';
  data: {
    /** SUBSCRIPTION mode: the id billing gives the subscription it starts. */
    subscriptionId: string | null;
    now: Date;
  };
};

export type ExpireSession = {
  type: 'ExpireSession';
  data: {
    now: Date;
    /**
     * The charge key the processor was asked about and said it never charged. A session whose
     * last charge has no recorded outcome expires only with its current key here.
     */
    unchargedKey?: string;
  };
};

/**
 * Applies (a reserved redemption) or removes (null) the promotion code of an open checkout that
 * nobody is paying. A code whose bonus trial days would change what is charged today is refused:
 * the checkout was made for a charge now, or for saving a card (422). The same reservation again
 * records nothing.
 */
export type ChangePromotion = {
  type: 'ChangePromotion';
  data: {
    code: string | null;
    redemption: ReservedRedemption | null;
    /**
     * The redemption the caller saw on the checkout (null: none). Another one there now means a
     * change made at the same time came first: 409, and nothing changes.
     */
    replacing?: string | null;
    now: Date;
  };
};

/**
 * Records the buyer's e-invoice choice of the hosted page on an open checkout that was not
 * charged, in place of the merchant's (`einvoice` at creation); the same choice again records
 * nothing. Its format is checked again here (422).
 */
export type ChooseEinvoice = { type: 'ChooseEinvoice'; data: { einvoice: Einvoice; now: Date } };

export type LinkSubscription = { type: 'LinkSubscription'; data: { subscriptionId: string; now: Date } };

/** Asked after the processor gave the money back; the refund itself is the caller's. */
export type RecordRefund = { type: 'RecordRefund'; data: { reason: string; now: Date } };

export type SessionCommand =
  | CreateSession
  | ChangePromotion
  | ChooseEinvoice
  | StartPayment
  | FailPayment
  | RecordAsyncPayment
  | RecordUnmatchedPayment
  | RecordCharge
  | CompleteSession
  | ExpireSession
  | LinkSubscription
  | RecordRefund
  | RefundOrder
  | SettleRefund;

export function decide(command: SessionCommand, state: SessionState): SessionEvent[] {
  switch (command.type) {
    case 'CreateSession':
      if (state.status !== 'Empty') throw conflict(`Checkout session ${command.data.session_id} already exists`);
      return [{ type: 'CheckoutSessionCreated', data: command.data }];
    case 'StartPayment':
      return startPayment(command, state);
    case 'FailPayment':
      return failPayment(command, state);
    case 'RecordAsyncPayment':
      return recordAsyncPayment(command, state);
    case 'RecordUnmatchedPayment':
      return recordUnmatchedPayment(command, state);
    case 'RecordCharge':
      return recordCharge(command, state);
    case 'CompleteSession':
      return complete(command, state);
    case 'ChangePromotion':
      return changePromotion(command, state);
    case 'ChooseEinvoice':
      return chooseEinvoice(command, state);
    case 'ExpireSession':
      return expire(command, state);
    case 'LinkSubscription':
      return linkSubscription(command, state);
    case 'RecordRefund':
      return recordRefund(command, state);
    case 'RefundOrder':
      return decideOrderRefund(command, state);
    case 'SettleRefund':
      return decideOrderSettlement(command, state);
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

/** OPEN and not past `expires_at` on the clock the command brings. */
export const isPayable = (session: Session, now: Date) =>
  session.status === 'OPEN' && now.getTime() < Date.parse(session.expires_at);

function existing(state: SessionState, id: string): Session {
  if (state.status === 'Empty') throw notFound(`No such checkout session: ${id}`);
  return state.session;
}

function startPayment({ data }: StartPayment, state: SessionState): SessionEvent[] {
  const session = existing(state, data.sessionId);
  // A recorded charge only completes (`CompleteSession`): it is never charged again.
  if (session.status === 'COMPLETE' || session.charge) throw conflict('This checkout session is already paid');
  if (!isPayable(session, data.now)) throw conflict('This checkout session has expired');
  if (session.async_payment) throw conflict('This checkout session waits for its ATM or convenience-store payment');
  const attempt = session.attempt;
  if (attempt && data.now.getTime() - Date.parse(attempt.started_at) < STALE_ATTEMPT_MS) {
    throw conflict('A payment for this checkout session is already in progress');
  }
  if (data.amount !== undefined && data.amount !== session.intent.amount) {
    throw conflict('The total of this checkout changed; nothing was charged. Check the new total and pay again');
  }
  return [
    {
      type: 'PaymentAttemptStarted',
      data: {
        session_id: session.id,
        attempt_id: data.attemptId,
        // A stale attempt taken over keeps its key: if it charged, this attempt gets that charge.
        charge_key: chargeKeyOf(session),
        ...(data.buyer ? { buyer: data.buyer } : {}),
        ...(data.processor ? { processor: data.processor } : {}),
        started_at: data.now.toISOString(),
      },
    },
  ];
}

/** Only the attempt under way ends; a late answer of a superseded attempt changes nothing. */
function ownAttempt(state: SessionState, attemptId: string): Session | null {
  if (state.status === 'Empty') return null;
  const { session } = state;
  return session.status === 'OPEN' && session.attempt?.id === attemptId ? session : null;
}

function failPayment({ data }: FailPayment, state: SessionState): SessionEvent[] {
  const session = ownAttempt(state, data.attemptId);
  if (!session) return [];
  return [
    {
      type: 'PaymentAttemptFailed',
      data: {
        session_id: session.id,
        attempt_id: data.attemptId,
        code: data.code,
        message: data.message,
        requires_action: data.requiresAction,
        ...(data.outcomeUnknown ? { outcome_unknown: true } : {}),
        failed_at: data.now.toISOString(),
      },
    },
  ];
}

function recordAsyncPayment({ data }: RecordAsyncPayment, state: SessionState): SessionEvent[] {
  if (state.status === 'Empty') throw notFound('No such checkout session');
  const { session } = state;
  if (session.async_payment?.trade_no === data.tradeNo) return [];
  const pending = session.pending_charge;
  if (session.status !== 'OPEN' || session.charge || !pending || pending.key !== data.chargeKey) {
    throw conflict(`Checkout session ${session.id} is not waiting for trade ${data.tradeNo}`);
  }
  return withResource(state, data.now, {
    type: 'CheckoutAsyncPaymentPending',
    data: {
      session_id: session.id,
      attempt_id: pending.attempt_id,
      charge_key: pending.key,
      processor: data.processor,
      trade_no: data.tradeNo,
      instructions: data.instructions,
      issued_at: data.now.toISOString(),
      customer_email: session.customer_email ?? pending.buyer?.email ?? null,
      locale: session.locale ?? pending.buyer?.locale ?? null,
    },
  });
}

function recordUnmatchedPayment({ data }: RecordUnmatchedPayment, state: SessionState): SessionEvent[] {
  if (state.status === 'Empty') throw notFound('No such checkout session');
  const { session } = state;
  if (session.unmatched_trades?.includes(data.tradeNo)) return [];
  return [
    {
      type: 'CheckoutPaymentUnmatched',
      data: {
        session_id: session.id,
        order_id: session.order.id,
        processor: data.processor,
        trade_no: data.tradeNo,
        amount: data.amount,
        reason: data.reason,
        detected_at: data.now.toISOString(),
      },
    },
  ];
}

/**
 * Records the charge of the session's current key, whichever attempt asked (a superseded one
 * got the same charge under the same key); the same charge again records nothing. A charge
 * the session cannot take (another key, a session expired or completed without it) is refused:
 * the caller logs it as a charge to refund.
 */
function recordCharge({ data }: RecordCharge, state: SessionState): SessionEvent[] {
  if (state.status === 'Empty') throw notFound('No such checkout session');
  const { session } = state;
  if (session.charge?.key === data.chargeKey) return [];
  if (session.status !== 'OPEN' || session.charge) {
    throw conflict(`Checkout session ${session.id} is ${session.status} and cannot take charge ${data.chargeKey}`);
  }
  if (data.chargeKey !== chargeKeyOf(session)) {
    throw conflict(`Charge ${data.chargeKey} is not the current charge of checkout session ${session.id}`);
  }
  return [
    {
      type: 'PaymentAttemptSucceeded',
      data: {
        session_id: session.id,
        attempt_id: data.attemptId,
        charge_key: data.chargeKey,
        payment_method: data.paymentMethod,
        buyer: data.buyer,
        succeeded_at: data.now.toISOString(),
      },
    },
  ];
}

function changePromotion({ data }: ChangePromotion, state: SessionState): SessionEvent[] {
  const session = existing(state, '');
  if (session.status === 'COMPLETE' || session.charge) throw conflict('This checkout is already paid');
  if (!isPayable(session, data.now)) throw conflict('This checkout has expired');
  if (session.attempt && data.now.getTime() - Date.parse(session.attempt.started_at) < STALE_ATTEMPT_MS) {
    throw conflict('A payment for this checkout is in progress');
  }
  if (session.async_payment) throw conflict('This checkout waits for its ATM or convenience-store payment');
  // A charge under the current key may have been made for the amount it had: it must stay.
  if (session.pending_charge) throw conflict('A payment for this checkout may have been made; its answer is awaited');
  const { redemption } = data;
  if (redemption === null && session.redemption_id === null) return [];
  if (redemption && redemption.redemption_id === session.redemption_id) return [];
  if (data.replacing !== undefined && data.replacing !== session.redemption_id) {
    throw conflict('The promotion code of this checkout was changed at the same time; check the total and try again');
  }
  const trialDays =
    session.mode === 'SUBSCRIPTION'
      ? (session.product.trial_days ?? 0) + (redemption?.discount.bonus_trial_days ?? 0)
      : 0;
  const savesCardOnly = session.mode === 'SETUP' || trialDays > 0;
  if (savesCardOnly !== (session.intent.kind === 'setup_intent') || trialDays !== (session.trial_days ?? 0)) {
    throw validationError(
      [
        {
          path: 'code',
          code: 'changes_trial',
          message: 'This code changes the free trial; start a new checkout with it',
        },
      ],
      'The promotion code cannot be applied to this checkout',
    );
  }
  const subtotal = session.order.amount_subtotal;
  const total = savesCardOnly ? 0 : (redemption?.amount_after_discount ?? subtotal);
  return [
    {
      type: 'PromotionCodeChanged',
      data: {
        session_id: session.id,
        promotion_code: redemption ? data.code : null,
        promotion_code_id: redemption?.promotion_code_id ?? null,
        redemption_id: redemption?.redemption_id ?? null,
        discount: redemption?.discount ?? null,
        coupon: redemption?.coupon ?? null,
        coupon_name: redemption?.coupon_name ?? null,
        amount_subtotal: subtotal,
        discount_amount: subtotal - total,
        amount_total: total,
        requires_payment_method: savesCardOnly || session.collect_payment_method === 'always' || total > 0,
        changed_at: data.now.toISOString(),
      },
    },
  ];
}

function chooseEinvoice({ data }: ChooseEinvoice, state: SessionState): SessionEvent[] {
  const session = existing(state, '');
  if (session.status === 'COMPLETE' || session.charge) throw conflict('This checkout is already paid');
  if (!isPayable(session, data.now)) throw conflict('This checkout has expired');
  const violations = einvoiceViolations(data.einvoice);
  if (violations.length > 0) throw validationError(violations, 'The e-invoice choice is not valid');
  if (sameEinvoice(session.einvoice, data.einvoice)) return [];
  return [
    {
      type: 'EinvoiceChosen',
      data: { session_id: session.id, einvoice: data.einvoice, chosen_at: data.now.toISOString() },
    },
  ];
}

/** The same choice whatever the order of its fields (the merchant's came as JSON). */
const sameEinvoice = (a: Einvoice | null | undefined, b: Einvoice) =>
  JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b).sort());

/** From the recorded charge only: a session is complete exactly when it was charged. */
function complete({ data }: CompleteSession, state: SessionState): SessionEvent[] {
  if (state.status === 'Empty') throw notFound('No such checkout session');
  const { session } = state;
  if (session.status === 'COMPLETE') return [];
  const charge = session.charge;
  if (session.status !== 'OPEN' || !charge) {
    throw new ApiError(409, 'conflict', 'This checkout session has no recorded charge to complete');
  }
  const { buyer } = charge;
  const completedAt = data.now.toISOString();
  return withResource(state, data.now, {
    type: 'CheckoutSessionCompleted',
    data: {
      session_id: session.id,
      order_id: session.order.id,
      organization: session.organization,
      environment: session.environment,
      mode: session.mode,
      customer_id: buyer.customer_id ?? session.customer_id,
      subscription_id: data.subscriptionId,
      test_clock: session.test_clock ?? null,
      trial_days: session.trial_days ?? 0,
      coupon: session.coupon ?? null,
      customer_email: session.customer_email ?? buyer.email,
      customer_name: session.customer_name ?? buyer.name,
      external_customer_id: session.external_customer_id,
      locale: session.locale ?? buyer.locale ?? null,
      product_id: session.product.id,
      product: session.product,
      amount_subtotal: session.order.amount_subtotal,
      amount_total: session.order.amount_total,
      discount_amount: session.order.discount_amount,
      currency: 'TWD',
      promotion_code_id: session.promotion_code_id,
      redemption_id: session.redemption_id,
      payment_intent_id: session.intent.kind === 'payment_intent' ? session.intent.id : null,
      setup_intent_id: session.intent.kind === 'setup_intent' ? session.intent.id : null,
      metadata: session.metadata,
      einvoice: session.einvoice,
      payment_method: charge.payment_method,
      ...(session.order.amount_total > 0 ? { charge: sessionTradeOf(charge.processor, charge.key) } : {}),
      completed_at: completedAt,
    },
  });
}

/**
 * Idempotent: a session that is not OPEN, or not yet due, or being charged right now, is left
 * alone; so is one that was charged (it completes instead), and one whose last charge has no
 * recorded outcome until the processor said it never charged its key (`unchargedKey`).
 */
function expire({ data }: ExpireSession, state: SessionState): SessionEvent[] {
  if (state.status === 'Empty') return [];
  const { session } = state;
  if (session.status !== 'OPEN' || isPayable(session, data.now) || session.charge) return [];
  if (session.attempt && data.now.getTime() - Date.parse(session.attempt.started_at) < STALE_ATTEMPT_MS) return [];
  if (session.pending_charge && data.unchargedKey !== session.pending_charge.key) return [];
  const expired = withResource(state, data.now, {
    type: 'CheckoutSessionExpired',
    data: {
      session_id: session.id,
      redemption_id: session.redemption_id,
      order_id: session.order.id,
      expired_at: data.now.toISOString(),
    },
  });
  if (!session.async_payment) return expired;
  // The unpaid ATM or convenience-store payment expires first, then the session with it.
  const asyncExpired: SessionEvent = {
    type: 'CheckoutAsyncPaymentExpired',
    data: {
      session_id: session.id,
      trade_no: session.async_payment.trade_no,
      expired_at: data.now.toISOString(),
      object: (expired[0]!.data as { object?: CheckoutSession }).object,
    },
  };
  return [asyncExpired, ...expired];
}

/** Idempotent: the same subscription again, or a session not complete, changes nothing. */
function linkSubscription({ data }: LinkSubscription, state: SessionState): SessionEvent[] {
  if (state.status === 'Empty') return [];
  const { session } = state;
  if (session.status !== 'COMPLETE' || session.subscription_id === data.subscriptionId) return [];
  return [
    {
      type: 'SubscriptionLinked',
      data: { session_id: session.id, subscription_id: data.subscriptionId, linked_at: data.now.toISOString() },
    },
  ];
}

/** Only a PAID order is refunded, once. */
function recordRefund({ data }: RecordRefund, state: SessionState): SessionEvent[] {
  if (state.status === 'Empty' || state.session.order.status !== 'PAID') return [];
  return [orderRefunded(state.session, data.reason, data.now)];
}

/** Public events carry the session as the API shows it after the change. */
function withResource(state: SessionState, now: Date, event: SessionEvent): SessionEvent[] {
  const after = evolve(state, event);
  if (after.status === 'Empty') return [event];
  return [{ ...event, data: { ...event.data, object: toSessionResource(after.session, now) } } as SessionEvent];
}
