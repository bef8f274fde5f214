import { ApiError, type PaymentMethodKind, notFound } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { type AioForm, aioCheckOutForm, merchantTradeNo } from '../payments/ecpay/aio';
import { type EcpayNotification, NOTIFICATION_RECEIVED, readNotification } from '../payments/ecpay/notifications';
import { queryPaymentInfo, queryTrade } from '../payments/ecpay/query';
import type { EcpayMerchant } from '../payments/ecpay/merchant';
import { type PeriodSchedule, periodScheduleOf, queryPeriod, readPeriodNotification } from '../payments/ecpay/period';
import { planCard } from '../payments/ecpay-plans';
import { ecpayCodeMethod, ecpayCodeMethodOf } from '../payments/ecpay-invoice-codes';
import { ecpayMerchantOf } from '../payments/settings/merchant-of';
import {
  type TradeNotice,
  acceptTradeNotice,
  openProcessorTrade,
  processorUnavailable,
  sessionAtProcessor,
} from './pay-async';
import { recordProcessorCharge } from './pay';
import { instructionsOf } from '../payments/instructions';
import { findSessionRow } from './queries';
import { successRedirect } from './rules';
import type { BuyerInput, CardSummary, Charged, Session } from './session';

const CHOOSE_PAYMENT = { card: 'Credit', atm: 'ATM', cvs: 'CVS' } as const;

/**
 * How ECPay would charge a subscription: its card plan (定期定額), the same amount every period
 * from the first day. A free trial, a discount (the first period would differ) or a period ECPay
 * cannot count is refused, with the reason.
 */
export function ecpayPlanOf(session: Session): { schedule: PeriodSchedule } | { refusal: string } {
  const plan = "ECPay's card plan charges the same amount every period from the first day";
  if (session.trial_days) return { refusal: `${plan}: a free trial is not taken through ECPay` };
  if (session.discount || session.intent.amount !== session.product.price) {
    return { refusal: `${plan}: a discount is not taken through ECPay` };
  }
  const { interval, interval_count: count } = session.product;
  const schedule = interval ? periodScheduleOf(interval, count) : null;
  return schedule ? { schedule } : { refusal: `ECPay's card plan cannot charge every ${count} ${interval}` };
}

/**
 * The methods a buyer of this session may choose at ECPay: all set for a one-time checkout; for a
 * subscription the card when ECPay's card plan can charge it, and ATM and store codes unless it
 * starts free (its renewals are then paid the same way: payments/ecpay-invoice-codes.ts).
 */
export function ecpayMethodsOf(session: Session, methods: readonly PaymentMethodKind[]): PaymentMethodKind[] {
  if (session.mode === 'PAYMENT') return [...methods];
  const card = 'schedule' in ecpayPlanOf(session) && methods.includes('card');
  const transfers = session.intent.amount > 0 ? methods.filter((method) => method !== 'card') : [];
  return [...(card ? (['card'] as const) : []), ...transfers];
}

/**
 * Opens the session's one ECPay trade (a card on ECPay's page, an ATM account or a
 * convenience-store code; for a subscription, a card plan) and answers the form the buyer's
 * browser posts to ECPay. Its number is the charge key's, so ECPay refuses to open it twice.
 */
export async function startEcpayPayment(
  context: ServiceContext,
  sessionId: string,
  input: BuyerInput & { method: string },
): Promise<AioForm> {
  const row = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
  if (!row?.session) throw notFound(`No such checkout session: ${sessionId}`);
  const ecpay = await ecpayMerchantOf(context, row.session.organization, row.session.environment);
  if (!ecpay) throw processorUnavailable('This checkout does not pay through ECPay');
  const plan = row.session.mode === 'SUBSCRIPTION' && input.method === 'card' ? ecpayPlanOf(row.session) : null;
  if (plan && 'refusal' in plan) throw processorUnavailable(plan.refusal);
  const { session, key, method } = await openProcessorTrade(context, { ...row, session: row.session }, input, {
    name: 'ecpay',
    methods: ecpayMethodsOf(row.session, ecpay.methods),
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
    ...(plan && { period: { schedule: plan.schedule, returnUrl: `${pageUrl}/ecpay/period` } }),
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
  const { session, merchant } = await sessionAtProcessor(context, sessionId, 'ecpay');
  let notification: EcpayNotification;
  try {
    notification = readNotification(body, merchant);
  } catch {
    throw ApiError.of('bad_request', 'Not a notification of this merchant (CheckMacValue or MerchantID)');
  }
  const notice = noticeOf(notification);
  if (notice.kind === 'paid' && notification.kind === 'paid' && session.mode === 'SUBSCRIPTION') {
    notice.paymentMethod = await subscriptionMethodOf(context, merchant, notice.tradeNo, notification.paymentType);
  }
  await acceptTradeNotice(context, session, 'ecpay', merchantTradeNo, notice);
  return NOTIFICATION_RECEIVED;
}

/**
 * ECPay's post of a plan's period (PeriodReturnURL), checked with the organization's keys and
 * acknowledged. It records no payment: a renewal reads the plan from ECPay's own query when
 * billing asks for it (payments/ecpay-plans.ts), at once after such a post, so a post lost or
 * repeated changes nothing. Throws
 * `ApiError` 400 for a post that is not ECPay's about this session's plan.
 */
export async function acceptEcpayPeriodNotification(
  context: ServiceContext,
  sessionId: string,
  body: Record<string, unknown>,
): Promise<string> {
  const { session, merchant } = await sessionAtProcessor(context, sessionId, 'ecpay');
  const period = readPeriodNotification(body, merchant);
  const key = session.charge?.key;
  if (!period || !key || period.merchantTradeNo !== merchantTradeNo(key)) {
    throw ApiError.of('bad_request', "Not ECPay's post about this checkout's card plan");
  }
  context.logger.info(
    { session: sessionId, succeeded: period.succeeded, times: period.totalSuccessTimes },
    'ECPay charged a period of a card plan',
  );
  // A renewal waiting for this period asks ECPay's plan query at once instead of at its next turn.
  await dependenciesOf(context).ecpayPeriods.periodPosted(period.merchantTradeNo);
  return NOTIFICATION_RECEIVED;
}

/**
 * How a subscription paid at ECPay renews: by transfer when its first period was paid by an ATM
 * account or a store code (ECPay's PaymentType `ATM_…`, `CVS_…`), else on the card plan it opened.
 */
async function subscriptionMethodOf(
  context: ServiceContext,
  merchant: EcpayMerchant,
  tradeNo: string,
  paymentType: string,
): Promise<CardSummary> {
  const transfer = ecpayCodeMethodOf(paymentType.split('_')[0]!);
  return transfer ? ecpayCodeMethod(transfer) : planCardOf(context, merchant, tradeNo);
}

/**
 * The card plan a subscription's first payment opened, as the subscription's payment method.
 * Its digits come from ECPay's plan query; without an answer the plan is still the method (its
 * reference is the trade's), shown without them.
 */
async function planCardOf(context: ServiceContext, merchant: EcpayMerchant, tradeNo: string): Promise<CardSummary> {
  const info = await queryPeriod(merchant, tradeNo, context.now()).catch(() => null);
  return planCard(info ?? { merchantTradeNo: tradeNo, card: { first6: '', last4: '' } });
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
      return null;
    });
    if (charged) session = await recordProcessorCharge(context, session, charged.paymentMethod);
  }
  return session.status === 'COMPLETE' && session.success_url
    ? successRedirect(session.success_url, sessionId)
    : pageUrl;
}

/**
 * For a session due to expire while its ECPay trade is unpaid and no account or code reached it:
 * asks ECPay whether one was issued (QueryPaymentInfo; its PaymentInfoURL post was lost). One
 * issued and still open is recorded as if the post had come (the session waits for it until its
 * deadline); answers whether the session now waits. ECPay not answering throws.
 */
export async function awaitLostEcpayCode(context: ServiceContext, session: Session): Promise<boolean> {
  const pending = session.pending_charge;
  if (!pending || pending.processor !== 'ecpay' || session.async_payment || session.mode !== 'PAYMENT') return false;
  const ecpay = await ecpayMerchantOf(context, session.organization, session.environment);
  if (!ecpay) return false;
  const tradeNo = merchantTradeNo(pending.key);
  const issued = await queryPaymentInfo(ecpay.merchant, tradeNo, context.now());
  if (!issued || issued.expiresAt.getTime() <= context.now().getTime()) return false;
  await acceptTradeNotice(context, session, 'ecpay', merchantTradeNo, {
    kind: 'issued',
    tradeNo,
    instructions: instructionsOf(issued),
  });
  return true;
}

/**
 * The sweep's question about a pending ECPay charge: charged (with the card plan of a
 * subscription), or never (null: unpaid, failed or unknown to ECPay). No trustworthy answer
 * throws, and the session waits for the next sweep.
 */
export async function ecpayChargeOf(context: ServiceContext, session: Session, key: string): Promise<Charged | null> {
  const ecpay = await ecpayMerchantOf(context, session.organization, session.environment);
  if (!ecpay) throw new Error('The session was paid through ECPay, which is no longer set: asking later');
  const tradeNo = merchantTradeNo(key);
  const status = await queryTrade(ecpay.merchant, tradeNo, context.now());
  if (status.status !== 'paid') return null;
  return {
    paymentMethod:
      session.mode === 'SUBSCRIPTION'
        ? await subscriptionMethodOf(context, ecpay.merchant, tradeNo, status.paymentType)
        : null,
  };
}
