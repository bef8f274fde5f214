import {
  ApiError,
  type PaymentInstructions,
  type PaymentMethodKind,
  conflict,
  notFound,
  randomBase62,
  validationError,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { type AioForm, aioCheckOutForm, merchantTradeNo } from '../payments/ecpay/aio';
import { type EcpayNotification, NOTIFICATION_RECEIVED, readNotification } from '../payments/ecpay/notifications';
import { queryTrade } from '../payments/ecpay/query';
import { ecpayMerchantOf } from '../payments/settings/merchant-of';
import { PROCESSOR_UNAVAILABLE } from '../payments/settings/refusal';
import { runSessionCommands } from './command';
import type { SessionCommand } from './decide';
import { buyerAtPayment, completeCharged } from './pay';
import { findSessionRow } from './queries';
import { statusAt } from './resource';
import { successRedirect } from './rules';
import type { Session } from './session';

/**
 * What ECPay offers on the hosted checkout today (docs/payments.md): a card on ECPay's own
 * page (3-D Secure there), an ATM account, a convenience-store code.
 */
export type EcpayMethod = PaymentMethodKind;

const unavailable = (message: string) =>
  ApiError.of('payment_required', message, [{ path: 'payment', code: PROCESSOR_UNAVAILABLE, message }]);

/** The methods a buyer of this session may choose at ECPay, or null when its environment does not pay through ECPay. */
export async function ecpayMethodsFor(context: ServiceContext, session: Session): Promise<EcpayMethod[] | null> {
  const ecpay = await ecpayMerchantOf(context, session.organization, session.environment);
  if (!ecpay) return null;
  return session.mode === 'PAYMENT' ? ecpay.methods : [];
}

const CHOOSE_PAYMENT = { card: 'Credit', atm: 'ATM', cvs: 'CVS' } as const;

/**
 * Opens the session's one ECPay trade (a card on ECPay's page, an ATM account or a
 * convenience-store code) and answers the form the buyer's browser posts to ECPay. One trade per session: its number is the charge
 * key's, and a buyer who comes back without a code is asked to start a new checkout rather
 * than given a second trade that could be paid beside the first (docs/payments.md).
 */
export async function startEcpayPayment(
  context: ServiceContext,
  sessionId: string,
  input: { method: string; email?: string; name?: string },
): Promise<AioForm> {
  const { now } = context;
  const row = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
  const session = row?.session;
  if (!row || !session || (session.ui_mode ?? 'hosted') !== 'hosted')
    throw notFound(`No such checkout session: ${sessionId}`);
  if (session.status === 'COMPLETE') throw conflict('This checkout session is already paid');
  if (statusAt(session, now()) === 'EXPIRED') throw conflict('This checkout session has expired');
  if (session.async_payment || session.pending_charge?.processor === 'ecpay') {
    throw conflict('This payment was opened at ECPay already: finish it there, or start a new checkout');
  }
  const ecpay = await ecpayMerchantOf(context, session.organization, session.environment);
  if (!ecpay) throw unavailable('This checkout does not pay through ECPay');
  if (session.mode !== 'PAYMENT') throw unavailable('ECPay pays one-time checkouts only, for now');
  const method = input.method as PaymentMethodKind;
  if (!ecpay.methods.includes(method)) {
    throw validationError([
      { path: 'method', code: 'invalid_value', message: `Choose one of: ${ecpay.methods.join(', ')}` },
    ]);
  }
  if (!session.customer_email && !input.email) {
    throw validationError([{ path: 'email', code: 'required', message: 'email is required' }]);
  }
  const customerId = await buyerAtPayment(context, session, { email: input.email, name: input.name });
  const buyer = { email: input.email ?? null, name: input.name ?? null, customer_id: customerId };
  const attemptId = `pay_${randomBase62(24)}`;
  const { state } = await runSessionCommands(
    context,
    sessionId,
    row,
    [{ type: 'StartPayment', data: { sessionId, attemptId, buyer, processor: 'ecpay', now: now() } }],
    { organization: session.organization, environment: session.environment, occurredAt: now() },
  );
  const started = state.status === 'Exists' ? state.session : session;
  const pageUrl = `${dependenciesOf(context).checkoutUrl}/${sessionId}`;
  return aioCheckOutForm(ecpay.merchant, {
    idempotencyKey: started.pending_charge!.key,
    amount: session.intent.amount,
    method: CHOOSE_PAYMENT[method],
    itemName: session.product.name,
    description: session.product.name,
    now: now(),
    returnUrl: `${pageUrl}/ecpay/result`,
    paymentInfoUrl: `${pageUrl}/ecpay/payment-info`,
    // ECPay's page sends the buyer's browser back here (a POST) once the card is paid or refused.
    orderResultUrl: `${pageUrl}/ecpay/return`,
    clientBackUrl: pageUrl,
  });
}

/**
 * A post from ECPay about the session's trade, checked with the organization's keys: the
 * account or code issued (the session waits for it), the payment made (the session completes
 * as a card payment does), or a failure. Answers what ECPay must read back: `1|OK` once
 * recorded, so a repeat records nothing new; anything else makes ECPay send it again. Throws
 * `ApiError` 400 for a post that is not ECPay's for this session.
 */
export async function acceptEcpayNotification(
  context: ServiceContext,
  sessionId: string,
  body: Record<string, unknown>,
): Promise<string> {
  const { now, logger } = context;
  const row = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
  const session = row?.session;
  if (!row || !session) throw notFound(`No such checkout session: ${sessionId}`);
  const ecpay = await ecpayMerchantOf(context, session.organization, session.environment);
  if (!ecpay) throw ApiError.of('bad_request', 'This checkout does not pay through ECPay');
  let notification: EcpayNotification;
  try {
    notification = readNotification(body, ecpay.merchant);
  } catch {
    throw ApiError.of('bad_request', 'Not a notification of this merchant (CheckMacValue or MerchantID)');
  }
  const key = session.pending_charge?.key ?? session.charge?.key;
  if (!key || notification.tradeNo !== merchantTradeNo(key)) {
    if (notification.kind === 'paid') {
      await recordUnmatched(context, session, notification, 'paid_other_trade');
      return NOTIFICATION_RECEIVED;
    }
    throw ApiError.of('bad_request', 'Not the trade of this checkout session');
  }
  const run = (command: SessionCommand) =>
    runSessionCommands(context, sessionId, null, [command], {
      organization: session.organization,
      environment: session.environment,
      occurredAt: now(),
    });
  const amountMatches = !('amount' in notification) || notification.amount === session.intent.amount;
  if (!amountMatches) {
    logger.error({ session: sessionId, trade: notification.tradeNo }, 'ECPay reported another amount; not recorded');
    throw ApiError.of('bad_request', 'The amount is not the checkout amount');
  }
  const pending = session.pending_charge;
  switch (notification.kind) {
    case 'atm_issued':
    case 'cvs_issued': {
      await run({
        type: 'RecordAsyncPayment',
        data: {
          chargeKey: key,
          processor: 'ecpay',
          tradeNo: notification.tradeNo,
          instructions: instructionsOf(notification),
          now: now(),
        },
      });
      return NOTIFICATION_RECEIVED;
    }
    case 'paid': {
      if (session.status !== 'OPEN' && !session.charge) {
        // Expired before ECPay's post (a code whose issue never reached us, paid at the last hour).
        await recordUnmatched(context, session, notification, 'paid_after_expiry');
        return NOTIFICATION_RECEIVED;
      }
      if (pending && !session.charge) {
        await run({
          type: 'RecordCharge',
          data: {
            attemptId: pending.attempt_id,
            chargeKey: key,
            paymentMethod: null,
            buyer: pending.buyer ?? { email: null, name: null, customer_id: null },
            now: now(),
          },
        });
      }
      const recorded = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
      if (recorded?.session && recorded.session.status === 'OPEN')
        await completeCharged(context, recorded.session, recorded);
      return NOTIFICATION_RECEIVED;
    }
    case 'failed':
    case 'issue_failed':
      if (pending) {
        await run({
          type: 'FailPayment',
          data: {
            attemptId: pending.attempt_id,
            code: 'processor_declined',
            message: notification.message || 'ECPay did not take the payment',
            requiresAction: false,
            now: now(),
          },
        });
      }
      return NOTIFICATION_RECEIVED;
  }
}

/**
 * Money ECPay took that the session cannot record: kept on the session's stream and listed for
 * the operator (`GET /admin/v1/organizations/{org_id}/unmatched_payments`), to refund by hand.
 */
async function recordUnmatched(
  context: ServiceContext,
  session: Session,
  paid: Extract<EcpayNotification, { kind: 'paid' }>,
  reason: 'paid_after_expiry' | 'paid_other_trade',
): Promise<void> {
  const { now, logger } = context;
  logger.error(
    { session: session.id, trade: paid.tradeNo, reason },
    'ECPay was paid for a trade the checkout cannot take: refund it',
  );
  await runSessionCommands(
    context,
    session.id,
    null,
    [
      {
        type: 'RecordUnmatchedPayment',
        data: { processor: 'ecpay', tradeNo: paid.tradeNo, amount: paid.amount, reason, now: now() },
      },
    ],
    { organization: session.organization, environment: session.environment, occurredAt: now() },
  );
}

function instructionsOf(
  issued: Extract<EcpayNotification, { kind: 'atm_issued' | 'cvs_issued' }>,
): PaymentInstructions {
  const common = { amount: issued.amount, expires_at: issued.expiresAt.toISOString() };
  return issued.kind === 'atm_issued'
    ? { type: 'atm', bank_code: issued.bankCode, account: issued.account, payment_code: null, ...common }
    : { type: 'cvs', bank_code: null, account: null, payment_code: issued.paymentNo, ...common };
}

/**
 * The buyer is back from ECPay's page. ECPay's post to ReturnURL may not have arrived yet, or
 * may never arrive: a session still waiting on its card trade asks ECPay (QueryTradeInfo) and
 * records the payment it reports. The browser's own post says nothing trusted. Answers where to
 * send the buyer: the success URL once paid, else the checkout page.
 */
export async function returnFromEcpay(context: ServiceContext, sessionId: string): Promise<string> {
  const { now, logger } = context;
  const pageUrl = `${dependenciesOf(context).checkoutUrl}/${sessionId}`;
  const row = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
  let session = row?.session;
  if (!row || !session) return pageUrl;
  const pending = session.pending_charge;
  if (session.status === 'OPEN' && pending?.processor === 'ecpay' && !session.charge && !session.async_payment) {
    const charged = await ecpayChargeOf(context, session, pending.key).catch((err: unknown) => {
      logger.warn(
        { err, session: sessionId },
        'ECPay did not answer about the trade; the notification or the sweep records it',
      );
      return 'not_charged' as const;
    });
    if (charged === 'charged') {
      await runSessionCommands(
        context,
        sessionId,
        null,
        [
          {
            type: 'RecordCharge',
            data: {
              attemptId: pending.attempt_id,
              chargeKey: pending.key,
              paymentMethod: null,
              buyer: pending.buyer ?? { email: null, name: null, customer_id: null },
              now: now(),
            },
          },
        ],
        { organization: session.organization, environment: session.environment, occurredAt: now() },
      );
      const recorded = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
      const outcome = await completeCharged(context, recorded!.session!, recorded);
      if (outcome.status === 'complete') session = outcome.session;
    }
  }
  return session.status === 'COMPLETE' && session.success_url
    ? successRedirect(session.success_url, sessionId)
    : pageUrl;
}

/**
 * The sweep's question about a pending ECPay charge: charged, or never (unpaid, failed or
 * unknown to ECPay). No trustworthy answer throws, and the session waits for the next sweep.
 */
export async function ecpayChargeOf(
  context: ServiceContext,
  session: Session,
  key: string,
): Promise<'charged' | 'not_charged'> {
  const ecpay = await ecpayMerchantOf(context, session.organization, session.environment);
  if (!ecpay) throw new Error('The session was paid through ECPay, which is no longer set: asking later');
  const status = await queryTrade(ecpay.merchant, merchantTradeNo(key), context.now());
  return status.status === 'paid' ? 'charged' : 'not_charged';
}
