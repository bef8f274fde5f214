import { ApiError, conflict, notFound } from '@billing/contracts';
import type { CardSummary, CheckoutSessionCreatedData, Session, SessionEvent, SessionState } from './session';
import { evolve, initialState } from './session';

/** A charge that has not ended after this long is taken as crashed: another attempt may start. */
export const STALE_ATTEMPT_MS = 60_000;

export type CreateSession = { type: 'CreateSession'; data: CheckoutSessionCreatedData };

export type StartPayment = {
  type: 'StartPayment';
  data: { sessionId: string; attemptId: string; now: Date };
};

export type FailPayment = {
  type: 'FailPayment';
  data: { attemptId: string; code: string; message: string; requiresAction: boolean; now: Date };
};

export type CompleteSession = {
  type: 'CompleteSession';
  data: {
    attemptId: string;
    /** Collected on the page; a prefilled value is never overwritten. */
    email: string | null;
    name: string | null;
    paymentMethod: CardSummary | null;
    now: Date;
  };
};

export type ExpireSession = { type: 'ExpireSession'; data: { now: Date } };

export type SessionCommand = CreateSession | StartPayment | FailPayment | CompleteSession | ExpireSession;

export function decide(command: SessionCommand, state: SessionState): SessionEvent[] {
  switch (command.type) {
    case 'CreateSession':
      if (state.status !== 'Empty') throw conflict(`Checkout session ${command.data.session_id} already exists`);
      return [{ type: 'CheckoutSessionCreated', data: command.data }];
    case 'StartPayment':
      return startPayment(command, state);
    case 'FailPayment':
      return failPayment(command, state);
    case 'CompleteSession':
      return complete(command, state);
    case 'ExpireSession':
      return expire(command, state);
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
  if (session.status === 'COMPLETE') throw conflict('This checkout session is already paid');
  if (!isPayable(session, data.now)) throw conflict('This checkout session has expired');
  const attempt = session.attempt;
  if (attempt && data.now.getTime() - Date.parse(attempt.started_at) < STALE_ATTEMPT_MS) {
    throw conflict('A payment for this checkout session is already in progress');
  }
  return [
    {
      type: 'PaymentAttemptStarted',
      data: { session_id: session.id, attempt_id: data.attemptId, started_at: data.now.toISOString() },
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
        failed_at: data.now.toISOString(),
      },
    },
  ];
}

function complete({ data }: CompleteSession, state: SessionState): SessionEvent[] {
  const session = ownAttempt(state, data.attemptId);
  if (!session) throw new ApiError(409, 'conflict', 'This payment attempt is no longer current');
  const completedAt = data.now.toISOString();
  return [
    {
      type: 'CheckoutSessionCompleted',
      data: {
        session_id: session.id,
        order_id: session.order.id,
        organization: session.organization,
        environment: session.environment,
        mode: session.mode,
        customer_id: null,
        customer_email: session.customer_email ?? data.email,
        customer_name: session.customer_name ?? data.name,
        external_customer_id: session.external_customer_id,
        product_id: session.product.id,
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
        payment_method: data.paymentMethod,
        completed_at: completedAt,
      },
    },
  ];
}

/** Idempotent: a session that is not OPEN, or not yet due, or being charged right now, is left alone. */
function expire({ data }: ExpireSession, state: SessionState): SessionEvent[] {
  if (state.status === 'Empty') return [];
  const { session } = state;
  if (session.status !== 'OPEN' || isPayable(session, data.now)) return [];
  if (session.attempt && data.now.getTime() - Date.parse(session.attempt.started_at) < STALE_ATTEMPT_MS) return [];
  return [
    {
      type: 'CheckoutSessionExpired',
      data: {
        session_id: session.id,
        redemption_id: session.redemption_id,
        order_id: session.order.id,
        expired_at: data.now.toISOString(),
      },
    },
  ];
}

/** The session decider: pure, for tests (`deciderSpec`) and for `handleCommand`. */
export const sessionDecider = { initialState, evolve, decide };
