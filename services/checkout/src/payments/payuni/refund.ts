import { postSealed } from './post';
import { PAYUNI_PATHS, type PayuniMerchant } from './merchant';

/**
 * Refunds of PAYUNi card trades (交易請退款, /api/trade/close), as the code that calls it shows
 * it (PAYUNi's API document could not be read):
 *
 * - the path and what it requires: payuni/PHP_SDK `src/PayuniApi.php` maps `trade_close` to
 *   `trade/close` and requires `TradeNo` (PAYUNi's own trade number, UNi序號, not MerTradeNo)
 *   and `CloseType`; payuni/NET_SDK's EncryptInfoModel lists CloseType and TradeNo for it;
 * - CloseType: 1 請款 (capture) and 2 退款 (refund). RY's ry-woocommerce-tools `credit_close`
 *   sends '1' for a closure and '2' for a refund; WPBrewer's wpbr-payuni-payment sends
 *   `CloseType => 2, // 2=退款`; the PHP SDK's example sends 1. No source found names 3
 *   (取消請款) or 4 (取消退款): this client sends 2 only;
 * - the amount: `TradeAmt`, integer TWD. WPBrewer, RY and fishtvlvoe/fluentcart-payuni (BuyGo's
 *   FluentCart plugin) all send TradeAmt with CloseType 2; none sends a `CloseAmt`. Sending less
 *   than the trade refunds a part of it (RY's refund button sends whatever amount is typed);
 * - Version 1.0 (WPBrewer, RY and fluentcart-payuni);
 * - the answer: `{ Status, MerID, Version, EncryptInfo, HashInfo }` with Status and Message
 *   inside (RY and fluentcart-payuni read the inside's Status, WPBrewer the outside's and the
 *   inside's Message even on a failure; the tests of slps970093/Omnipay-Payuni record Status,
 *   Message, MerID, TradeNo and CloseType inside).
 *
 * Where the sources are silent this client chooses: an answer that names another TradeNo, or a
 * SUCCESS that names another TradeAmt, is not trusted; Status UNKNOWN is not trusted (as for
 * charges); a TradeNo is 1-40 letters or digits (every one seen is 19-20 digits); an unsigned
 * error is not trusted either, as for charges, so a refusal PAYUNi does not sign throws.
 *
 * PAYUNi refunds only a captured trade (CloseStatus 2, 請款成功): WPBrewer tells merchants to
 * refund a trade paid today tomorrow, and fluentcart-payuni cancels the authorization
 * (/api/trade/cancel, `cancelPayuniAuthorization` below) while the capture is requested
 * (CloseStatus 1). The caller chooses between them by the trade query's CloseStatus.
 */
export type PayuniRefundOutcome = { status: 'refunded' } | { status: 'refused'; code: string; message: string };

/**
 * No answer that can be trusted about a refund (network, timeout, HTTP status, not JSON, an
 * unsigned error, a HashInfo or GCM tag that does not check, an answer about another trade or
 * amount, Status UNKNOWN): the refund may have been made. Never ask again blindly; read
 * `refunded` from `queryPayuniTrade` first.
 */
export class RefundUnanswered extends Error {}

/** trade/close is Version 1.0 in every integration found. */
export const TRADE_CLOSE_VERSION = '1.0';
/** CloseType 2: 退款 (1 would be 請款, a capture). */
export const CLOSE_TYPE_REFUND = '2';

/** PAYUNi's TradeNo (UNi序號): digits in every answer seen; letters are let through. */
const PAYUNI_TRADE_NO = /^[A-Za-z0-9]{1,40}$/;
/** WPBrewer and RY wait 30 s for trade/close. */
const REFUND_TIMEOUT_MS = 30_000;

/**
 * Refunds `request.amount` (integer TWD, more than 0, at most what is left of the trade) of the
 * paid card trade PAYUNi numbered `request.payuniTradeNo`. Refunded: PAYUNi said SUCCESS, signed.
 * Refused: PAYUNi said another Status, signed (its Status lower-cased is the code). Throws a
 * RangeError or Error on a request PAYUNi would refuse, before any call, and `RefundUnanswered`
 * when there is no answer to trust.
 *
 * trade/close carries no number of the merchant's, so PAYUNi cannot tell a second ask from a new
 * refund: asking again after a lost answer may refund twice. The caller makes each refund happen
 * once: it knows the refunded total before asking (`refunded` of the paid `queryPayuniTrade`),
 * and after `RefundUnanswered` it reads `refunded` again before asking anew: at the old total
 * plus this amount, the refund was made; still at the old total, it was not and may be asked
 * again; anything else is for a person to look at.
 */
export async function refundPayuniTrade(
  merchant: PayuniMerchant,
  request: { payuniTradeNo: string; amount: number },
  now: Date,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): Promise<PayuniRefundOutcome> {
  const { payuniTradeNo, amount } = request;
  if (!PAYUNI_TRADE_NO.test(payuniTradeNo)) throw new Error('A PAYUNi TradeNo is 1-40 letters or digits');
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    throw new RangeError(`A PAYUNi refund is a positive integer of TWD, not ${amount}`);
  }
  const path = PAYUNI_PATHS.tradeClose;
  const fields = {
    MerID: merchant.merchantId,
    TradeNo: payuniTradeNo,
    Timestamp: String(Math.floor(now.getTime() / 1000)),
    CloseType: CLOSE_TYPE_REFUND,
    TradeAmt: String(amount),
  };
  const inside = await postSealed(
    merchant,
    path,
    TRADE_CLOSE_VERSION,
    fields,
    { ...options, timeoutMs: options.timeoutMs ?? REFUND_TIMEOUT_MS },
    RefundUnanswered,
  );
  const outcome = outcomeOf(path, inside, payuniTradeNo);
  if (outcome.status === 'refunded' && inside.TradeAmt !== undefined && inside.TradeAmt !== String(amount)) {
    throw new RefundUnanswered(`PAYUNi answered a refund of ${inside.TradeAmt}, not ${amount}: ask the trade query`);
  }
  return outcome;
}

/**
 * The signed answer of trade/close or trade/cancel about `payuniTradeNo`: SUCCESS is made, another
 * Status refused; one about another trade, or without a Status, or UNKNOWN, is not trusted.
 */
function outcomeOf(path: string, inside: Record<string, string>, payuniTradeNo: string): PayuniRefundOutcome {
  if (inside.TradeNo !== undefined && inside.TradeNo !== payuniTradeNo) {
    throw new RefundUnanswered(`${path} answered about another trade (${inside.TradeNo})`);
  }
  const status = inside.Status ?? '';
  if (!status) throw new RefundUnanswered(`${path} answer has no Status`);
  if (status.toUpperCase() === 'UNKNOWN') {
    throw new RefundUnanswered(`PAYUNi does not know the result of ${path} yet (${status}): ask the trade query`);
  }
  if (status !== 'SUCCESS') return { status: 'refused', code: status.toLowerCase(), message: inside.Message ?? '' };
  return { status: 'refunded' };
}

/**
 * Cancels the authorisation of a card trade whose capture is requested and not done (交易取消授權,
 * /api/trade/cancel): the whole trade goes back to the buyer's card and nothing is captured. As
 * fluentcart-payuni's `cancelTrade` sends it (the path mapped in payuni/PHP_SDK and NET_SDK, which
 * require TradeNo alone for it): Version 1.0, MerID, TradeNo (PAYUNi's UNi序號) and Timestamp, no
 * amount; its answer read like trade/close's, SUCCESS inside or not. Refused: a signed Status other
 * than SUCCESS. Throws `RefundUnanswered` when there is no answer to trust: the caller then reads
 * the trade's CloseStatus before asking again (3, 請款取消, once canceled).
 */
export async function cancelPayuniAuthorization(
  merchant: PayuniMerchant,
  request: { payuniTradeNo: string },
  now: Date,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): Promise<PayuniRefundOutcome> {
  if (!PAYUNI_TRADE_NO.test(request.payuniTradeNo)) throw new Error('A PAYUNi TradeNo is 1-40 letters or digits');
  const path = PAYUNI_PATHS.tradeCancel;
  const fields = {
    MerID: merchant.merchantId,
    TradeNo: request.payuniTradeNo,
    Timestamp: String(Math.floor(now.getTime() / 1000)),
  };
  const inside = await postSealed(
    merchant,
    path,
    TRADE_CLOSE_VERSION,
    fields,
    { ...options, timeoutMs: options.timeoutMs ?? REFUND_TIMEOUT_MS },
    RefundUnanswered,
  );
  return outcomeOf(path, inside, request.payuniTradeNo);
}
