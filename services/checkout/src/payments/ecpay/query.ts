import { hasValidCheckMac } from './check-mac';
import { type EcpayCallOptions, postSigned } from './post';
import { type EcpayMerchant, parseEcpayDateTime } from './merchant';
import { type EcpayNotification, readNotification } from './notifications';

/**
 * ECPay's answer about one trade (查詢訂單, Cashier/QueryTradeInfo/V5): TradeStatus 1 is paid,
 * 0 not paid (yet: a card the bank has not answered, an ATM or CVS payment not made), and
 * 10200095 failed; a trade ECPay does not know is `unknown_trade`.
 */
export type TradeStatus =
  | { status: 'paid'; ecpayTradeNo: string; amount: number; paidAt: Date | null; paymentType: string }
  | { status: 'unpaid'; ecpayTradeNo: string; amount: number; paymentType: string }
  | { status: 'failed'; ecpayTradeNo: string; code: string }
  | { status: 'unknown_trade' };

/** No answer that can be trusted (network, HTTP status, a CheckMacValue that does not match): ask again later. */
export class QueryUnanswered extends Error {}

type Options = EcpayCallOptions;

const unixSeconds = (now: Date) => String(Math.floor(now.getTime() / 1000));

export async function queryTrade(
  merchant: EcpayMerchant,
  tradeNo: string,
  now: Date,
  options: Options = {},
): Promise<TradeStatus> {
  const fields = await ask(merchant, '/Cashier/QueryTradeInfo/V5', tradeNo, now, options);
  return tradeStatusOf(fields, merchant, tradeNo);
}

/**
 * QueryPaymentInfo (查詢 ATM/CVS 取號結果): the account or code ECPay issued for the trade, read
 * as its PaymentInfoURL post is (the answer carries the same signed fields); null when ECPay
 * issued none. For a PaymentInfoURL post that never arrived.
 */
export async function queryPaymentInfo(
  merchant: EcpayMerchant,
  tradeNo: string,
  now: Date,
  options: Options = {},
): Promise<Extract<EcpayNotification, { kind: 'atm_issued' | 'cvs_issued' }> | null> {
  const fields = await ask(merchant, '/Cashier/QueryPaymentInfo', tradeNo, now, options);
  let answer: EcpayNotification;
  try {
    answer = readNotification(fields, merchant);
  } catch {
    throw new QueryUnanswered('QueryPaymentInfo answer has a wrong CheckMacValue or merchant');
  }
  if (answer.tradeNo !== tradeNo) throw new QueryUnanswered('QueryPaymentInfo answered about another trade');
  return answer.kind === 'atm_issued' || answer.kind === 'cvs_issued' ? answer : null;
}

/** Posts a query about `tradeNo` signed with the merchant's keys; its answer's fields, or `QueryUnanswered`. */
async function ask(
  merchant: EcpayMerchant,
  path: string,
  tradeNo: string,
  now: Date,
  options: Options,
): Promise<Record<string, string>> {
  const request = { MerchantID: merchant.merchantId, MerchantTradeNo: tradeNo, TimeStamp: unixSeconds(now) };
  const body = await postSigned(
    merchant,
    path,
    request,
    { ...options, timeoutMs: options.timeoutMs ?? 10_000 },
    QueryUnanswered,
  );
  return Object.fromEntries(new URLSearchParams(body));
}

function tradeStatusOf(fields: Record<string, string>, merchant: EcpayMerchant, tradeNo: string): TradeStatus {
  if (!hasValidCheckMac(fields, merchant)) throw new QueryUnanswered('QueryTradeInfo answer has a wrong CheckMacValue');
  if (fields.MerchantTradeNo !== tradeNo) throw new QueryUnanswered('QueryTradeInfo answered about another trade');
  const ecpayTradeNo = fields.TradeNo ?? '';
  const amount = Number(fields.TradeAmt ?? 0);
  const paymentType = fields.PaymentType ?? '';
  switch (fields.TradeStatus) {
    case '1':
      return {
        status: 'paid',
        ecpayTradeNo,
        amount,
        paidAt: parseEcpayDateTime(fields.PaymentDate ?? ''),
        paymentType,
      };
    case '0':
      return ecpayTradeNo ? { status: 'unpaid', ecpayTradeNo, amount, paymentType } : { status: 'unknown_trade' };
    default:
      return { status: 'failed', ecpayTradeNo, code: fields.TradeStatus ?? '' };
  }
}
