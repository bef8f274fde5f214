import type { ServerResponse } from 'node:http';
import { checkMacValue, hasValidCheckMac } from './check-mac';
import type { EcpayMerchant } from './merchant';

/**
 * CreditDetail/DoAction of the ECPay emulator: Action R refunds part or all of one card
 * authorisation (a trade's, or a plan period's by its TradeNo), never more than it took. The
 * refunded totals are kept by ECPay TradeNo.
 */
type RefundableTrade = {
  fields: Record<string, string>;
  ecpayTradeNo: string;
  status: string;
  plan?: { executions: { RtnCode: string; amount: number; TradeNo: string }[] };
};

export function answerDoAction(
  fields: Record<string, string>,
  merchant: Omit<EcpayMerchant, 'baseUrl'>,
  trades: Map<string, RefundableTrade>,
  refunded: Map<string, number>,
  res: ServerResponse,
): void {
  if (!hasValidCheckMac(fields, merchant) || fields.MerchantID !== merchant.merchantId) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('CheckMacValue Error');
    return;
  }
  const answer = (code: string, message: string) => {
    const out = {
      MerchantID: merchant.merchantId,
      MerchantTradeNo: fields.MerchantTradeNo ?? '',
      TradeNo: fields.TradeNo ?? '',
      RtnCode: code,
      RtnMsg: message,
    };
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(new URLSearchParams({ ...out, CheckMacValue: checkMacValue(out, merchant) }).toString());
  };
  const trade = trades.get(fields.MerchantTradeNo ?? '');
  const authorised = authorisedAmount(trade, fields.TradeNo ?? '');
  if (authorised === null) return answer('10100050', 'error_nopay');
  if (fields.Action !== 'R') return answer('10100051', 'Action Error');
  const amount = Number(fields.TotalAmount);
  const before = refunded.get(fields.TradeNo!) ?? 0;
  if (!Number.isInteger(amount) || amount <= 0 || before + amount > authorised) {
    return answer('10100052', 'TotalAmount Error: more than the authorisation');
  }
  refunded.set(fields.TradeNo!, before + amount);
  answer('1', '退刷成功');
}

/** What a paid card authorisation took: the trade's own, or a plan period's; null when there is none. */
function authorisedAmount(trade: RefundableTrade | undefined, tradeNo: string): number | null {
  if (!trade || trade.status !== 'paid' || trade.fields.ChoosePayment !== 'Credit') return null;
  if (tradeNo === trade.ecpayTradeNo) return Number(trade.fields.TotalAmount);
  const period = trade.plan?.executions.find((execution) => execution.TradeNo === tradeNo && execution.RtnCode === '1');
  return period ? period.amount : null;
}
