import { ApiError, conflict, notFound, randomBase62, validationError } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { openedBySoldOutLink } from '../payment-links/queries';
import { SOLD_OUT_MESSAGE } from '../payment-links/link';
import {
  CardChargeUnanswered,
  type PayuniCard,
  type PayuniCardOutcome,
  type PayuniCardFields,
  payuniScriptUrl,
  authorizeEmbeddedCard,
  readCardNotification,
  requestSdkToken,
} from '../payments/payuni/embed';
import { RejectedNotification } from '../payments/payuni/notifications';
import type { PayuniMerchant } from '../payments/payuni/merchant';
import { queryPayuniTrade } from '../payments/payuni/query';
import { payuniTradeNo } from '../payments/payuni/upp';
import { payuniCardShown } from '../payments/payuni-saved-cards';
import { payuniMerchantOf, processorMerchantFrom } from '../payments/settings/merchant-of';
import { VERIFICATION_AMOUNT, giveBackVerification, noteVerification } from '../payments/payuni-verifications';
import type { StoredProcessor } from '../payments/settings/aggregate';
import { type KnownSession, runSessionCommands } from './command';
import { sessionAtProcessor } from './pay-async';
import { codeMethodOfPaymentType } from './pay-payuni-codes';
import { payuniCodeMethod } from '../payments/payuni-invoice-codes';
import type { SessionCommand } from './decide';
import { type PayOutcome, buyerAtPayment, completeCharged } from './pay';
import { findSessionRow } from './queries';
import { statusAt } from './resource';
import { successRedirect } from './rules';
import { type Buyer, type BuyerInput, type CardSummary, type Charged, type Session, buyerOf } from './session';

/**
 * Cards through PAYUNi (docs/payments.md): the buyer types the card into PAYUNi's card fields
 * (its `uni-payment.js`, on the hosted page or the merchant's page with the SDK), which bind
 * it to an SDK token at PAYUNi; checkout then charges that token (`merchant_trade`) under the
 * session's charge key, sends the buyer to the bank when 3-D Secure asks, and records the
 * result PAYUNi posts back. A subscription's card is kept at PAYUNi (a CreditHash under the
 * session's id as CreditToken) and charged again for renewals. The card never reaches the
 * platform.
 */

export type PayuniPayOutcome =
  { status: 'complete'; redirectUrl: string | null; session: Session } | { status: 'requires_action'; url: string };

/** The payer's id at PAYUNi for a card kept for renewals: the checkout session's. */
const creditTokenOf = (session: Session) => session.id;

/**
 * Opens PAYUNi's card fields for a session whose organization pays through PAYUNi; null when the
 * environment does not. `iframeDomain` is the origin of the page that shows the fields.
 */
export async function payuniCardFieldsFor(
  context: ServiceContext,
  session: Session,
  iframeDomain: string,
): Promise<PayuniCardFields | null> {
  const payuni = await payuniMerchantOf(context, session.organization, session.environment);
  return payuni ? openPayuniCardFields(context, session, payuni.merchant, iframeDomain) : null;
}

/** A token kept for another page view must last this long yet: time to type a card and pay. */
const TOKEN_REUSE_MARGIN_MS = 3 * 60_000;

/**
 * PAYUNi's card fields with an SDK token (PAYUNi's last ten minutes), remembered as the one the
 * next payment charges: the session's last one when no charge was asked with it and it lasts a
 * few minutes more, else a new one, so that reloading a page does not ask PAYUNi each time.
 */
export async function openPayuniCardFields(
  context: ServiceContext,
  session: Session,
  merchant: PayuniMerchant,
  iframeDomain: string,
): Promise<PayuniCardFields> {
  const records = dependenciesOf(context).payuni;
  const until = new Date(context.now().getTime() + TOKEN_REUSE_MARGIN_MS);
  let sdkToken = await records.reusableSdkToken(session.id, iframeDomain, until);
  if (!sdkToken) {
    const creditToken = session.mode === 'SUBSCRIPTION' ? creditTokenOf(session) : undefined;
    const token = await requestSdkToken(merchant, { iframeDomain, creditToken }, context.now());
    await records.putSdkToken(session.id, token.sdkToken, token.expiresAt, iframeDomain);
    sdkToken = token.sdkToken;
  }
  return {
    sdkToken,
    scriptUrl: payuniScriptUrl(merchant.baseUrl),
    env: session.environment === 'PRODUCTION' ? 'P' : 'S',
  };
}

/**
 * The card fields a session was opened with last (its SDK token and PAYUNi's script), for reads
 * that must not ask PAYUNi for a new token each time (a status poll); null when none.
 */
export async function rememberedPayuniFields(
  context: ServiceContext,
  session: Session,
): Promise<Pick<PayuniCardFields, 'sdkToken' | 'scriptUrl'> | null> {
  const sdkToken = await dependenciesOf(context).payuni.sdkToken(session.id);
  if (!sdkToken) return null;
  const payuni = await payuniMerchantOf(context, session.organization, session.environment);
  return payuni ? { sdkToken, scriptUrl: payuniScriptUrl(payuni.merchant.baseUrl) } : null;
}

/** The PAYUNi merchant a session's payment goes to: null when its organization does not pay through PAYUNi, or nothing is charged. */
export async function payuniMerchantFor(
  context: ServiceContext,
  session: Session,
  /** The processor settings as this request read them already, if it did. */
  stored?: StoredProcessor,
): Promise<PayuniMerchant | null> {
  if (!session.requires_payment_method) return null;
  if (!stored) return (await payuniMerchantOf(context, session.organization, session.environment))?.merchant ?? null;
  const found = processorMerchantFrom(context, stored);
  return found?.processor === 'payuni' ? found.merchant : null;
}

/**
 * Pays a session with the card bound to its SDK token, once: a charge PAYUNi may have made
 * under the session's key (a 3-D Secure step left, or an answer lost) is asked about first and
 * recorded if made. Declines are 402; an answer lost is 502 and the next attempt asks again.
 */
export async function payWithPayuni(
  context: ServiceContext,
  sessionId: string,
  input: BuyerInput,
  uiMode: 'hosted' | 'embedded',
  merchant: PayuniMerchant,
): Promise<PayuniPayOutcome> {
  const { now } = context;
  const row = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
  const session = row?.session;
  if (!row || !session || (session.ui_mode ?? 'hosted') !== uiMode)
    throw notFound(`No such checkout session: ${sessionId}`);
  if (session.status === 'COMPLETE') throw conflict('This checkout session is already paid');
  if (session.charge) return completed(await completeCharged(context, session, row));
  if (statusAt(session, now()) === 'EXPIRED') throw conflict('This checkout session has expired');
  const { store } = context;
  if (await openedBySoldOutLink(store.database, store.tables.schema, session)) throw conflict(SOLD_OUT_MESSAGE);
  if (!session.customer_email && !input.email) {
    throw validationError([{ path: 'email', code: 'required', message: 'email is required' }]);
  }
  const pending = session.pending_charge;
  let known: KnownSession = row;
  if (pending?.processor === 'payuni') {
    const settled = await settleFromQuery(context, merchant, session, pending.key);
    if (settled) return settled;
    known = (await findSessionRow(context.store.database, context.store.tables.schema, sessionId)) ?? row;
  }
  const sdkToken = await dependenciesOf(context).payuni.sdkToken(sessionId);
  if (!sdkToken)
    throw validationError([{ path: 'card', code: 'required', message: 'Enter a card in the card fields first' }]);

  const customerId = await buyerAtPayment(context, session, input);
  const buyer = buyerOf(input, customerId);
  const attemptId = `pay_${randomBase62(24)}`;
  const started = await run(context, known.session ?? session, known, {
    type: 'StartPayment',
    data: { sessionId, attemptId, buyer, processor: 'payuni', amount: session.intent.amount, now: now() },
  });
  const key = started.pending_charge!.key;
  const pageUrl = `${dependenciesOf(context).checkoutUrl}/${sessionId}`;
  await dependenciesOf(context).payuni.useSdkToken(sessionId, now());
  if (session.intent.amount === 0) {
    // Noted before it is asked: whatever comes of the NT$1, the sweep gives it back.
    await noteVerification(context, { ...owner(session), tradeNo: payuniTradeNo(key) });
  }
  let outcome: PayuniCardOutcome;
  try {
    outcome = await authorizeEmbeddedCard(
      merchant,
      {
        sdkToken,
        tradeNo: payuniTradeNo(key),
        amount: authorisedAmountOf(session),
        description: session.product.name,
        email: session.customer_email ?? input.email,
        returnUrl: `${pageUrl}/payuni/return`,
        notifyUrl: `${pageUrl}/payuni/notify`,
        threeDSecure: true,
      },
      now(),
    );
  } catch (error) {
    if (!(error instanceof CardChargeUnanswered)) throw error;
    const message = 'PAYUNi did not answer; paying again asks PAYUNi first and cannot charge twice';
    await run(context, started, null, {
      type: 'FailPayment',
      data: { attemptId, code: 'processing_error', message, requiresAction: false, outcomeUnknown: true, now: now() },
    });
    throw new ApiError(502, 'processor_unavailable', message);
  }
  if (outcome.status === 'requires_3d') return { status: 'requires_action', url: outcome.url };
  return settle(context, merchant, started, { attemptId, key, buyer }, outcome);
}

/**
 * A card result PAYUNi posted (to NotifyURL, or through the buyer's browser to ReturnURL)
 * after 3-D Secure, checked with the organization's keys and matched to the session's pending
 * trade: recorded once, however often it comes. Answers the session after it. Throws 400 for a
 * post that is not PAYUNi's about this session.
 */
export async function acceptPayuniCardResult(
  context: ServiceContext,
  sessionId: string,
  body: Record<string, unknown>,
): Promise<Session> {
  const { session, merchant } = await sessionAtProcessor(context, sessionId, 'payuni');
  let result: ReturnType<typeof readCardNotification>;
  try {
    result = readCardNotification(body, merchant);
  } catch (error) {
    if (error instanceof RejectedNotification) {
      throw ApiError.of('bad_request', 'Not a post of this merchant (HashInfo, EncryptInfo or MerID)');
    }
    // PAYUNi does not know the result yet: the session waits, and the sweep asks the trade query.
    if (error instanceof CardChargeUnanswered) return session;
    throw error;
  }
  const pending = session.pending_charge;
  const key = pending?.key ?? session.charge?.key;
  if (!key || result.tradeNo !== payuniTradeNo(key))
    throw ApiError.of('bad_request', 'Not the trade of this checkout session');
  if (session.charge || !pending || session.status !== 'OPEN') return session;
  const { outcome } = result;
  if (outcome.status === 'requires_3d') return session;
  if (outcome.status === 'paid' && outcome.amount !== authorisedAmountOf(session)) {
    context.logger.error({ session: sessionId }, 'PAYUNi reported another amount; not recorded');
    throw ApiError.of('bad_request', 'The amount is not the checkout amount');
  }
  const attempt = { attemptId: pending.attempt_id, key, buyer: pending.buyer ?? noBuyer };
  const settled = await settle(context, merchant, session, attempt, outcome).catch((error: unknown) => {
    if (error instanceof ApiError && error.status === 402) return null;
    throw error;
  });
  return settled?.status === 'complete' ? settled.session : ((await reread(context, sessionId)) ?? session);
}

/** Where the buyer goes after PAYUNi's post through their browser: the success URL once paid, else the page. */
export function afterPayuniReturn(context: ServiceContext, session: Session): string {
  return session.status === 'COMPLETE' && session.success_url
    ? successRedirect(session.success_url, session.id)
    : `${dependenciesOf(context).checkoutUrl}/${session.id}`;
}

/**
 * The sweep's question about a pending PAYUNi charge: charged (without the card, which the query
 * does not name), or never (null: failed, or unknown to PAYUNi). No trustworthy answer throws,
 * and the session waits for the next sweep.
 */
export async function payuniChargeOf(context: ServiceContext, session: Session, key: string): Promise<Charged | null> {
  const payuni = await payuniMerchantOf(context, session.organization, session.environment);
  if (!payuni) throw new Error('The session was paid through PAYUNi, which is no longer set: asking later');
  const status = await queryPayuniTrade(payuni.merchant, payuniTradeNo(key), context.now());
  if (status.status !== 'paid') return null;
  // A subscription paid by transfer renews by transfer; one paid by card has no CreditHash from the query.
  const method = session.mode === 'SUBSCRIPTION' ? codeMethodOfPaymentType(status.paymentType) : null;
  return { paymentMethod: method ? payuniCodeMethod(method) : null };
}

const noBuyer: Buyer = { email: null, name: null, customer_id: null };

/**
 * Asks PAYUNi about the session's key before charging again: paid, it is recorded (without the
 * card, which the query does not name: renewals then ask the buyer for one); failed or never
 * made, the attempt is closed so the next gets a key of its own or reuses this one.
 */
async function settleFromQuery(
  context: ServiceContext,
  merchant: PayuniMerchant,
  session: Session,
  key: string,
): Promise<PayuniPayOutcome | null> {
  const pending = session.pending_charge!;
  const status = await queryPayuniTrade(merchant, payuniTradeNo(key), context.now()).catch(() => {
    throw new ApiError(502, 'processor_unavailable', 'PAYUNi did not answer about the last attempt; try again shortly');
  });
  if (status.status === 'unknown_trade') return null;
  if (status.status === 'unpaid') throw conflict('The last payment is still waiting at PAYUNi; try again shortly');
  const attempt = { attemptId: pending.attempt_id, key, buyer: pending.buyer ?? noBuyer };
  if (status.status === 'paid') {
    return settle(context, merchant, session, attempt, {
      status: 'paid',
      payuniTradeNo: status.payuniTradeNo,
      amount: status.amount,
      card: null,
    });
  }
  // The key is spent: its attempt is closed as declined (one opened for it when the attempt that
  // lost its answer is closed already), so that the next attempt has a key of its own.
  const attemptId = session.attempt?.id === pending.attempt_id ? pending.attempt_id : `pay_${randomBase62(24)}`;
  const now = context.now();
  const reopen: SessionCommand[] =
    attemptId === pending.attempt_id
      ? []
      : [
          {
            type: 'StartPayment',
            data: { sessionId: session.id, attemptId, buyer: attempt.buyer, processor: 'payuni', now },
          },
        ];
  const message = 'PAYUNi did not take the last payment';
  const fail: SessionCommand = {
    type: 'FailPayment',
    data: { attemptId, code: 'processor_declined', message, requiresAction: false, now },
  };
  await runSessionCommands(context, session.id, null, [...reopen, fail], {
    organization: session.organization,
    environment: session.environment,
    occurredAt: now,
  });
  return null;
}

type Attempt = { attemptId: string; key: string; buyer: Buyer };

/**
 * Records PAYUNi's final answer: the charge (the card kept for a subscription) and the completion,
 * or the decline (402). A card verified for a session with nothing to charge (a free trial) is
 * kept, and its NT$1 given back (payuni-verifications.ts).
 */
async function settle(
  context: ServiceContext,
  merchant: PayuniMerchant,
  session: Session,
  attempt: Attempt,
  outcome: Exclude<PayuniCardOutcome, { status: 'requires_3d' }> | PaidWithoutCard,
): Promise<PayuniPayOutcome> {
  const { now } = context;
  if (outcome.status === 'declined') {
    await run(context, session, null, {
      type: 'FailPayment',
      data: {
        attemptId: attempt.attemptId,
        code: outcome.code,
        message: outcome.message,
        requiresAction: false,
        now: now(),
      },
    });
    throw ApiError.of('payment_required', outcome.message, [
      { path: 'card', code: outcome.code, message: outcome.message },
    ]);
  }
  const paymentMethod = outcome.card ? await keptCard(context, session, outcome.card) : null;
  const recorded = await run(context, session, null, {
    type: 'RecordCharge',
    data: { attemptId: attempt.attemptId, chargeKey: attempt.key, paymentMethod, buyer: attempt.buyer, now: now() },
  });
  const done = completed(await completeCharged(context, recorded));
  if (session.intent.amount === 0) {
    await giveBackVerification(context, merchant, { ...owner(session), tradeNo: payuniTradeNo(attempt.key) });
  }
  return done;
}

/**
 * What PAYUNi authorises for a session: its amount, or NT$1 to verify the card of a session with
 * nothing to charge today (a free trial), given back once the card is kept.
 */
const authorisedAmountOf = (session: Session) => session.intent.amount || VERIFICATION_AMOUNT;

const owner = (session: Session) => ({ organization: session.organization, environment: session.environment });

function completed(outcome: PayOutcome): PayuniPayOutcome {
  if (outcome.status !== 'complete') throw new Error('A charged session did not complete');
  return outcome;
}

type PaidWithoutCard = { status: 'paid'; payuniTradeNo: string; amount: number; card: null };

/** The card as the platform shows it; for a subscription, kept at PAYUNi for renewals under a `pm_payuni_` reference. */
async function keptCard(context: ServiceContext, session: Session, card: PayuniCard): Promise<CardSummary> {
  const shown = payuniCardShown(card);
  if (session.mode !== 'SUBSCRIPTION' || !card.creditHash) return shown;
  return dependenciesOf(context).payuni.saveCard(
    { organization: session.organization, environment: session.environment },
    { creditToken: creditTokenOf(session), creditHash: card.creditHash },
    shown,
  );
}

async function run(
  context: ServiceContext,
  session: Session,
  known: KnownSession | null,
  command: SessionCommand,
): Promise<Session> {
  const { state } = await runSessionCommands(context, session.id, known, [command], {
    organization: session.organization,
    environment: session.environment,
    occurredAt: context.now(),
  });
  return state.status === 'Exists' ? state.session : session;
}

async function reread(context: ServiceContext, sessionId: string): Promise<Session | null> {
  const row = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
  return row?.session ?? null;
}
