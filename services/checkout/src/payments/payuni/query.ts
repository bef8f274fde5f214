import { PayuniCipherError, open, seal } from './crypto';
import { PAYUNI_PATHS, type PayuniMerchant, parsePayuniDateTime } from './merchant';

/**
 * PAYUNi's answer about one trade (交易查詢, /api/trade/query, Version 2.0): TradeStatus 1 paid;
 * 0 (code issued), 8 (to be confirmed) and 9 not paid yet; 2 failed and 3 cancelled; 4 expired.
 * A verified answer that lists no trade is `unknown_trade`.
 *
 * A paid trade's `refunded` is the TWD refunded of it so far (`refundPayuniTrade`): PAYUNi's
 * `RefundAmt`, 0 when the answer has none. The field is the one a recorded answer in
 * slps970093/Omnipay-Payuni's tests shows (a card trade of 10 refunded whole: TradeStatus still 1,
 * RefundAmt 10, RemainAmt 0); that it sums several partial refunds is this client's reading, no
 * source shows two. A refund's caller reads it after a lost answer before asking again.
 *
 * A paid card trade's `capture` is its CloseStatus (請款狀態) as fluentcart-payuni's refund reads
 * it from `Result[0][CloseStatus]`: 1 請款申請中 `requested` (the authorisation is canceled, not
 * refunded, `cancelPayuniAuthorization`), 2 請款成功 `captured` and 7 請款處理中 `processing`
 * (refunded by trade/close), 3 請款取消 `canceled` (nothing is taken), 9 未申請 `not_requested`;
 * absent or another value is `unknown` (an ATM or store payment has none in the emulator).
 */
export type PayuniTradeStatus =
  | {
      status: 'paid';
      payuniTradeNo: string;
      amount: number;
      paidAt: Date | null;
      paymentType: string;
      refunded: number;
      capture: PayuniCapture;
    }
  | { status: 'unpaid'; payuniTradeNo: string; amount: number; paymentType: string; tradeStatus: string }
  | { status: 'failed'; payuniTradeNo: string; tradeStatus: string }
  | { status: 'expired'; payuniTradeNo: string }
  | { status: 'unknown_trade' };

/** A paid card trade's CloseStatus (請款狀態), above. */
export type PayuniCapture = 'requested' | 'captured' | 'processing' | 'canceled' | 'not_requested' | 'unknown';

const CAPTURES: Record<string, PayuniCapture> = {
  '1': 'requested',
  '2': 'captured',
  '3': 'canceled',
  '7': 'processing',
  '9': 'not_requested',
};

/** No answer that can be trusted (network, HTTP status, not JSON, an error, a HashInfo or GCM tag that does not check): ask again later. */
export class QueryUnanswered extends Error {}

/** The query's Version: two independent integrations (WPBrewer, RY) read `Result[0][...]` from 2.0. */
export const TRADE_QUERY_VERSION = '2.0';

export async function queryPayuniTrade(
  merchant: PayuniMerchant,
  tradeNo: string,
  now: Date,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): Promise<PayuniTradeStatus> {
  const request = seal(
    merchant.merchantId,
    { MerID: merchant.merchantId, MerTradeNo: tradeNo, Timestamp: String(Math.floor(now.getTime() / 1000)) },
    merchant,
    TRADE_QUERY_VERSION,
  );
  let body: string;
  try {
    const response = await (options.fetch ?? fetch)(`${merchant.baseUrl}${PAYUNI_PATHS.tradeQuery}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(request).toString(),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    if (!response.ok) throw new QueryUnanswered(`trade/query answered HTTP ${response.status}`);
    body = await response.text();
  } catch (error) {
    if (error instanceof QueryUnanswered) throw error;
    throw new QueryUnanswered(`trade/query did not answer: ${(error as Error).message}`);
  }
  let answer: Record<string, unknown>;
  try {
    answer = JSON.parse(body) as Record<string, unknown>;
  } catch {
    throw new QueryUnanswered('trade/query answer is not JSON');
  }
  if (!answer || typeof answer !== 'object') throw new QueryUnanswered('trade/query answer is not an object');
  return tradeStatusOf(answer, merchant, tradeNo);
}

function tradeStatusOf(answer: Record<string, unknown>, merchant: PayuniMerchant, tradeNo: string): PayuniTradeStatus {
  if (answer.Status !== 'SUCCESS') {
    // Errors come back without EncryptInfo (payuni/PHP_SDK ResultProcess): nothing to verify.
    throw new QueryUnanswered(`trade/query answered Status ${String(answer.Status)}: ${String(answer.Message ?? '')}`);
  }
  let info: Record<string, string>;
  try {
    info = open(answer, merchant);
  } catch (error) {
    if (error instanceof PayuniCipherError) throw new QueryUnanswered(`trade/query answer: ${error.message}`);
    throw error;
  }
  if (answer.MerID !== merchant.merchantId) throw new QueryUnanswered('trade/query answered for another merchant');
  // Version 2.0 lists trades as Result[0][Name]; an answer of Version 1.0 has them flat.
  const field = (name: string) => info[`Result[0][${name}]`] ?? info[name];
  const answeredTradeNo = field('MerTradeNo');
  if (answeredTradeNo === undefined) return { status: 'unknown_trade' };
  if (answeredTradeNo !== tradeNo) throw new QueryUnanswered('trade/query answered about another trade');
  const payuniTradeNo = field('TradeNo') ?? '';
  const amount = Number(field('TradeAmt') ?? NaN);
  const paymentType = field('PaymentType') ?? '';
  const tradeStatus = field('TradeStatus') ?? '';
  switch (tradeStatus) {
    case '1':
      return {
        status: 'paid',
        payuniTradeNo,
        amount,
        paymentType,
        paidAt: parsePayuniDateTime(field('PaymentDay') ?? ''),
        refunded: refundedOf(field('RefundAmt'), amount),
        capture: CAPTURES[field('CloseStatus') ?? ''] ?? 'unknown',
      };
    case '0':
    case '8':
    case '9':
      return { status: 'unpaid', payuniTradeNo, amount, paymentType, tradeStatus };
    case '2':
    case '3':
      return { status: 'failed', payuniTradeNo, tradeStatus };
    case '4':
      return { status: 'expired', payuniTradeNo };
    default:
      throw new QueryUnanswered(`trade/query answered a TradeStatus this client does not know: ${tradeStatus}`);
  }
}

/**
 * RefundAmt: absent or empty is nothing refunded; anything but an integer from 0 to the trade's
 * amount is not trusted.
 */
function refundedOf(text: string | undefined, amount: number): number {
  if (text === undefined || text === '') return 0;
  const refunded = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(refunded) || (Number.isSafeInteger(amount) && refunded > amount)) {
    throw new QueryUnanswered(`trade/query answered a RefundAmt this client does not trust: ${text}`);
  }
  return refunded;
}
