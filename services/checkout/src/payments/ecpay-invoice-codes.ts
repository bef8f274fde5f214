import { type Environment, type PaymentInstructions, randomBase62 } from '@billing/contracts';
import { positiveNumberSetting, type ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { type AioForm, aioCheckOutForm, merchantTradeNo } from './ecpay/aio';
import type { EcpayInvoiceTrade } from './ecpay/invoice-trades';
import type { EcpayMerchant } from './ecpay/merchant';
import { RejectedNotification, readNotification } from './ecpay/notifications';
import { queryPaymentInfo, queryTrade } from './ecpay/query';
import { instructionsOf } from './instructions';
import type { InvoiceChargeResult } from './payuni-invoice-codes';
import type { ChargeResult, SavedCard, SavedCardChargeRequest } from './processor';
import { ecpayMerchantOf } from './settings/merchant-of';

/**
 * Invoices paid by transfer through ECPay (docs/payments.md): a subscription first paid with an
 * ATM account or a store code at ECPay renews the same way. ECPay's AIO issues an account or a
 * code only on its own page, with the buyer, never server to server: each renewal's charge key
 * gets a page of ours (`hosted_instructions_url`) that sends the buyer to ECPay for it, by a
 * deadline. The charge answers `pending` with that page until ECPay issues the account (then
 * with it), `succeeded` once ECPay's trade query says paid, and `declined`
 * (`payment_deadline_passed`) once the deadline has passed unpaid, which dunning counts as a
 * failed attempt; its next attempt gets a page of its own.
 */

const PREFIX = 'pm_code_ecpay_';

/** Days a renewal's page stays open: `CHECKOUT_INVOICE_CODE_DAYS`, as for PAYUNi's codes. */
const DEFAULT_CODE_DAYS = 3;
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** ECPay keeps a store code at most 43,200 minutes (30 days). */
const MAX_CVS_MINUTES = 43_200;

export const isEcpayCodeMethod = (paymentMethodId: string) => paymentMethodId.startsWith(PREFIX);

/** The payment method of a customer who pays by transfer through ECPay, as billing keeps it (never a card). */
export const ecpayCodeMethod = (method: 'atm' | 'cvs'): SavedCard => ({
  id: `${PREFIX}${method}`,
  brand: method,
  last4: '',
  exp_month: 0,
  exp_year: 0,
});

/** The method of an ECPay trade's ChoosePayment, when it is a transfer. */
export const ecpayCodeMethodOf = (choosePayment: string): 'atm' | 'cvs' | null =>
  choosePayment === 'ATM' ? 'atm' : choosePayment === 'CVS' ? 'cvs' : null;

const declined = (code: string, message: string): ChargeResult => ({ status: 'declined', code, message });

/** The address of a renewal's page, where the buyer is sent to ECPay for the account or code. */
export const invoicePageUrl = (context: ServiceContext, pageToken: string) =>
  `${dependenciesOf(context).checkoutUrl}/invoice-payments/${pageToken}`;

/** How to pay the trade: ECPay's account or code once issued, else the page where the buyer gets one. */
export function instructionsOfTrade(context: ServiceContext, trade: EcpayInvoiceTrade): PaymentInstructions {
  const hosted_instructions_url = invoicePageUrl(context, trade.pageToken);
  if (trade.instructions) return { ...trade.instructions, hosted_instructions_url };
  return {
    type: trade.method,
    bank_code: null,
    account: null,
    payment_code: null,
    amount: trade.amount,
    expires_at: trade.deadline.toISOString(),
    hosted_instructions_url,
  };
}

/** A renewal charged to a transfer method at ECPay: the page of its key (made once), or what came of it. */
export async function chargeByEcpayCode(
  context: ServiceContext,
  owner: { organization: string; environment: Environment },
  request: SavedCardChargeRequest,
  ecpay: EcpayMerchant | null,
): Promise<InvoiceChargeResult> {
  const trades = dependenciesOf(context).ecpayInvoiceTrades;
  const known = await trades.find(request.idempotencyKey);
  if (known) return tradeStatus(context, ecpay, known, request.now);
  if (!ecpay) {
    return declined('processor_unavailable', 'The customer pays through ECPay, which the organization no longer uses');
  }
  const method = request.paymentMethodId.slice(PREFIX.length);
  if (method !== 'atm' && method !== 'cvs') return declined('payment_method_not_found', 'No such payment method');
  const days = positiveNumberSetting(context.config, 'CHECKOUT_INVOICE_CODE_DAYS', DEFAULT_CODE_DAYS);
  const trade = await trades.record({
    chargeKey: request.idempotencyKey,
    tradeNo: merchantTradeNo(request.idempotencyKey),
    pageToken: randomBase62(32),
    ...owner,
    method,
    amount: request.amount,
    deadline: new Date(request.now.getTime() + days * DAY_MS),
  });
  return { status: 'pending', payment_instructions: instructionsOfTrade(context, trade) };
}

/** The status query by key for a renewal's ECPay trade (the reconciler's); null for a key no page was made for. */
export async function ecpayCodeChargeStatus(
  context: ServiceContext,
  ecpay: EcpayMerchant,
  idempotencyKey: string,
): Promise<InvoiceChargeResult | null> {
  const known = await dependenciesOf(context).ecpayInvoiceTrades.find(idempotencyKey);
  return known ? tradeStatus(context, ecpay, known, context.now()) : null;
}

/** When the attempt fails unpaid: ECPay's own expiry of the account once issued (an ATM account runs whole days). */
const deadlineOf = (trade: EcpayInvoiceTrade) =>
  trade.instructions ? Date.parse(trade.instructions.expires_at) : trade.deadline.getTime();

/**
 * Paid, past its deadline, or still to be paid. A page never opened sent no one to ECPay: it is
 * pending until its deadline and declined after, without asking. Once opened, ECPay's trade query
 * is asked at most every `CHECKOUT_INVOICE_CODE_CHECK_MS` (10 minutes) before the deadline, at
 * once after ECPay's post said paid, and always once the deadline has passed. Throws when ECPay
 * does not answer.
 */
async function tradeStatus(
  context: ServiceContext,
  ecpay: EcpayMerchant | null,
  trade: EcpayInvoiceTrade,
  now: Date,
): Promise<InvoiceChargeResult> {
  const pending = { status: 'pending' as const, payment_instructions: instructionsOfTrade(context, trade) };
  const passed = now.getTime() >= deadlineOf(trade);
  const deadlinePassed = declined('payment_deadline_passed', 'The transfer was not made before its deadline');
  if (!trade.openedAt) return passed ? deadlinePassed : pending;
  if (!ecpay) throw new Error('The trade is at ECPay, which the organization no longer uses: asking later');
  const checkEvery = positiveNumberSetting(context.config, 'CHECKOUT_INVOICE_CODE_CHECK_MS', 10 * MINUTE_MS);
  const checkedRecently = trade.checkedAt && now.getTime() - trade.checkedAt.getTime() < checkEvery;
  if (!trade.paidAt && checkedRecently && !passed) return pending;
  const status = await queryTrade(ecpay, trade.tradeNo, now);
  await dependenciesOf(context).ecpayInvoiceTrades.checked(trade.chargeKey, now);
  if (status.status === 'paid') return { status: 'succeeded', payment_method: ecpayCodeMethod(trade.method) };
  if (status.status === 'failed')
    return declined('code_not_issued', `ECPay issued no account or code (${status.code})`);
  return passed ? deadlinePassed : pending;
}

/** What the renewal's page shows: the trade and how to pay it, or null for an address that names none. */
export async function invoicePaymentOf(
  context: ServiceContext,
  pageToken: string,
): Promise<{ trade: EcpayInvoiceTrade; instructions: PaymentInstructions } | null> {
  const trades = dependenciesOf(context).ecpayInvoiceTrades;
  let trade = await trades.findByPage(pageToken);
  if (!trade) return null;
  if (trade.openedAt && !trade.instructions && !trade.paidAt) trade = await askLostPaymentInfo(context, trade);
  return { trade, instructions: instructionsOfTrade(context, trade) };
}

/**
 * A buyer back on the page after ECPay's page, with no account posted yet: ECPay is asked
 * (QueryPaymentInfo) in case its PaymentInfoURL post was lost. No answer shows the page as it is.
 */
async function askLostPaymentInfo(context: ServiceContext, trade: EcpayInvoiceTrade): Promise<EcpayInvoiceTrade> {
  const ecpay = await ecpayMerchantOf(context, trade.organization, trade.environment);
  const issued = ecpay && (await queryPaymentInfo(ecpay.merchant, trade.tradeNo, context.now()).catch(() => null));
  if (!issued) return trade;
  await dependenciesOf(context).ecpayInvoiceTrades.issued(trade.tradeNo, instructionsOf(issued));
  return (await dependenciesOf(context).ecpayInvoiceTrades.find(trade.chargeKey))!;
}

/**
 * The buyer asks ECPay for the account or code: the AioCheckOut form of the key's trade, open
 * until the deadline (`codeExpiryOf`).
 * Null when the page may not send the buyer to ECPay: past its deadline, already sent (ECPay opens
 * a MerchantTradeNo once), or the organization no longer pays through ECPay.
 */
export async function openInvoicePayment(context: ServiceContext, trade: EcpayInvoiceTrade): Promise<AioForm | null> {
  const ecpay = await ecpayMerchantOf(context, trade.organization, trade.environment);
  const now = context.now();
  if (!ecpay || trade.openedAt || trade.paidAt) return null;
  if (!(await dependenciesOf(context).ecpayInvoiceTrades.open(trade.chargeKey, now))) return null;
  const pageUrl = invoicePageUrl(context, trade.pageToken);
  return aioCheckOutForm(ecpay.merchant, {
    idempotencyKey: trade.chargeKey,
    amount: trade.amount,
    method: trade.method === 'atm' ? 'ATM' : 'CVS',
    itemName: 'Subscription renewal',
    description: 'Subscription renewal',
    now,
    returnUrl: `${pageUrl}/ecpay/result`,
    paymentInfoUrl: `${pageUrl}/ecpay/payment-info`,
    clientBackUrl: pageUrl,
    ...codeExpiryOf(trade.deadline.getTime() - now.getTime()),
  });
}

/**
 * How long ECPay keeps the account or code open when `leftMs` remain before the deadline: an ATM
 * account whole days, rounded up (1-60: it may then run a little past the deadline, and ECPay's
 * own expiry counts); a store code to the minute, rounded down (1-43,200).
 */
export function codeExpiryOf(leftMs: number): { atmExpireDays: number; cvsExpireMinutes: number } {
  return {
    atmExpireDays: Math.min(60, Math.max(1, Math.ceil(leftMs / DAY_MS))),
    cvsExpireMinutes: Math.min(MAX_CVS_MINUTES, Math.max(1, Math.floor(leftMs / MINUTE_MS))),
  };
}

/**
 * ECPay's post about a renewal's trade (the account issued, or paid), checked with the
 * organization's keys: the account is kept for the page and billing's next ask, a payment noted
 * so that the next ask goes to the trade query at once. Answers the post's charge key and
 * whether it said paid, or null when it does not check out (ECPay is answered `1|OK` only when
 * it does, otherwise it may stop resending).
 */
export async function acceptEcpayInvoiceNotification(
  context: ServiceContext,
  pageToken: string,
  body: Record<string, unknown>,
): Promise<{ chargeKey: string; paid: boolean } | null> {
  const trades = dependenciesOf(context).ecpayInvoiceTrades;
  const trade = await trades.findByPage(pageToken);
  const ecpay = trade && (await ecpayMerchantOf(context, trade.organization, trade.environment));
  if (!trade || !ecpay) return null;
  try {
    const notification = readNotification(body, ecpay.merchant);
    if (notification.tradeNo !== trade.tradeNo) return null;
    if (notification.kind === 'atm_issued' || notification.kind === 'cvs_issued') {
      await trades.issued(trade.tradeNo, instructionsOf(notification));
    }
    const paid = notification.kind === 'paid';
    if (paid) await trades.paid(trade.tradeNo, context.now());
    return { chargeKey: trade.chargeKey, paid };
  } catch (error) {
    if (error instanceof RejectedNotification) return null;
    throw error;
  }
}
