import type { ServerResponse } from 'node:http';
import { nextDailyCapture } from './capture';
import { checkMacValue, hasValidCheckMac } from './check-mac';
import { type EcpayMerchant, parseEcpayDateTime } from './merchant';

/**
 * CreditDetail/DoAction of the ECPay emulator (信用卡請退款, ?p=9242): a card authorisation (a
 * trade's, or a plan period's by its TradeNo) is 已授權 until ECPay's capture, 要關帳 while the
 * capture is under way, then 已關帳. `R` (退刷) refunds a captured one in part or whole, and one
 * being captured in part; `N` (放棄) abandons an uncaptured one whole; `E` (取消) cancels a capture
 * under way, back to 已授權. Never more than the authorisation is given back. The refunded totals
 * are kept by ECPay TradeNo.
 */
type RefundableTrade = {
  fields: Record<string, string>;
  ecpayTradeNo: string;
  status: string;
  paidAt?: Date;
  plan?: { executions: { RtnCode: string; amount: number; TradeNo: string; process_date: string }[] };
};

/**
 * When the emulator captures (請款, 關帳) an authorisation: `at_once` (the default: every trade is
 * 已關帳 when paid, as ECPay does a UnionPay card's), or `daily`: at ECPay's automatic capture at
 * 20:15 Taiwan time after the authorisation (每日自動關帳), 已關帳 a day after that. ECPay does not
 * say when the bank's capture completes; the day is the emulator's choice.
 */
export type CaptureMode = 'at_once' | 'daily';

type CaptureState = 'authorised' | 'capturing' | 'captured' | 'abandoned';

const DAY_MS = 24 * 3600_000;

/** The captures of the emulator's authorisations, by ECPay TradeNo, on the emulator's clock. */
export class EmulatedCaptures {
  mode: CaptureMode = 'at_once';
  private readonly abandoned = new Set<string>();
  /** Captures canceled (E): captured again at the next 20:15 after the cancel. */
  private readonly canceledAt = new Map<string, Date>();

  constructor(private readonly now: () => Date) {}

  stateOf(tradeNo: string, authorisedAt: Date): CaptureState {
    if (this.abandoned.has(tradeNo)) return 'abandoned';
    if (this.mode === 'at_once') return 'captured';
    const capture = nextDailyCapture(this.canceledAt.get(tradeNo) ?? authorisedAt).getTime();
    const now = this.now().getTime();
    if (now < capture) return 'authorised';
    return now < capture + DAY_MS ? 'capturing' : 'captured';
  }

  abandon(tradeNo: string): void {
    this.abandoned.add(tradeNo);
  }

  cancelCapture(tradeNo: string): void {
    this.canceledAt.set(tradeNo, this.now());
  }
}

export function answerDoAction(
  fields: Record<string, string>,
  merchant: Omit<EcpayMerchant, 'baseUrl'>,
  trades: Map<string, RefundableTrade>,
  refunded: Map<string, number>,
  captures: EmulatedCaptures,
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
  const tradeNo = fields.TradeNo ?? '';
  const authorisation = authorisationOf(trades.get(fields.MerchantTradeNo ?? ''), tradeNo);
  if (authorisation === null) return answer('10100050', 'error_nopay');
  const state = captures.stateOf(tradeNo, authorisation.at);
  const before = refunded.get(tradeNo) ?? 0;
  const amount = Number(fields.TotalAmount);
  if (!Number.isInteger(amount) || amount <= 0) return answer('10100052', 'TotalAmount Error');
  // The codes of the refusals below are the emulator's own: ECPay's documents name the states, not their codes.
  switch (fields.Action) {
    case 'R': {
      if (state === 'authorised' || state === 'abandoned') return answer('10100253', '訂單尚未關帳');
      if (before + amount > authorisation.amount)
        return answer('10100052', 'TotalAmount Error: more than the authorisation');
      if (state === 'capturing' && amount === authorisation.amount) {
        return answer('10100254', '要關帳訂單全額退款請先取消再放棄');
      }
      refunded.set(tradeNo, before + amount);
      return answer('1', '退刷成功');
    }
    case 'N':
      if (state !== 'authorised' || before > 0) return answer('10100255', '訂單狀態不可放棄');
      captures.abandon(tradeNo);
      refunded.set(tradeNo, authorisation.amount);
      return answer('1', '放棄成功');
    case 'E':
      if (state !== 'capturing') return answer('10100256', '訂單狀態不可取消');
      captures.cancelCapture(tradeNo);
      return answer('1', '取消成功');
    default:
      return answer('10100051', 'Action Error');
  }
}

/** What a paid card authorisation took and when: the trade's own, or a plan period's; null when there is none. */
function authorisationOf(trade: RefundableTrade | undefined, tradeNo: string): { amount: number; at: Date } | null {
  if (!trade || trade.status !== 'paid' || trade.fields.ChoosePayment !== 'Credit') return null;
  if (tradeNo === trade.ecpayTradeNo)
    return { amount: Number(trade.fields.TotalAmount), at: trade.paidAt ?? new Date(0) };
  const period = trade.plan?.executions.find((execution) => execution.TradeNo === tradeNo && execution.RtnCode === '1');
  return period ? { amount: period.amount, at: parseEcpayDateTime(period.process_date) ?? new Date(0) } : null;
}
