import { ApiError, type PaymentMethodKind, notFound } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { type PayuniNotification, RejectedNotification, readNotification } from '../payments/payuni/notifications';
import { type UppForm, payuniTradeNo, uppForm } from '../payments/payuni/upp';
import { payuniCodeMethod } from '../payments/payuni-invoice-codes';
import { payuniMerchantOf } from '../payments/settings/merchant-of';
import {
  type TradeNotice,
  acceptTradeNotice,
  openProcessorTrade,
  processorUnavailable,
  sessionAtProcessor,
} from './pay-async';
import { instructionsOf } from '../payments/instructions';
import { findSessionRow } from './queries';
import type { BuyerInput, Session } from './session';

/**
 * ATM accounts and convenience-store codes through PAYUNi (docs/payments.md): the buyer picks
 * one beside PAYUNi's card fields; checkout opens a UPP trade with only that method under the
 * session's charge key, PAYUNi issues the account or code (posted to `payuni/code-notify`), and
 * posts again when the buyer pays. Cards go through the card fields (pay-payuni.ts), never here.
 */

const UPP_METHOD = { atm: 'ATM', cvs: 'CVS' } as const;

/**
 * The methods besides the card a buyer of this session may choose at PAYUNi: for a subscription
 * too (its renewals are then paid by transfer, a code per invoice: payments/payuni-invoice-codes.ts),
 * except one that starts free (nothing to transfer today).
 */
export function payuniCodeMethods(methods: readonly PaymentMethodKind[], session: Session): ('atm' | 'cvs')[] {
  if (session.intent.amount === 0) return [];
  return methods.filter((method): method is 'atm' | 'cvs' => method !== 'card');
}

/** Opens the session's one PAYUNi trade for an ATM account or a convenience-store code: the form the buyer's browser posts to PAYUNi. */
export async function startPayuniCodePayment(
  context: ServiceContext,
  sessionId: string,
  input: BuyerInput & { method: string },
): Promise<UppForm> {
  const row = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
  if (!row?.session) throw notFound(`No such checkout session: ${sessionId}`);
  const payuni = await payuniMerchantOf(context, row.session.organization, row.session.environment);
  if (!payuni) throw processorUnavailable('This checkout does not pay through PAYUNi');
  if (row.session.intent.amount === 0) {
    throw processorUnavailable('A free trial is not paid by transfer: there is nothing to pay today');
  }
  const { session, key, method } = await openProcessorTrade(context, { ...row, session: row.session }, input, {
    name: 'payuni',
    methods: payuniCodeMethods(payuni.methods, row.session),
  });
  const pageUrl = `${dependenciesOf(context).checkoutUrl}/${sessionId}`;
  return uppForm(payuni.merchant, {
    idempotencyKey: key,
    amount: session.intent.amount,
    method: UPP_METHOD[method as 'atm' | 'cvs'],
    description: session.product.name,
    now: context.now(),
    notifyUrl: `${pageUrl}/payuni/code-notify`,
    returnUrl: `${pageUrl}/payuni/code-return`,
    backUrl: pageUrl,
    email: session.customer_email ?? input.email,
    lang: session.locale === 'en' ? 'en' : 'zh-tw',
  });
}

/**
 * A post from PAYUNi about the session's ATM or CVS trade (server to server, or the same signed
 * fields through the buyer's browser), checked with the organization's keys and acted on
 * (pay-async.ts). Throws `ApiError` 400 for a post that is not PAYUNi's for this session.
 */
export async function acceptPayuniCodeNotification(
  context: ServiceContext,
  sessionId: string,
  body: Record<string, unknown>,
): Promise<Session> {
  const { session, merchant } = await sessionAtProcessor(context, sessionId, 'payuni');
  let notification: PayuniNotification;
  try {
    notification = readNotification(body, merchant);
  } catch (error) {
    if (!(error instanceof RejectedNotification)) throw error;
    throw ApiError.of('bad_request', 'Not a post of this merchant (HashInfo, EncryptInfo or MerID)');
  }
  const notice = noticeOf(notification);
  // A subscription paid by transfer renews by transfer: a code per invoice.
  if (notice.kind === 'paid' && session.mode === 'SUBSCRIPTION' && notification.kind === 'paid') {
    const method = codeMethodOfPaymentType(notification.paymentType);
    if (method) notice.paymentMethod = payuniCodeMethod(method);
  }
  await acceptTradeNotice(context, session, 'payuni', payuniTradeNo, notice);
  const after = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
  return after?.session ?? session;
}

/** PAYUNi's PaymentType of a transfer: 2 an ATM account, 3 a store code. */
export function codeMethodOfPaymentType(paymentType: string): 'atm' | 'cvs' | null {
  return paymentType === '2' ? 'atm' : paymentType === '3' ? 'cvs' : null;
}

function noticeOf(notification: PayuniNotification): TradeNotice {
  const { tradeNo } = notification;
  switch (notification.kind) {
    case 'paid':
      return { kind: 'paid', tradeNo, amount: notification.amount };
    case 'failed':
      return { kind: 'failed', tradeNo, message: notification.message };
    case 'pending':
      return { kind: 'pending', tradeNo };
    case 'atm_issued':
    case 'cvs_issued':
      return { kind: 'issued', tradeNo, instructions: instructionsOf(notification) };
  }
}
