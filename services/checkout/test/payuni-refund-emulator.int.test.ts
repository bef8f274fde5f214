import { seal } from '../src/payments/payuni/crypto';
import { authorizeEmbeddedCard, requestSdkToken } from '../src/payments/payuni/embed';
import { type PayuniEmulator, startPayuniEmulator } from '../src/payments/payuni/emulator';
import { PAYUNI_PATHS, type PayuniMerchant } from '../src/payments/payuni/merchant';
import { queryPayuniTrade } from '../src/payments/payuni/query';
import { RefundUnanswered, cancelPayuniAuthorization, refundPayuniTrade } from '../src/payments/payuni/refund';
import { uppForm } from '../src/payments/payuni/upp';
import { TEST_CARDS } from '../src/payments/sandbox';

/** Placeholder keys in the shape PAYUNi issues (no public test merchant was found). */
const KEYS = { merchantId: 'S01234567', hashKey: '12345678901234567890123456789012', hashIV: '1234567890123456' };
const SHOP = 'https://shop.example';

/** A card trade of `amount` paid through the card fields (as the embed test pays one), and its two numbers. */
async function payCardTrade(
  at: { emulator: PayuniEmulator; merchant: PayuniMerchant; clock: Date },
  tradeNo: string,
  amount: number,
  card: string = TEST_CARDS.success,
) {
  const { emulator, merchant, clock } = at;
  const { sdkToken } = await requestSdkToken(merchant, { iframeDomain: SHOP }, clock);
  const bound = await fetch(`${emulator.url}/sdk/bind/${encodeURIComponent(sdkToken)}`, {
    method: 'POST',
    body: new URLSearchParams({ CardNo: card, CardExp: '12/34', CardCvc: '123' }),
  });
  expect(bound.status).toBe(200);
  const outcome = await authorizeEmbeddedCard(
    merchant,
    {
      sdkToken,
      tradeNo,
      amount,
      description: 'Pro plan',
      returnUrl: `${SHOP}/payuni/return`,
      notifyUrl: `${SHOP}/payuni/notify`,
      threeDSecure: false,
    },
    clock,
  );
  return { tradeNo, outcome, payuniTradeNo: emulator.trades.get(tradeNo)!.payuniTradeNo };
}

describe('PAYUNi refunds of card trades against the emulator, over HTTP', () => {
  const clock = new Date('2026-11-26T16:30:00Z');
  let emulator: PayuniEmulator;
  let merchant: PayuniMerchant;
  let trades = 0;

  beforeAll(async () => {
    emulator = await startPayuniEmulator(KEYS, () => clock);
    merchant = { ...KEYS, baseUrl: emulator.url };
  });
  afterAll(() => emulator.close());

  const paidCardTrade = (amount = 299, card: string = TEST_CARDS.success) =>
    payCardTrade({ emulator, merchant, clock }, `REF${++trades}`, amount, card);
  const refunded = async (tradeNo: string) => {
    const status = await queryPayuniTrade(merchant, tradeNo, clock);
    if (status.status !== 'paid') throw new Error(`${tradeNo} is ${status.status}, not paid`);
    return status.refunded;
  };

  it('refunds 100 of 299, then the 199 left; a third refund is refused as too much; the query follows', async () => {
    const { tradeNo, outcome, payuniTradeNo } = await paidCardTrade(299);
    expect(outcome).toMatchObject({ status: 'paid', payuniTradeNo, amount: 299 });
    expect(await refunded(tradeNo)).toBe(0);

    expect(await refundPayuniTrade(merchant, { payuniTradeNo, amount: 100 }, clock)).toEqual({ status: 'refunded' });
    expect(emulator.trades.get(tradeNo)!.refunds).toEqual([100]);
    expect(await queryPayuniTrade(merchant, tradeNo, clock)).toMatchObject({
      status: 'paid',
      amount: 299,
      refunded: 100,
    });

    expect(await refundPayuniTrade(merchant, { payuniTradeNo, amount: 199 }, clock)).toEqual({ status: 'refunded' });
    expect(emulator.trades.get(tradeNo)!.refunds).toEqual([100, 199]);
    expect(await refunded(tradeNo)).toBe(299);

    expect(await refundPayuniTrade(merchant, { payuniTradeNo, amount: 1 }, clock)).toEqual({
      status: 'refused',
      code: 'emulator_refund_exceeds_remaining',
      message: expect.stringContaining('0'),
    });
    expect(emulator.trades.get(tradeNo)!.refunds).toEqual([100, 199]);
    expect(await refunded(tradeNo)).toBe(299);
  });

  it('refuses more than is left in one refund, and refunds nothing of it', async () => {
    const { tradeNo, payuniTradeNo } = await paidCardTrade(299);
    await refundPayuniTrade(merchant, { payuniTradeNo, amount: 200 }, clock);
    expect(await refundPayuniTrade(merchant, { payuniTradeNo, amount: 100 }, clock)).toMatchObject({
      status: 'refused',
      code: 'emulator_refund_exceeds_remaining',
      message: expect.stringContaining('99'),
    });
    expect(await refunded(tradeNo)).toBe(200);
    expect(await refundPayuniTrade(merchant, { payuniTradeNo, amount: 99 }, clock)).toEqual({ status: 'refunded' });
    expect(await refunded(tradeNo)).toBe(299);
  });

  it('a dropped answer is unanswered, yet the refund was made: the query then shows the refunded total, and the caller does not ask again', async () => {
    const { tradeNo, payuniTradeNo } = await paidCardTrade(299);
    const before = await refunded(tradeNo);
    emulator.failNext(PAYUNI_PATHS.tradeClose, 'drop');
    await expect(refundPayuniTrade(merchant, { payuniTradeNo, amount: 120 }, clock)).rejects.toThrow(RefundUnanswered);
    expect(emulator.trades.get(tradeNo)!.refunds).toEqual([120]);
    // What the caller does after a lost answer: the total moved by this amount, so it was made.
    expect(await refunded(tradeNo)).toBe(before + 120);

    emulator.failNext(PAYUNI_PATHS.tradeClose, 'http500');
    await expect(refundPayuniTrade(merchant, { payuniTradeNo, amount: 10 }, clock)).rejects.toThrow('HTTP 500');
    expect(await refunded(tradeNo)).toBe(130);
    // The next answer is not lost.
    expect(await refundPayuniTrade(merchant, { payuniTradeNo, amount: 1 }, clock)).toEqual({ status: 'refunded' });
    expect(await refunded(tradeNo)).toBe(131);
  });

  it('refuses a request with a wrong HashInfo or other keys, unsigned, and refunds nothing', async () => {
    const { tradeNo, payuniTradeNo } = await paidCardTrade(299);
    await expect(
      refundPayuniTrade({ ...merchant, hashIV: 'wrongwrongwrongw' }, { payuniTradeNo, amount: 100 }, clock),
    ).rejects.toThrow(RefundUnanswered);
    const request = seal(
      KEYS.merchantId,
      { MerID: KEYS.merchantId, TradeNo: payuniTradeNo, Timestamp: '1', CloseType: '2', TradeAmt: '100' },
      KEYS,
    );
    const answer = await fetch(`${emulator.url}${PAYUNI_PATHS.tradeClose}`, {
      method: 'POST',
      body: new URLSearchParams({ ...request, HashInfo: 'A'.repeat(64) }),
    });
    expect(await answer.json()).toEqual({ Status: 'ERROR', Message: 'HashInfo does not match' });
    expect(emulator.trades.get(tradeNo)!.refunds).toEqual([]);
    expect(await refunded(tradeNo)).toBe(0);
    // The same request, rightly signed, is taken.
    const taken = await fetch(`${emulator.url}${PAYUNI_PATHS.tradeClose}`, {
      method: 'POST',
      body: new URLSearchParams(request),
    });
    expect(await taken.json()).toMatchObject({ Status: 'SUCCESS', MerID: KEYS.merchantId });
    expect(await refunded(tradeNo)).toBe(100);
  });

  it('refuses, signed, a TradeNo it never issued, a trade not paid, an ATM trade and a CloseType other than 2', async () => {
    expect(await refundPayuniTrade(merchant, { payuniTradeNo: '1764174605123456789', amount: 1 }, clock)).toMatchObject(
      {
        status: 'refused',
        code: 'emulator_trade_not_found',
      },
    );

    const declined = await paidCardTrade(299, TEST_CARDS.genericDecline);
    expect(declined.outcome).toMatchObject({ status: 'declined' });
    expect(
      await refundPayuniTrade(merchant, { payuniTradeNo: declined.payuniTradeNo, amount: 1 }, clock),
    ).toMatchObject({ status: 'refused', code: 'emulator_trade_not_paid' });

    const form = uppForm(merchant, {
      idempotencyKey: 'refund-atm',
      amount: 480,
      method: 'ATM',
      description: 'Pro plan',
      now: clock,
      notifyUrl: 'http://127.0.0.1:9/payuni/notify',
    });
    await fetch(form.action, { method: 'POST', body: new URLSearchParams(form.fields) });
    const atm = emulator.trades.get(form.encrypted.MerTradeNo!)!;
    await emulator.pay(form.encrypted.MerTradeNo!, { notify: false });
    expect(atm.status).toBe('paid');
    expect(await refundPayuniTrade(merchant, { payuniTradeNo: atm.payuniTradeNo, amount: 1 }, clock)).toMatchObject({
      status: 'refused',
      code: 'emulator_not_a_card_trade',
    });
    expect(atm.refunds).toEqual([]);

    const { tradeNo, payuniTradeNo } = await paidCardTrade(299);
    const capture = seal(
      KEYS.merchantId,
      { MerID: KEYS.merchantId, TradeNo: payuniTradeNo, Timestamp: '1', CloseType: '1', TradeAmt: '299' },
      KEYS,
    );
    const answer = await fetch(`${emulator.url}${PAYUNI_PATHS.tradeClose}`, {
      method: 'POST',
      body: new URLSearchParams(capture),
    });
    expect(await answer.json()).toMatchObject({
      Status: 'EMULATOR_CLOSE_TYPE_UNSUPPORTED',
      EncryptInfo: expect.any(String),
    });
    expect(await refunded(tradeNo)).toBe(0);
  });
});

describe('PAYUNi refunds on the day of payment against the emulator, over HTTP: captured at midnight in Taiwan', () => {
  /** 22:30 in Taiwan: the capture is at 00:00, 90 minutes later. */
  const paidAt = new Date('2026-11-26T14:30:00Z');
  let clock = paidAt;
  let emulator: PayuniEmulator;
  let merchant: PayuniMerchant;
  let trades = 0;

  beforeAll(async () => {
    emulator = await startPayuniEmulator(KEYS, () => clock);
    emulator.captures.mode = 'daily';
    merchant = { ...KEYS, baseUrl: emulator.url };
  });
  beforeEach(() => {
    clock = paidAt;
  });
  afterAll(() => emulator.close());

  const paidCardTrade = async (amount = 299) => {
    const paid = await payCardTrade({ emulator, merchant, clock }, `DAY${++trades}`, amount);
    expect(paid.outcome).toMatchObject({ status: 'paid' });
    return paid;
  };
  const captureOf = async (tradeNo: string) => {
    const status = await queryPayuniTrade(merchant, tradeNo, clock);
    return status.status === 'paid' ? { capture: status.capture, refunded: status.refunded } : status.status;
  };

  it('before midnight the capture is requested: trade/close is refused, trade/cancel cancels the whole authorisation once', async () => {
    const { tradeNo, payuniTradeNo } = await paidCardTrade(299);
    expect(await captureOf(tradeNo)).toEqual({ capture: 'requested', refunded: 0 });
    expect(await refundPayuniTrade(merchant, { payuniTradeNo, amount: 100 }, clock)).toMatchObject({
      status: 'refused',
      code: 'emulator_not_captured',
    });

    expect(await cancelPayuniAuthorization(merchant, { payuniTradeNo }, clock)).toEqual({ status: 'refunded' });
    expect(emulator.trades.get(tradeNo)!.authorisationCanceled).toBe(true);
    expect(await captureOf(tradeNo)).toEqual({ capture: 'canceled', refunded: 0 });
    expect(await cancelPayuniAuthorization(merchant, { payuniTradeNo }, clock)).toMatchObject({
      status: 'refused',
      code: 'emulator_not_cancelable',
    });
    expect(await refundPayuniTrade(merchant, { payuniTradeNo, amount: 1 }, clock)).toMatchObject({
      status: 'refused',
      code: 'emulator_authorisation_canceled',
    });

    // Midnight passes: a canceled authorisation is never captured.
    clock = new Date('2026-11-26T16:00:00Z');
    expect(await captureOf(tradeNo)).toEqual({ capture: 'canceled', refunded: 0 });
    expect(emulator.trades.get(tradeNo)!.refunds).toEqual([]);
  });

  it('from midnight in Taiwan it is captured: refunded in part by trade/close, and trade/cancel is refused', async () => {
    const { tradeNo, payuniTradeNo } = await paidCardTrade(299);
    clock = new Date('2026-11-26T15:59:59Z');
    expect(await captureOf(tradeNo)).toEqual({ capture: 'requested', refunded: 0 });
    clock = new Date('2026-11-26T16:00:00Z');
    expect(await captureOf(tradeNo)).toEqual({ capture: 'captured', refunded: 0 });
    expect(await cancelPayuniAuthorization(merchant, { payuniTradeNo }, clock)).toMatchObject({
      status: 'refused',
      code: 'emulator_not_cancelable',
    });
    expect(await refundPayuniTrade(merchant, { payuniTradeNo, amount: 100 }, clock)).toEqual({ status: 'refunded' });
    expect(await captureOf(tradeNo)).toEqual({ capture: 'captured', refunded: 100 });
  });

  it('a cancellation whose answer is lost was made: the query shows the capture canceled', async () => {
    const { tradeNo, payuniTradeNo } = await paidCardTrade(299);
    emulator.failNext(PAYUNI_PATHS.tradeCancel, 'drop');
    await expect(cancelPayuniAuthorization(merchant, { payuniTradeNo }, clock)).rejects.toThrow(RefundUnanswered);
    expect(await captureOf(tradeNo)).toEqual({ capture: 'canceled', refunded: 0 });
  });

  it('refuses, signed, the cancellation of a trade it never issued, and unsigned a request with other keys', async () => {
    expect(await cancelPayuniAuthorization(merchant, { payuniTradeNo: '1764174605123456789' }, clock)).toMatchObject({
      status: 'refused',
      code: 'emulator_trade_not_found',
    });
    const { tradeNo, payuniTradeNo } = await paidCardTrade(299);
    await expect(
      cancelPayuniAuthorization({ ...merchant, hashKey: 'x'.repeat(32) }, { payuniTradeNo }, clock),
    ).rejects.toThrow(RefundUnanswered);
    expect(await captureOf(tradeNo)).toEqual({ capture: 'requested', refunded: 0 });
  });
});
