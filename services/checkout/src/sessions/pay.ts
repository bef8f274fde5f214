import {
  ApiError,
  PayCheckoutSessionBody,
  conflict,
  newId,
  notFound,
  randomBase62,
  validationError,
  type ErrorDetail,
} from '@billing/contracts';
import { handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { validate } from '@billing/service';
import type { Express } from 'express';
import { dependenciesOf, serviceCaller } from '../dependencies';
import { SOLD_OUT_MESSAGE } from '../payment-links/link';
import { openedBySoldOutLink } from '../payment-links/queries';
import type { ChargeResult } from '../payments/processor';
import type { SessionCommand } from './decide';
import { findSession } from './queries';
import { statusAt } from './resource';
import { sessionAggregate, sessionProjector } from './routes';
import { successRedirect } from './rules';
import { type Session, sessionStream } from './session';
import { assignRedemption, refuseLiveSubscription, resolveBuyer } from './upstream';

const paymentRequired = (message: string, details?: ErrorDetail[]) => ApiError.of('payment_required', message, details);

/**
 * `POST /checkout/:session_id/pay`: the hosted page's pay call. No API key: the unguessable
 * session id is the capability (the gateway exposes it under its /checkout pages).
 *
 * Exactly one charge per session: a `PaymentAttemptStarted` is appended with the stream's
 * version before the processor is called, so of two concurrent submits one appends and the
 * other finds the attempt under way (409). The processor call is keyed by the attempt id.
 */
export type PayOutcome = { status: 'complete'; redirectUrl: string } | { status: 'requires_action' };

/**
 * Pays a session once: checks it can be paid, appends the attempt, charges, and completes or
 * records the failure. Declines throw 402, a paid or expired session 409, bad input 422.
 */
export async function paySession(
  context: ServiceContext,
  id: string,
  body: PayCheckoutSessionBody,
): Promise<PayOutcome> {
  const { store, now } = context;
  const { processor } = dependenciesOf(context);
  const project = sessionProjector(store.tables.schema);
  const run = (session: Session, command: SessionCommand) =>
    handleCommand(store, sessionStream(session.id), sessionAggregate, command, {
      organization: session.organization,
      environment: session.environment,
      occurredAt: now(),
      project,
    });

  const session = await findSession(store.database, store.tables.schema, id);
  if (!session) throw notFound(`No such checkout session: ${id}`);
  if (session.status === 'COMPLETE') throw conflict('This checkout session is already paid');
  if (statusAt(session, now()) === 'EXPIRED') throw conflict('This checkout session has expired');
  if (await openedBySoldOutLink(store.database, store.tables.schema, id)) throw conflict(SOLD_OUT_MESSAGE);
  const card = checkedInput(session, body);
  if (card) {
    const refusal = processor.refusal(session.environment);
    if (refusal) throw paymentRequired(refusal);
  }

  const customerId = await buyerAtPayment(context, session, body);
  const attemptId = `pay_${randomBase62(24)}`;
  await run(session, { type: 'StartPayment', data: { sessionId: id, attemptId, now: now() } });
  let result: ChargeResult;
  try {
    result = card
      ? await processor.charge({
          idempotencyKey: attemptId,
          environment: session.environment,
          amount: session.intent.amount,
          card,
          challenge: body.challenge,
          now: now(),
        })
      : { status: 'succeeded', payment_method: null as never };
  } catch (error) {
    const message = 'The payment processor failed; nothing was charged';
    await run(session, {
      type: 'FailPayment',
      data: { attemptId, code: 'processing_error', message, requiresAction: false, now: now() },
    });
    throw error;
  }

  if (result.status === 'succeeded') {
    const completion: SessionCommand = {
      type: 'CompleteSession',
      data: {
        attemptId,
        email: body.email ?? null,
        name: body.name ?? null,
        paymentMethod: card ? result.payment_method : null,
        customerId,
        subscriptionId: session.mode === 'SUBSCRIPTION' ? newId('subscription') : null,
        now: now(),
      },
    };
    await run(session, completion).catch((error: unknown) => {
      // Charged, but superseded (a stale attempt taken over): a real processor must refund it.
      context.logger.error({ err: error, session: id, attempt: attemptId }, 'charged attempt could not complete');
      throw error;
    });
    return { status: 'complete', redirectUrl: successRedirect(session.success_url, id) };
  }
  const requiresAction = result.status === 'requires_action';
  const { code, message } =
    result.status === 'requires_action'
      ? { code: 'authentication_required', message: 'The card asks for a challenge step (3-D Secure)' }
      : result;
  await run(session, { type: 'FailPayment', data: { attemptId, code, message, requiresAction, now: now() } });
  if (requiresAction) return { status: 'requires_action' };
  throw paymentRequired(message, [{ path: 'card_number', code, message }]);
}

/**
 * `POST /checkout/:session_id/pay`: the pay call for pages that post JSON. No API key: the
 * unguessable session id is the capability (the gateway exposes it under its /checkout pages).
 *
 * Exactly one charge per session: a `PaymentAttemptStarted` is appended with the stream's
 * version before the processor is called, so of two concurrent submits one appends and the
 * other finds the attempt under way (409). The processor call is keyed by the attempt id.
 */
export function mountPayRoute(app: Express, context: ServiceContext): void {
  app.post('/checkout/:session_id/pay', validate({ body: PayCheckoutSessionBody.default({}) }), async (req, res) => {
    const outcome = await paySession(context, String(req.params.session_id), res.locals.input.body);
    if (outcome.status === 'complete') res.json({ status: 'complete', redirect_url: outcome.redirectUrl });
    else res.json({ status: 'requires_action', next_action: { type: 'challenge' } });
  });
}

/**
 * Who pays, settled before anything is charged: billing's customer for the session's names and
 * the email typed on the page, created now for a new buyer, so that the charge, the order, the
 * redemption and the subscription all name one customer. A live subscription to the product is
 * refused (409), and so is a promotion code the customer has used up (422). Billing or
 * promotions down is 503 with nothing charged. Without billing configured (a checkout run
 * alone) the buyer stays unnamed and billing provisions them by email after the payment.
 */
async function buyerAtPayment(
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
  });
  refuseLiveSubscription(buyer);
  if (!buyer.customer) throw new ApiError(503, 'service_unavailable', 'billing did not name the customer');
  if (session.redemption_id) {
    await assignRedemption(deps.promotions(), caller, session.redemption_id, buyer.customer);
  }
  return buyer.customer.id;
}

/** The email is needed unless prefilled; a card unless the session needs no payment method. */
function checkedInput(session: Session, body: PayCheckoutSessionBody) {
  const details: ErrorDetail[] = [];
  const required = (path: string) => details.push({ path, code: 'required', message: `${path} is required` });
  if (!session.customer_email && !body.email) required('email');
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
