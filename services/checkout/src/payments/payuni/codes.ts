import { PAYUNI_PATHS, type PayuniMerchant, parsePayuniDateTime, payuniDate } from './merchant';
import type { PayuniNotification } from './notifications';
import { postSealed } from './post';
import { payuniTradeNo } from './upp';

/**
 * ATM accounts and convenience-store codes issued server to server (虛擬帳號幕後 `/api/atm`,
 * 超商代碼幕後 `/api/cvs`, Version 1.0), for a payment the buyer is not on a page for (an
 * invoice to pay by transfer). Fields from PAYUNi's PHP SDK (its `UniversalTrade` modes `atm` and
 * `cvs`, the sample's `BankType`) and the UPP return tables: inside EncryptInfo the answer holds
 * `PayNo`, `BankType` (ATM) or `Store` (CVS), `ExpireDate` and PAYUNi's `TradeNo`. The payment
 * itself is posted to NotifyURL and read by the trade query, as a UPP payment is.
 */
export type PayuniCodeOrder = {
  /** The platform's charge key: one trade per key (`payuniTradeNo`). */
  idempotencyKey: string;
  /** Integer TWD, more than 0. */
  amount: number;
  method: 'atm' | 'cvs';
  description: string;
  notifyUrl: string;
  email?: string;
  /** Days to pay, 1-180. */
  expireDays: number;
  now: Date;
};

/** An account or code issued, as PAYUNi's NotifyURL post names one (`PayuniNotification`). */
export type PayuniIssuedCode = Extract<PayuniNotification, { kind: 'atm_issued' | 'cvs_issued' }>;

/** PAYUNi refused to issue the code (a signed answer other than SUCCESS): nothing to pay. */
export type PayuniCodeRefusal = { kind: 'refused'; status: string; message: string };

/** No answer that can be trusted: a code may have been issued that no one will see; it expires unpaid. */
export class CodeIssueUnanswered extends Error {}

/** The account bank PAYUNi's SDK sample names (822, CTBC Bank); the merchant's contract may allow others. */
export const PAYUNI_ATM_BANK = '822';

export async function issuePayuniCode(
  merchant: PayuniMerchant,
  order: PayuniCodeOrder,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): Promise<PayuniIssuedCode | PayuniCodeRefusal> {
  if (!Number.isSafeInteger(order.amount) || order.amount <= 0) {
    throw new RangeError(`A PAYUNi trade is a positive integer of TWD, not ${order.amount}`);
  }
  if (!Number.isInteger(order.expireDays) || order.expireDays < 1 || order.expireDays > 180) {
    throw new RangeError('ATM and CVS codes stay open 1-180 days');
  }
  const tradeNo = payuniTradeNo(order.idempotencyKey);
  const fields: Record<string, string> = {
    MerID: merchant.merchantId,
    MerTradeNo: tradeNo,
    TradeAmt: String(order.amount),
    Timestamp: String(Math.floor(order.now.getTime() / 1000)),
    ProdDesc: order.description.slice(0, 200),
    NotifyURL: order.notifyUrl,
    ExpireDate: payuniDate(new Date(order.now.getTime() + order.expireDays * 86_400_000)),
    ...(order.email ? { UsrMail: order.email } : {}),
    ...(order.method === 'atm' ? { BankType: PAYUNI_ATM_BANK } : {}),
  };
  const path = order.method === 'atm' ? PAYUNI_PATHS.atm : PAYUNI_PATHS.cvs;
  const inside = await postSealed(
    merchant,
    path,
    '1.0',
    fields,
    { timeoutMs: options.timeoutMs ?? 15_000, fetch: options.fetch },
    CodeIssueUnanswered,
  );
  if (inside.MerTradeNo !== tradeNo) throw new CodeIssueUnanswered(`${path} answered about another trade`);
  if (inside.Status !== 'SUCCESS') {
    return { kind: 'refused', status: inside.Status ?? '', message: inside.Message ?? '' };
  }
  const expiresAt = parsePayuniDateTime(inside.ExpireDate ?? '');
  const amount = Number(inside.TradeAmt ?? NaN);
  if (!inside.PayNo || !expiresAt || amount !== order.amount) {
    throw new CodeIssueUnanswered(`${path} answered SUCCESS without a code, a deadline or the amount`);
  }
  const common = { tradeNo, payuniTradeNo: inside.TradeNo ?? '', amount, expiresAt };
  return order.method === 'atm'
    ? { kind: 'atm_issued', ...common, bankCode: inside.BankType ?? PAYUNI_ATM_BANK, account: inside.PayNo }
    : { kind: 'cvs_issued', ...common, store: inside.Store ?? '', paymentNo: inside.PayNo };
}
