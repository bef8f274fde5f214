import { ApiError, notFound } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { type AioForm, aioCheckOutForm, merchantTradeNo } from '../payments/ecpay/aio';
import { type EcpayNotification, NOTIFICATION_RECEIVED, readNotification } from '../payments/ecpay/notifications';
import { queryTrade } from '../payments/ecpay/query';
import { ecpayMerchantOf } from '../payments/settings/merchant-of';
import {
  type TradeNotice,
  acceptTradeNotice,
  instructionsOf,
  openProcessorTrade,
  processorUnavailable,
  recordProcessorCharge,
} from './pay-async';
import { findSessionRow } from './queries';
import { successRedirect } from './rules';
import type { Session } from './session';

const CHOOSE_PAYMENT = { card: 'Credit', atm: 'ATM', cvs: 'CVS' } as const;

/**
 * Opens the session's one ECPay trade (a card on ECPay's page, an ATM account or a
 * convenience-store code) and answers the form the buyer's browser posts to ECPay. Its number is
 * the charge key's, so ECPay refuses to open it twice.
 */
export async function startEcpayPayment(
  context: ServiceContext,
  sessionId: string,
  input: { method: string; email?: string; name?: string },
): Promise<AioForm> {
  const row = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
  const ecpay = row?.session && (await ecpayMerchantOf(context, row.session.organization, row.session.environment));
  if (!ecpay) throw processorUnavailable('This checkout does not pay through ECPay');
  const { session, key, method } = await openProcessorTrade(context, sessionId, input, {
    name: 'ecpay',
    methods: ecpay.methods,
  });
  const pageUrl = `${dependenciesOf(context).checkoutUrl}/${sessionId}`;
  return aioCheckOutForm(ecpay.merchant, {
    idempotencyKey: key,
    amount: session.intent.amount,
    method: CHOOSE_PAYMENT[method],
    itemName: session.product.name,
    description: session.product.name,
    now: context.now(),
    returnUrl: `${pageUrl}/ecpay/result`,
    paymentInfoUrl: `${pageUrl}/ecpay/payment-info`,
    // ECPay's page sends the buyer's browser back here (a POST) once the card is paid or refused.
    orderResultUrl: `${pageUrl}/ecpay/return`,
    clientBackUrl: pageUrl,
  });
}

/**
 * A post from ECPay about the session's trade, checked with the organization's keys and acted on
 * (pay-async.ts). Answers what ECPay must read back: `1|OK` once recorded, so a repeat records
 * nothing new; anything else makes ECPay send it again. Throws `ApiError` 400 for a post that is
 * not ECPay's for this session.
 */
export async function acceptEcpayNotification(
  context: ServiceContext,
  sessionId: string,
  body: Record<string, unknown>,
): Promise<string> {
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
  await acceptTradeNotice(context, session, 'ecpay', merchantTradeNo, noticeOf(notification));
  return NOTIFICATION_RECEIVED;
}

function noticeOf(notification: EcpayNotification): TradeNotice {
  const { tradeNo } = notification;
  switch (notification.kind) {
    case 'paid':
      return { kind: 'paid', tradeNo, amount: notification.amount };
    case 'failed':
    case 'issue_failed':
      return { kind: 'failed', tradeNo, message: notification.message };
    case 'atm_issued':
    case 'cvs_issued':
      return { kind: 'issued', tradeNo, instructions: instructionsOf(notification) };
  }
}

/**
 * The buyer is back from ECPay's page. ECPay's post to ReturnURL may not have arrived yet, or
 * may never arrive: a session still waiting on its card trade asks ECPay (QueryTradeInfo) and
 * records the payment it reports. The browser's own post says nothing trusted. Answers where to
 * send the buyer: the success URL once paid, else the checkout page.
 */
export async function returnFromEcpay(context: ServiceContext, sessionId: string): Promise<string> {
  const { logger } = context;
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
    if (charged === 'charged') session = await recordProcessorCharge(context, session);
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
