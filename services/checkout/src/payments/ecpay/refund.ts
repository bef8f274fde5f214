import { hasValidCheckMac } from './check-mac';
import type { EcpayMerchant } from './merchant';
import { type EcpayCallOptions, postSigned } from './post';

/**
 * A card refund at ECPay (信用卡請退款, CreditDetail/DoAction, ?p=9242): Action `R` (退刷) gives
 * back `amount` of one authorisation, named by the merchant's MerchantTradeNo and ECPay's
 * TradeNo (a plan's period has its own TradeNo). ECPay documents R for a captured trade (已關帳,
 * after its daily 20:15 capture) and for a partial refund of one being captured (要關帳). A whole
 * refund (`amount` is all the authorisation took) that R cannot make is, as ECPay's document
 * says, `N` (放棄) while the trade is authorised only (已授權, the day of payment), or `E` (取消
 * the capture) then `N` while it is being captured: tried in that order, each refused without
 * effect when the trade is not in its state. A partial refund before the capture cannot be made
 * (ECPay refuses; it can be asked again once the trade is captured). ECPay's staging site
 * cannot run DoAction (no real authorisation there). ATM and store payments have no refund API.
 * ECPay takes no key for a refund: the caller asks once (docs/payments.md).
 */
export type EcpayRefundOutcome = { status: 'refunded' } | { status: 'refused'; code: string; message: string };

/** No answer that can be trusted: the refund may or may not have been made. Never asked again blindly. */
export class EcpayRefundUnanswered extends Error {}

/** One authorisation at ECPay, and what it took (TWD). */
export type EcpayRefundTrade = { merchantTradeNo: string; ecpayTradeNo: string; amount: number; authorised?: number };

export async function refundEcpayTrade(
  merchant: EcpayMerchant,
  trade: EcpayRefundTrade,
  options: EcpayCallOptions = {},
): Promise<EcpayRefundOutcome> {
  if (!Number.isSafeInteger(trade.amount) || trade.amount <= 0) {
    throw new RangeError(`A refund is a positive integer of TWD, not ${trade.amount}`);
  }
  const refund = await doAction(merchant, trade, 'R', options);
  if (refund.status === 'refunded' || trade.amount !== trade.authorised) return refund;
  const abandoned = await doAction(merchant, trade, 'N', options);
  if (abandoned.status === 'refunded') return abandoned;
  const uncaptured = await doAction(merchant, trade, 'E', options);
  if (uncaptured.status !== 'refunded') return refund;
  const after = await doAction(merchant, trade, 'N', options);
  if (after.status === 'refunded') return after;
  // The capture is canceled and the trade authorised again, as it was on the day of payment.
  return { ...after, message: `ECPay canceled the capture but did not abandon the authorisation: ${after.message}` };
}

/** One DoAction on the trade for its whole `amount`: done (`refunded`), or ECPay's refusal. */
async function doAction(
  merchant: EcpayMerchant,
  trade: EcpayRefundTrade,
  action: 'R' | 'N' | 'E',
  options: EcpayCallOptions,
): Promise<EcpayRefundOutcome> {
  const fields: Record<string, string> = {
    MerchantID: merchant.merchantId,
    MerchantTradeNo: trade.merchantTradeNo,
    TradeNo: trade.ecpayTradeNo,
    Action: action,
    TotalAmount: String(trade.amount),
  };
  const body = await postSigned(
    merchant,
    '/CreditDetail/DoAction',
    fields,
    { ...options, timeoutMs: options.timeoutMs ?? 30_000 },
    EcpayRefundUnanswered,
  );
  const answer = Object.fromEntries(new URLSearchParams(body));
  // ECPay's PHP SDK checks the answer's CheckMacValue (PostWithCmvEncodedStrResponseService).
  if (!hasValidCheckMac(answer, merchant) || answer.MerchantTradeNo !== trade.merchantTradeNo) {
    throw new EcpayRefundUnanswered('DoAction answered without a matching CheckMacValue');
  }
  return answer.RtnCode === '1'
    ? { status: 'refunded' }
    : { status: 'refused', code: answer.RtnCode ?? '', message: answer.RtnMsg ?? '' };
}
