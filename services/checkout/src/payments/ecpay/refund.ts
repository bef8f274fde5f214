import { hasValidCheckMac } from './check-mac';
import type { EcpayMerchant } from './merchant';
import { type EcpayCallOptions, postSigned } from './post';

/**
 * A card refund at ECPay (信用卡請退款, CreditDetail/DoAction, ?p=2885): Action `R` (退刷) gives
 * back `amount` of one authorisation, named by the merchant's MerchantTradeNo and ECPay's
 * TradeNo (a plan's period has its own TradeNo). ECPay documents R for a captured trade (已關帳,
 * after its daily 20:15 capture) and for a partial refund of one waiting to be captured; a whole
 * refund on the day of payment is E then N instead, which this client does not send. ECPay's
 * staging site cannot run it (no real authorisation there). ATM and store payments have no
 * refund API. ECPay takes no key for a refund: the caller asks once (docs/payments.md).
 */
export type EcpayRefundOutcome = { status: 'refunded' } | { status: 'refused'; code: string; message: string };

/** No answer that can be trusted: the refund may or may not have been made. Never asked again blindly. */
export class EcpayRefundUnanswered extends Error {}

export async function refundEcpayTrade(
  merchant: EcpayMerchant,
  trade: { merchantTradeNo: string; ecpayTradeNo: string; amount: number },
  options: EcpayCallOptions = {},
): Promise<EcpayRefundOutcome> {
  if (!Number.isSafeInteger(trade.amount) || trade.amount <= 0) {
    throw new RangeError(`A refund is a positive integer of TWD, not ${trade.amount}`);
  }
  const fields: Record<string, string> = {
    MerchantID: merchant.merchantId,
    MerchantTradeNo: trade.merchantTradeNo,
    TradeNo: trade.ecpayTradeNo,
    Action: 'R',
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
