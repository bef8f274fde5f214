import type { ServerResponse } from 'node:http';
import { PayuniCipherError, open, seal } from './crypto';
import type { EmulatedPayuniTrade } from './emulator-embed';
import { PAYUNI_PATHS, type PayuniKeys } from './merchant';

/**
 * The PAYUNi emulator's refunds (see emulator.ts): /api/trade/close with CloseType 2, and what the
 * trade query then says of them. Written from the sources refund.ts names; where they are silent
 * it chooses, and says so here:
 *
 * - a paid card trade is captured at once, so it can be refunded as soon as it is paid (PAYUNi
 *   refunds only once the capture is done, the next day: refund.ts);
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
 *   never refunded shows neither.
 */

/** What the refund side needs of the emulator around it. */
export interface RefundHost {
  merchant: PayuniKeys & { merchantId: string };
  trades: Map<string, EmulatedPayuniTrade>;
  /** Whether the trade was paid by card (PaymentType 1). */
  isCard(trade: EmulatedPayuniTrade): boolean;
  /** Answers JSON on `path`, unless the test asked to lose that answer (`failNext`). */
  answer(res: ServerResponse, path: string, value: unknown): void;
}

const NOT_FOUND = { Status: 'EMULATOR_TRADE_NOT_FOUND', Message: '查無此交易 (no trade has this TradeNo)' };
const NOT_PAID = { Status: 'EMULATOR_TRADE_NOT_PAID', Message: '交易未付款，無法退款 (the trade is not paid)' };
const NOT_A_CARD = { Status: 'EMULATOR_NOT_A_CARD_TRADE', Message: '非信用卡交易 (trade/close refunds card trades)' };
const CLOSE_TYPE_UNSUPPORTED = {
  Status: 'EMULATOR_CLOSE_TYPE_UNSUPPORTED',
  Message: '模擬器只支援 CloseType 2 退款 (the emulator only refunds)',
};

/** Unsigned refusals, as PAYUNi answers parameter errors (no EncryptInfo). */
const unsigned = (Status: string, Message: string) => ({ Status, Message });

/** The TWD refunded of a trade so far. */
export const refundedOf = (trade: EmulatedPayuniTrade) => trade.refunds.reduce((sum, amount) => sum + amount, 0);

/** The trade query's fields about refunds of a paid trade (`Result[0][...]`): none until it is refunded. */
export function refundQueryFields(trade: EmulatedPayuniTrade): Record<string, string> {
  if (trade.status !== 'paid' || trade.refunds.length === 0) return {};
  const refunded = refundedOf(trade);
  return {
    'Result[0][RefundAmt]': String(refunded),
    'Result[0][RemainAmt]': String(Number(trade.fields.TradeAmt) - refunded),
  };
}

export function refundEndpoints(host: RefundHost) {
  const { merchant, trades } = host;
  const path = PAYUNI_PATHS.tradeClose;
  const sealed = (inside: Record<string, string>) => ({
    Status: inside.Status ?? 'SUCCESS',
    ...seal(merchant.merchantId, inside, merchant, '1.0'),
  });

  /** 交易請退款: refunds part or all of what is left of a paid card trade, found by PAYUNi's TradeNo. */
  function close(body: Record<string, string>, res: ServerResponse): void {
    let fields: Record<string, string>;
    try {
      fields = open(body, merchant);
    } catch (error) {
      if (!(error instanceof PayuniCipherError)) throw error;
      return host.answer(res, path, unsigned('ERROR', error.message));
    }
    if (body.MerID !== merchant.merchantId || fields.MerID !== merchant.merchantId) {
      return host.answer(res, path, unsigned('ERROR', 'MerID Error'));
    }
    const missing = ['TradeNo', 'CloseType', 'TradeAmt', 'Timestamp'].find((name) => !fields[name]);
    if (missing) return host.answer(res, path, unsigned('ERROR', `${missing} Error`));
    if (!/^[1-9][0-9]*$/.test(fields.TradeAmt!)) return host.answer(res, path, unsigned('ERROR', 'TradeAmt Error'));
    const trade = [...trades.values()].find((t) => t.payuniTradeNo === fields.TradeNo);
    const about = {
      MerID: merchant.merchantId,
      TradeNo: fields.TradeNo!,
      ...(trade ? { MerTradeNo: trade.fields.MerTradeNo! } : {}),
      CloseType: fields.CloseType!,
      TradeAmt: fields.TradeAmt!,
    };
    const refusal = (why: { Status: string; Message: string }) => host.answer(res, path, sealed({ ...why, ...about }));
    if (fields.CloseType !== '2') return refusal(CLOSE_TYPE_UNSUPPORTED);
    if (!trade) return refusal(NOT_FOUND);
    if (trade.status !== 'paid') return refusal(NOT_PAID);
    if (!host.isCard(trade)) return refusal(NOT_A_CARD);
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

  /** Handles the request if it is the refund side's; false otherwise. */
  function handle(method: string, requestPath: string, body: Record<string, string>, res: ServerResponse): boolean {
    if (method !== 'POST' || requestPath !== path) return false;
    close(body, res);
    return true;
  }

  return { handle };
}
