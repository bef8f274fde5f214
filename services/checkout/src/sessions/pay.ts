import {
  ApiError,
  DIRECT_SUBSCRIPTION_METADATA_KEY,
  isIdOf,
  PayCheckoutSessionBody,
  conflict,
  newId,
  notFound,
  randomBase62,
  validationError,
  type ErrorDetail,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { validate } from '@billing/service';
import type { Express } from 'express';
import { dependenciesOf, serviceCaller } from '../dependencies';
import { SOLD_OUT_MESSAGE } from '../payment-links/link';
import { openedBySoldOutLink } from '../payment-links/queries';
import type { ChargeResult, CollectedCard } from '../payments/processor';
import { refuseUnlessChargeable } from '../payments/settings/refusal';
import type { StoredProcessor } from '../payments/settings/aggregate';
import { STALE_ATTEMPT_MS, type SessionCommand } from './decide';
import { type KnownSession, runSessionCommands } from './command';
import { findSessionRow } from './queries';
import { statusAt } from './resource';
import { successRedirect } from './rules';
import { type Buyer, type CardSummary, type Session, buyerOf, chargeKeyOf } from './session';
import { assignRedemption, refuseLiveSubscription, resolveBuyer } from './upstream';

const paymentRequired = (message: string, details?: ErrorDetail[]) => ApiError.of('payment_required', message, details);

/**
 * `POST /checkout/:session_id/pay`: the hosted page's pay call. No API key: the unguessable
 * session id is the capability (the gateway exposes it under its /checkout pages).
 *
 * Exactly one charge per session (docs/decisions/0006-one-charge-per-session.md):
 * - a `PaymentAttemptStarted` is appended with the stream's version before the processor is
 *   called, so of two concurrent submits one appends and the other finds the attempt under
 *   way (409);
 * - the processor call is keyed by the session's intent and the number of attempts the
 *   processor declined (`chargeKeyOf`), not by the attempt: a retry after a crash, a lost
 *   answer or any failure after the charge asks under the same key and gets the first charge;
 * - the charge is recorded (`PaymentAttemptSucceeded`) before the completion, so a session
 *   whose completion failed completes from that record on the next pay call or sweep, and is
 *   never charged again.
 */
export type PayOutcome =
  { status: 'complete'; redirectUrl: string | null; session: Session } | { status: 'requires_action' };

/**
 * Pays a session once: checks it can be paid, appends the attempt, charges, records the charge
 * and completes, or records the failure. A session charged already is completed from its
 * recorded charge, without the processor. Declines throw 402, a paid or expired session 409,
 * bad input 422.
 */
/**
 * How the card comes: typed into the hosted page (in `body`), or entered in the card form of an
 * embedded checkout. A session is paid only the way it was made for (another way is 404).
 */
/** Where the buyer pays, and in which language that page spoke to them (`Buyer.locale`). */
export type PaidThrough = ({ uiMode: 'hosted' } | { uiMode: 'embedded'; card: CollectedCard | null }) & {
  locale?: Buyer['locale'];
  /** The organization's processor settings, when the caller read them for this payment already. */
  processor?: StoredProcessor;
};

export async function paySession(
  context: ServiceContext,
  id: string,
  body: PayCheckoutSessionBody,
  through: PaidThrough = { uiMode: 'hosted' },
  loaded?: KnownSession & { session: Session },
): Promise<PayOutcome> {
  const { store, now } = context;
  const { processor } = dependenciesOf(context);
  const found = loaded ?? (await findSessionRow(store.database, store.tables.schema, id));
  const session = found?.session;
  if (!found || !session || (session.ui_mode ?? 'hosted') !== through.uiMode) {
    throw notFound(`No such checkout session: ${id}`);
  }
  // Each command starts from the session as the last one left it: no read of the stream or row.
  let known: KnownSession | null = found;
  const run = async (...commands: SessionCommand[]) => {
    const result = await runSessionCommands(context, id, known, commands, {
      organization: session.organization,
      environment: session.environment,
      occurredAt: now(),
    });
    known = result.known;
    return result;
  };
  if (session.status === 'COMPLETE') throw conflict('This checkout session is already paid');
  if (session.charge) return completeCharged(context, session, found);
  if (statusAt(session, now()) === 'EXPIRED') throw conflict('This checkout session has expired');
  const chargedMeanwhile = await completeFromAttemptUnderWay(context, session);
  if (chargedMeanwhile) return chargedMeanwhile;
  if (await openedBySoldOutLink(store.database, store.tables.schema, session)) throw conflict(SOLD_OUT_MESSAGE);
  const card = checkedInput(session, body, through);
  if (card) await refuseUnlessChargeable(context, session.organization, session.environment, through.processor);

  const customerId = await buyerAtPayment(context, session, body);
  const attemptId = `pay_${randomBase62(24)}`;
  const buyer = buyerOf({ email: body.email, name: body.name, locale: through.locale }, customerId);
  const amount = session.intent.amount;
  const started = await run({ type: 'StartPayment', data: { sessionId: id, attemptId, buyer, amount, now: now() } });
  const chargeKey = chargeKeyOf(started.state.status === 'Exists' ? started.state.session : session);
  let result: ChargeResult;
  try {
    result = card
      ? await processor.charge({
          idempotencyKey: chargeKey,
          environment: session.environment,
          amount,
          card,
          challenge: body.challenge,
          now: now(),
        })
      : { status: 'succeeded', payment_method: null as never };
  } catch (error) {
    // No answer: the charge may have happened. The next attempt asks under the same key.
    const message = 'The payment processor did not answer; paying again cannot charge twice';
    await run({
      type: 'FailPayment',
      data: { attemptId, code: 'processing_error', message, requiresAction: false, outcomeUnknown: true, now: now() },
    });
    throw error;
  }

  if (result.status === 'succeeded') {
    const paymentMethod = card ? result.payment_method : null;
    const recordCharge: SessionCommand = {
      type: 'RecordCharge',
      data: { attemptId, chargeKey, paymentMethod, buyer, now: now() },
    };
    const completedAtOnce = await recordAndComplete(context, session, known, recordCharge);
    if (completedAtOnce) return completedAtOnce;
    const recorded = await runSessionCommands(context, id, null, [recordCharge], {
      organization: session.organization,
      environment: session.environment,
      occurredAt: now(),
    }).catch((error: unknown) => {
      // The processor keeps the charge under `chargeKey`: the next attempt gets it, never a second.
      context.logger.error({ err: error, session: id, attempt: attemptId }, 'charge not recorded; a retry answers it');
      throw error;
    });
    const charged = recorded.state.status === 'Exists' ? recorded.state.session : session;
    return completeCharged(context, charged, recorded.known);
  }
  const requiresAction = result.status === 'requires_action';
  const { code, message } =
    result.status === 'requires_action'
      ? { code: 'authentication_required', message: 'The card asks for a challenge step (3-D Secure)' }
      : result;
  await run({ type: 'FailPayment', data: { attemptId, code, message, requiresAction, now: now() } });
  if (requiresAction) return { status: 'requires_action' };
  throw paymentRequired(message, [{ path: 'card_number', code, message }]);
}

/**
 * A pay call that meets an attempt under way, before the buyer is told to wait (409): that
 * attempt's answer may have been lost (its process died after the charge, before recording it).
 * The processor is asked under the attempt's key; a charge it holds is recorded and completes
 * the session, and nothing is charged again. Not charged, or no answer: null, and the attempt
 * stands. ECPay's and PAYUNi's pages are settled by their notifications and the sweep.
 */
async function completeFromAttemptUnderWay(context: ServiceContext, session: Session): Promise<PayOutcome | null> {
  const { attempt, pending_charge: pending } = session;
  if (!attempt || !pending || pending.processor) return null;
  const at = context.now();
  if (at.getTime() - Date.parse(attempt.started_at) >= STALE_ATTEMPT_MS) return null;
  const answer = await dependenciesOf(context)
    .processor.lookup(pending.key)
    .catch(() => null);
  if (answer?.status !== 'succeeded') return null;
  context.logger.warn(
    { session: session.id, attempt: pending.attempt_id },
    'a pay call found the charge of an attempt under way',
  );
  return completedOutcome(await recordProcessorCharge(context, session, answer.payment_method));
}

/**
 * The processor holds a charge under the session's pending key (its notification, a status query,
 * a retry that asked): the charge is recorded (once), with what charges the subscription later
 * when there is one, and the session completed. Answers the session after it.
 */
export async function recordProcessorCharge(
  context: ServiceContext,
  session: Session,
  paymentMethod: CardSummary | null,
): Promise<Session> {
  const { now } = context;
  const pending = session.pending_charge;
  if (pending && !session.charge) {
    const recordCharge: SessionCommand = {
      type: 'RecordCharge',
      data: {
        attemptId: pending.attempt_id,
        chargeKey: pending.key,
        paymentMethod,
        buyer: pending.buyer ?? { email: null, name: null, customer_id: null },
        now: now(),
      },
    };
    await runSessionCommands(context, session.id, null, [recordCharge], {
      organization: session.organization,
      environment: session.environment,
      occurredAt: now(),
    });
  }
  const recorded = await findSessionRow(context.store.database, context.store.tables.schema, session.id);
  if (!recorded?.session || recorded.session.status !== 'OPEN') return recorded?.session ?? session;
  const outcome = await completeCharged(context, recorded.session, recorded);
  return outcome.status === 'complete' ? outcome.session : recorded.session;
}

/**
 * The charge recorded and the session completed in one transaction, the usual case. When that
 * fails for any reason (nothing of it is then written), null: the caller records the charge on
 * its own first and completes after, so that a completion that cannot be written never keeps
 * the charge from being recorded.
 */
async function recordAndComplete(
  context: ServiceContext,
  session: Session,
  known: KnownSession | null,
  recordCharge: SessionCommand,
): Promise<PayOutcome | null> {
  if (!known) return null;
  const { now } = context;
  try {
    const { state } = await runSessionCommands(
      context,
      session.id,
      known,
      [recordCharge, completeCommand(session, now())],
      { organization: session.organization, environment: session.environment, occurredAt: now() },
    );
    if (state.status !== 'Exists' || state.session.status !== 'COMPLETE') return null;
    return completedOutcome(state.session);
  } catch (error) {
    context.logger.warn({ err: error, session: session.id }, 'charge and completion not written together; one by one');
    return null;
  }
}

const completedOutcome = (session: Session): PayOutcome => ({
  status: 'complete',
  redirectUrl: session.success_url ? successRedirect(session.success_url, session.id) : null,
  session,
});

/** The completion of a charged session; a subscription gets its id now (or the one billing reserved). */
function completeCommand(session: Session, at: Date): SessionCommand {
  const subscriptionId =
    session.mode === 'SUBSCRIPTION' ? (reservedSubscriptionId(session) ?? newId('subscription')) : null;
  return { type: 'CompleteSession', data: { subscriptionId, now: at } };
}

/**
 * `POST /checkout/:session_id/pay`: the pay call for pages that post JSON. No API key: the
 * unguessable session id is the capability (the gateway exposes it under its /checkout pages).
 * One charge per session, as `paySession` says.
 */
export function mountPayRoute(app: Express, context: ServiceContext): void {
  app.post('/checkout/:session_id/pay', validate({ body: PayCheckoutSessionBody.default({}) }), async (req, res) => {
    const outcome = await paySession(context, String(req.params.session_id), res.locals.input.body);
    if (outcome.status === 'complete') res.json({ status: 'complete', redirect_url: outcome.redirectUrl });
    else res.json({ status: 'requires_action', next_action: { type: 'challenge' } });
  });
}

/**
 * Completes a session from its recorded charge: the pay call that charged, a later pay call
 * after that completion failed, or the sweep. Completing twice is a no-op; either way the
 * buyer goes to the success URL.
 */
export async function completeCharged(
  context: ServiceContext,
  session: Session,
  known: KnownSession | null = null,
): Promise<PayOutcome> {
  const { now } = context;
  const { state } = await runSessionCommands(context, session.id, known, [completeCommand(session, now())], {
    organization: session.organization,
    environment: session.environment,
    occurredAt: now(),
  }).catch((error: unknown) => {
    context.logger.error(
      { err: error, session: session.id },
      'charged session not completed yet; the next pay call or sweep completes it',
    );
    throw error;
  });
  return completedOutcome(state.status === 'Exists' ? state.session : session);
}

/**
 * Who pays, settled before anything is charged: billing's customer for the session's names and
 * the email typed on the page, created now for a new buyer, so that the charge, the order, the
 * redemption and the subscription all name one customer. A live subscription to the product is
 * refused (409), and so is a promotion code the customer has used up (422). Billing or
 * promotions down is 503 with nothing charged. Without billing configured (a checkout run
 * alone) the buyer stays unnamed and billing provisions them by email after the payment.
 */
export async function buyerAtPayment(
  context: ServiceContext,
  session: Session,
  body: PayCheckoutSessionBody,
): Promise<string | null> {
  const deps = dependenciesOf(context);
  if (!deps.billing) return null;
  const caller = serviceCaller(session.organization, session.environment);
  const buyer = await resolveBuyer(deps.billing, caller, {
    customer_id: session.customer_id ?? undefined,
    external_id: session.external_customer_id ?? undefined,
    email: session.customer_email ?? body.email,
    name: session.customer_name ?? body.name,
    create: true,
    product_id: session.mode === 'SUBSCRIPTION' ? session.product.id : undefined,
    test_clock: session.test_clock ?? undefined,
  });
  refuseLiveSubscription(buyer);
  if (!buyer.customer) throw new ApiError(503, 'service_unavailable', 'billing did not name the customer');
  if (session.redemption_id) {
    await assignRedemption(deps.promotions(), caller, session.redemption_id, buyer.customer);
  }
  return buyer.customer.id;
}

/** The email is needed unless prefilled; a card unless the session needs no payment method. */
function checkedInput(session: Session, body: PayCheckoutSessionBody, through: PaidThrough) {
  const details: ErrorDetail[] = [];
  const required = (path: string) => details.push({ path, code: 'required', message: `${path} is required` });
  if (!session.customer_email && !body.email) required('email');
  if (through.uiMode === 'embedded') {
    if (session.requires_payment_method && !through.card) {
      details.push({ path: 'card', code: 'required', message: 'Enter a card in the card form first' });
    }
    if (details.length > 0) throw validationError(details);
    return session.requires_payment_method ? through.card : null;
  }
  if (session.requires_payment_method) {
    if (!body.card_number) required('card_number');
    if (!body.exp) required('exp');
    if (!body.cvc) required('cvc');
  }
  if (details.length > 0) throw validationError(details);
  return session.requires_payment_method
    ? { number: body.card_number!.replace(/\s+/g, ''), exp: body.exp!, cvc: body.cvc! }
    : null;
}

/**
 * A subscription billing created directly and left INCOMPLETE for this session reserved its id
 * in the session's metadata (`billing_subscription_id`, docs/plan-switching.md): the paid
 * session starts that subscription.
 */
function reservedSubscriptionId(session: Session): string | null {
  const id = session.metadata?.[DIRECT_SUBSCRIPTION_METADATA_KEY];
  return id && isIdOf('subscription', id) ? id : null;
}
