import type { ServerResponse } from 'node:http';
import { PayuniCipherError, open, seal } from './crypto';
import type { EmulatedPayuniTrade } from './emulator-embed';
import { PAYUNI_PATHS, type PayuniKeys } from './merchant';

/**
 * The PAYUNi emulator's refunds (see emulator.ts): /api/trade/close with CloseType 2, and what the
 * trade query then says of them. Written from the sources refund.ts names; where they are silent
 * it chooses, and says so here:
 *
 * - when a paid card trade is captured (`captures.mode`): `at_once` (the default), so it can be
 *   refunded as soon as it is paid; or `daily`: CloseStatus 1 (請款申請中) until the first midnight
 *   in Taiwan after the payment, 2 (請款成功) from then. PAYUNi refunds only once the capture is
 *   done, the next day (refund.ts); the hour is the emulator's choice. CloseStatus 7 and 9 are
 *   never shown;
 * - /api/trade/cancel (取消授權) cancels the authorisation of a paid card trade at CloseStatus 1,
 *   never refunded; it then shows TradeStatus 1 and CloseStatus 3 (請款取消), and is neither
 *   refunded nor canceled again. Any other trade is refused, signed, `EMULATOR_NOT_CANCELABLE`;
 *   trade/close refuses one at CloseStatus 1 (`EMULATOR_NOT_CAPTURED`) or 3
 *   (`EMULATOR_AUTHORISATION_CANCELED`);
 * - a refund of at most what is left of the trade is made and recorded (`refunds`); more is
 *   refused, signed, `EMULATOR_REFUND_EXCEEDS_REMAINING`; a TradeNo the emulator never issued, a
 *   trade not paid, and an ATM or CVS trade are refused, signed, each with its own Status; so is a
 *   CloseType other than 2 (`EMULATOR_CLOSE_TYPE_UNSUPPORTED`: no capture, no cancellations);
 * - a request that does not open (HashInfo, GCM tag, MerID) or lacks TradeNo, CloseType,
 *   TradeAmt (a positive integer) or Timestamp is refused unsigned, `{ Status: 'ERROR' }`, like
 *   the other parameter errors;
 * - a refund's answer has inside Status, Message, MerID, TradeNo, MerTradeNo, CloseType and
 *   TradeAmt (the amount of this refund);
 * - the trade query of a trade refunded at least once adds RefundAmt (the total refunded) and
 *   RemainAmt (what is left), as the answer recorded in Omnipay-Payuni's tests does; a trade
 *   never refunded shows neither. A paid card trade's shows its CloseStatus.
 */

/** When the emulator captures a paid card trade (above). */
export type PayuniCaptureMode = 'at_once' | 'daily';

const DAY_MS = 24 * 3600_000;

/** The first midnight in Taiwan (16:00 UTC) after `instant`. */
function nextTaipeiMidnight(instant: Date): Date {
  const taipeiDay = new Date(instant.getTime() + 8 * 3600_000).toISOString().slice(0, 10);
  return new Date(new Date(`${taipeiDay}T00:00:00+08:00`).getTime() + DAY_MS);
}

/** What the refund side needs of the emulator around it. */
export interface RefundHost {
  merchant: PayuniKeys & { merchantId: string };
  trades: Map<string, EmulatedPayuniTrade>;
  now: () => Date;
  captures: { mode: PayuniCaptureMode };
  /** Whether the trade was paid by card (PaymentType 1). */
  isCard(trade: EmulatedPayuniTrade): boolean;
  /** Answers JSON on `path`, unless the test asked to lose that answer (`failNext`). */
  answer(res: ServerResponse, path: string, value: unknown): void;
}

const NOT_FOUND = { Status: 'EMULATOR_TRADE_NOT_FOUND', Message: '查無此交易 (no trade has this TradeNo)' };
const NOT_PAID = { Status: 'EMULATOR_TRADE_NOT_PAID', Message: '交易未付款，無法退款 (the trade is not paid)' };
const NOT_A_CARD = { Status: 'EMULATOR_NOT_A_CARD_TRADE', Message: '非信用卡交易 (trade/close refunds card trades)' };
const NOT_CAPTURED = {
  Status: 'EMULATOR_NOT_CAPTURED',
  Message: '交易尚未請款，無法退款 (not captured yet: cancel it)',
};
const AUTHORISATION_CANCELED = {
  Status: 'EMULATOR_AUTHORISATION_CANCELED',
  Message: '交易已取消授權 (nothing was taken)',
};
const NOT_CANCELABLE = {
  Status: 'EMULATOR_NOT_CANCELABLE',
  Message: '請款狀態不可取消授權 (only a trade whose capture is requested, never refunded, is canceled)',
};
const CLOSE_TYPE_UNSUPPORTED = {
  Status: 'EMULATOR_CLOSE_TYPE_UNSUPPORTED',
  Message: '模擬器只支援 CloseType 2 退款 (the emulator only refunds)',
};

/** Unsigned refusals, as PAYUNi answers parameter errors (no EncryptInfo). */
const unsigned = (Status: string, Message: string) => ({ Status, Message });

/** The TWD refunded of a trade so far. */
export const refundedOf = (trade: EmulatedPayuniTrade) => trade.refunds.reduce((sum, amount) => sum + amount, 0);

/** A paid card trade's CloseStatus on the emulator's clock: 1 requested, 2 captured, 3 canceled. */
export function closeStatusOf(trade: EmulatedPayuniTrade, host: Pick<RefundHost, 'now' | 'captures'>): '1' | '2' | '3' {
  if (trade.authorisationCanceled) return '3';
  if (host.captures.mode === 'at_once') return '2';
  const capture = nextTaipeiMidnight(trade.paidAt ?? new Date(0));
  return host.now().getTime() < capture.getTime() ? '1' : '2';
}

/**
 * The trade query's fields about the capture and refunds of a paid trade (`Result[0][...]`): a
 * card trade's CloseStatus; RefundAmt and RemainAmt once it is refunded.
 */
export function refundQueryFields(
  trade: EmulatedPayuniTrade,
  host: Pick<RefundHost, 'now' | 'captures' | 'isCard'>,
): Record<string, string> {
  if (trade.status !== 'paid') return {};
  const capture: Record<string, string> = host.isCard(trade)
    ? { 'Result[0][CloseStatus]': closeStatusOf(trade, host) }
    : {};
  if (trade.refunds.length === 0) return capture;
  const refunded = refundedOf(trade);
  return {
    ...capture,
    'Result[0][RefundAmt]': String(refunded),
    'Result[0][RemainAmt]': String(Number(trade.fields.TradeAmt) - refunded),
  };
}

export function refundEndpoints(host: RefundHost) {
  const { merchant, trades } = host;
  const sealed = (inside: Record<string, string>) => ({
    Status: inside.Status ?? 'SUCCESS',
    ...seal(merchant.merchantId, inside, merchant, '1.0'),
  });

  /**
   * The fields of a request to `path` and the trade it names by PAYUNi's TradeNo, or null when it
   * was refused unsigned (a request that does not open, another MerID, a field missing).
   */
  function opened(path: string, body: Record<string, string>, res: ServerResponse, required: string[]) {
    let fields: Record<string, string>;
    try {
      fields = open(body, merchant);
    } catch (error) {
      if (!(error instanceof PayuniCipherError)) throw error;
      host.answer(res, path, unsigned('ERROR', error.message));
      return null;
    }
    if (body.MerID !== merchant.merchantId || fields.MerID !== merchant.merchantId) {
      host.answer(res, path, unsigned('ERROR', 'MerID Error'));
      return null;
    }
    const missing = required.find((name) => !fields[name]);
    if (missing) {
      host.answer(res, path, unsigned('ERROR', `${missing} Error`));
      return null;
    }
    const trade = [...trades.values()].find((t) => t.payuniTradeNo === fields.TradeNo);
    const about = {
      MerID: merchant.merchantId,
      TradeNo: fields.TradeNo!,
      ...(trade ? { MerTradeNo: trade.fields.MerTradeNo! } : {}),
    };
    return { fields, trade, about };
  }

  /** 交易請退款: refunds part or all of what is left of a paid card trade, found by PAYUNi's TradeNo. */
  function close(body: Record<string, string>, res: ServerResponse): void {
    const path = PAYUNI_PATHS.tradeClose;
    const request = opened(path, body, res, ['TradeNo', 'CloseType', 'TradeAmt', 'Timestamp']);
    if (!request) return;
    const { fields, trade } = request;
    if (!/^[1-9][0-9]*$/.test(fields.TradeAmt!)) return host.answer(res, path, unsigned('ERROR', 'TradeAmt Error'));
    const about = { ...request.about, CloseType: fields.CloseType!, TradeAmt: fields.TradeAmt! };
    const refusal = (why: { Status: string; Message: string }) => host.answer(res, path, sealed({ ...why, ...about }));
    if (fields.CloseType !== '2') return refusal(CLOSE_TYPE_UNSUPPORTED);
    if (!trade) return refusal(NOT_FOUND);
    if (trade.status !== 'paid') return refusal(NOT_PAID);
    if (!host.isCard(trade)) return refusal(NOT_A_CARD);
    const closeStatus = closeStatusOf(trade, host);
    if (closeStatus === '1') return refusal(NOT_CAPTURED);
    if (closeStatus === '3') return refusal(AUTHORISATION_CANCELED);
    const amount = Number(fields.TradeAmt);
    const left = Number(trade.fields.TradeAmt) - refundedOf(trade);
    if (amount > left) {
      return refusal({
        Status: 'EMULATOR_REFUND_EXCEEDS_REMAINING',
        Message: `退款金額超過可退餘額 ${left} (at most ${left} is left to refund)`,
      });
    }
    trade.refunds.push(amount);
    host.answer(res, path, sealed({ Status: 'SUCCESS', Message: '退款成功', ...about }));
  }

  /** 交易取消授權: cancels, whole, the authorisation of a paid card trade whose capture is only requested. */
  function cancel(body: Record<string, string>, res: ServerResponse): void {
    const path = PAYUNI_PATHS.tradeCancel;
    const request = opened(path, body, res, ['TradeNo', 'Timestamp']);
    if (!request) return;
    const { trade, about } = request;
    const refusal = (why: { Status: string; Message: string }) => host.answer(res, path, sealed({ ...why, ...about }));
    if (!trade) return refusal(NOT_FOUND);
    if (trade.status !== 'paid') return refusal(NOT_PAID);
    if (!host.isCard(trade)) return refusal(NOT_A_CARD);
    if (closeStatusOf(trade, host) !== '1' || trade.refunds.length > 0) return refusal(NOT_CANCELABLE);
    trade.authorisationCanceled = true;
    host.answer(res, path, sealed({ Status: 'SUCCESS', Message: '取消授權成功', ...about }));
  }

  /** Handles the request if it is the refund side's; false otherwise. */
  function handle(method: string, requestPath: string, body: Record<string, string>, res: ServerResponse): boolean {
    if (method !== 'POST') return false;
    if (requestPath === PAYUNI_PATHS.tradeClose) close(body, res);
    else if (requestPath === PAYUNI_PATHS.tradeCancel) cancel(body, res);
    else return false;
    return true;
  }

  return { handle };
}
