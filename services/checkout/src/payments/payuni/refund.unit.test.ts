import { TEST_MERCHANT, fakePayuni, sealedAnswer } from './testing';
import { encryptInfo, hashInfo } from './crypto';
import { QueryUnanswered, queryPayuniTrade } from './query';
import { RefundUnanswered, cancelPayuniAuthorization, refundPayuniTrade } from './refund';

const MERCHANT = TEST_MERCHANT;
const NOW = new Date('2026-11-26T16:30:05Z');
const UNIX = String(Date.parse('2026-11-26T16:30:05Z') / 1000);
const REFUND = { payuniTradeNo: '1688044976546407799', amount: 100 };

const payuni = fakePayuni;
const sealed = sealedAnswer;

/** The inside of a refund's answer, in the shape Omnipay-Payuni's tests record. */
const REFUNDED = {
  Status: 'SUCCESS',
  Message: '退款成功',
  MerID: 'abc',
  TradeNo: '1688044976546407799',
  CloseType: '2',
};

describe('PAYUNi refund (trade/close)', () => {
  it('posts Version 1.0 to /api/trade/close with TradeNo, CloseType 2 and the amount as TradeAmt inside', async () => {
    const fake = payuni(() => sealed(REFUNDED));
    expect(await refundPayuniTrade(MERCHANT, REFUND, NOW, { fetch: fake.fetch })).toEqual({ status: 'refunded' });
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]!.url).toBe('https://sandbox-api.payuni.com.tw/api/trade/close');
    expect(fake.calls[0]!.outside).toMatchObject({ MerID: 'abc', Version: '1.0' });
    expect(Object.keys(fake.calls[0]!.outside)).toEqual(['MerID', 'Version', 'EncryptInfo', 'HashInfo']);
    expect(fake.calls[0]!.inside).toEqual({
      MerID: 'abc',
      TradeNo: '1688044976546407799',
      Timestamp: UNIX,
      CloseType: '2',
      TradeAmt: '100',
    });
  });

  it('a part of the trade is asked as it is: TradeAmt is the amount given, not the trade', async () => {
    const fake = payuni(() => sealed({ ...REFUNDED, TradeAmt: '199' }));
    await refundPayuniTrade(MERCHANT, { ...REFUND, amount: 199 }, NOW, { fetch: fake.fetch });
    expect(fake.calls[0]!.inside.TradeAmt).toBe('199');
  });

  it('SUCCESS inside, with the outside saying SUCCESS or nothing, is refunded', async () => {
    const withoutOutside = payuni(() => {
      const { Status: _, ...rest } = sealed(REFUNDED);
      return rest;
    });
    expect(await refundPayuniTrade(MERCHANT, REFUND, NOW, { fetch: withoutOutside.fetch })).toEqual({
      status: 'refunded',
    });
    const withAmount = payuni(() => sealed({ ...REFUNDED, TradeAmt: '100' }));
    expect(await refundPayuniTrade(MERCHANT, REFUND, NOW, { fetch: withAmount.fetch })).toEqual({
      status: 'refunded',
    });
  });

  it('a signed Status other than SUCCESS is refused, its Status lower-cased the code and its Message kept', async () => {
    const fake = payuni(() => sealed({ Status: 'CLOSE_AMT_ERROR', Message: '退款金額錯誤', MerID: 'abc' }));
    expect(await refundPayuniTrade(MERCHANT, REFUND, NOW, { fetch: fake.fetch })).toEqual({
      status: 'refused',
      code: 'close_amt_error',
      message: '退款金額錯誤',
    });
    // The inside's Status is PAYUNi's word, over the outside's.
    const inside = payuni(() => ({
      ...sealed({ Status: 'REFUND_ERROR', Message: 'x', MerID: 'abc' }),
      Status: 'SUCCESS',
    }));
    expect(await refundPayuniTrade(MERCHANT, REFUND, NOW, { fetch: inside.fetch })).toMatchObject({
      status: 'refused',
      code: 'refund_error',
    });
  });

  it.each([
    ['0', { amount: 0 }],
    ['a negative amount', { amount: -1 }],
    ['a fraction of a dollar', { amount: 1.5 }],
    ['NaN', { amount: Number.NaN }],
    ['an unsafe integer', { amount: 2 ** 53 }],
    ['an empty TradeNo', { payuniTradeNo: '' }],
    ['a TradeNo with a space', { payuniTradeNo: '1688 044976' }],
    ['a TradeNo of 41 digits', { payuniTradeNo: '1'.repeat(41) }],
  ])('refuses %s before any call', async (_, change) => {
    const fake = payuni(() => sealed(REFUNDED));
    await expect(refundPayuniTrade(MERCHANT, { ...REFUND, ...change }, NOW, { fetch: fake.fetch })).rejects.toThrow(
      Error,
    );
    await expect(
      refundPayuniTrade(MERCHANT, { ...REFUND, ...change }, NOW, { fetch: fake.fetch }),
    ).rejects.not.toBeInstanceOf(RefundUnanswered);
    expect(fake.calls).toHaveLength(0);
  });

  const tamperedCipher = () => {
    // A HashInfo that matches an EncryptInfo whose GCM tag does not: only the tag check catches it.
    const good = encryptInfo(REFUNDED, MERCHANT);
    const [data, tag] = Buffer.from(good, 'hex').toString('utf8').split(':::');
    const flipped = Buffer.from(data!, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    const bad = Buffer.from(`${flipped.toString('base64')}:::${tag}`, 'utf8').toString('hex');
    return { Status: 'SUCCESS', MerID: 'abc', Version: '1.0', EncryptInfo: bad, HashInfo: hashInfo(bad, MERCHANT) };
  };

  it.each([
    ['HTTP 500', payuni(() => sealed(REFUNDED), 500).fetch, 'HTTP 500'],
    ['a network error', (async () => Promise.reject(new Error('ECONNRESET'))) as typeof fetch, 'ECONNRESET'],
    ['an answer that is not JSON', payuni(() => '<html>busy</html>').fetch, 'not JSON'],
    ['a JSON answer that is not an object', payuni(() => 'null').fetch, 'not an object'],
    ['an unsigned error', payuni(() => ({ Status: 'ERROR', Message: 'TradeNo Error' })).fetch, 'unsigned'],
    ['an unsigned SUCCESS', payuni(() => ({ Status: 'SUCCESS', Message: '退款成功' })).fetch, 'unsigned'],
    [
      'a wrong HashInfo',
      payuni(() => ({ ...sealed(REFUNDED), HashInfo: 'A'.repeat(64) })).fetch,
      'HashInfo does not match',
    ],
    ['a GCM tag that does not check', payuni(() => tamperedCipher()).fetch, 'GCM'],
    [
      'an answer for another merchant (outside)',
      payuni(() => ({ ...sealed(REFUNDED), MerID: 'xyz' })).fetch,
      'merchant',
    ],
    ['an answer for another merchant (inside)', payuni(() => sealed({ ...REFUNDED, MerID: 'xyz' })).fetch, 'merchant'],
    ['an answer about another trade', payuni(() => sealed({ ...REFUNDED, TradeNo: '999' })).fetch, 'another trade'],
    ['a SUCCESS for another amount', payuni(() => sealed({ ...REFUNDED, TradeAmt: '299' })).fetch, 'not 100'],
    ['Status UNKNOWN', payuni(() => sealed({ ...REFUNDED, Status: 'UNKNOWN' })).fetch, 'UNKNOWN'],
    [
      'no Status at all',
      payuni(() => {
        const { Status: _, ...rest } = sealed({ Message: 'x', MerID: 'abc' });
        return rest;
      }).fetch,
      'no Status',
    ],
  ])('%s is unanswered: the refund may have been made', async (_, fetchFake, message) => {
    const refund = refundPayuniTrade(MERCHANT, REFUND, NOW, { fetch: fetchFake });
    await expect(refund).rejects.toThrow(RefundUnanswered);
    await expect(refund).rejects.toThrow(message);
  });

  it('a PAYUNi that does not answer in time is unanswered', async () => {
    const hanging: typeof fetch = (_, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
    await expect(refundPayuniTrade(MERCHANT, REFUND, NOW, { fetch: hanging, timeoutMs: 20 })).rejects.toThrow(
      RefundUnanswered,
    );
  });
});

describe('PAYUNi trade query: what was refunded of a paid trade', () => {
  const paid = (extra: Record<string, string>) =>
    payuni(() =>
      sealed(
        {
          Status: 'SUCCESS',
          Message: '查詢成功',
          'Result[0][MerTradeNo]': 'T1',
          'Result[0][TradeNo]': '1688044976546407799',
          'Result[0][TradeAmt]': '299',
          'Result[0][TradeStatus]': '1',
          'Result[0][PaymentType]': '1',
          'Result[0][PaymentDay]': '2026-11-27 00:30:05',
          ...extra,
        },
        '2.0',
      ),
    );

  it('reads RefundAmt as the TWD refunded so far; the trade stays paid', async () => {
    const fake = paid({ 'Result[0][RefundAmt]': '100', 'Result[0][RemainAmt]': '199' });
    expect(await queryPayuniTrade(MERCHANT, 'T1', NOW, { fetch: fake.fetch })).toEqual({
      status: 'paid',
      payuniTradeNo: '1688044976546407799',
      amount: 299,
      paymentType: '1',
      paidAt: new Date('2026-11-26T16:30:05Z'),
      refunded: 100,
      capture: 'unknown',
    });
    const whole = paid({ 'Result[0][RefundAmt]': '299', 'Result[0][RemainAmt]': '0' });
    expect(await queryPayuniTrade(MERCHANT, 'T1', NOW, { fetch: whole.fetch })).toMatchObject({
      status: 'paid',
      refunded: 299,
    });
  });

  it('no RefundAmt, or an empty one, is nothing refunded', async () => {
    expect(await queryPayuniTrade(MERCHANT, 'T1', NOW, { fetch: paid({}).fetch })).toMatchObject({ refunded: 0 });
    const empty = paid({ 'Result[0][RefundAmt]': '' });
    expect(await queryPayuniTrade(MERCHANT, 'T1', NOW, { fetch: empty.fetch })).toMatchObject({ refunded: 0 });
  });

  it.each([['abc'], ['-1'], ['1.5'], ['300']])('a RefundAmt of %s is not trusted', async (refundAmt) => {
    const fake = paid({ 'Result[0][RefundAmt]': refundAmt });
    await expect(queryPayuniTrade(MERCHANT, 'T1', NOW, { fetch: fake.fetch })).rejects.toThrow(QueryUnanswered);
  });
});

describe('PAYUNi trade query: the capture of a paid card trade (CloseStatus)', () => {
  const withCloseStatus = (closeStatus: string) =>
    payuni(() =>
      sealed(
        {
          Status: 'SUCCESS',
          'Result[0][MerTradeNo]': 'T1',
          'Result[0][TradeNo]': '1688044976546407799',
          'Result[0][TradeAmt]': '299',
          'Result[0][TradeStatus]': '1',
          'Result[0][PaymentType]': '1',
          'Result[0][CloseStatus]': closeStatus,
        },
        '2.0',
      ),
    ).fetch;

  it.each([
    ['1', 'requested'],
    ['2', 'captured'],
    ['3', 'canceled'],
    ['7', 'processing'],
    ['9', 'not_requested'],
    ['5', 'unknown'],
    ['', 'unknown'],
  ])('CloseStatus %s is %s', async (closeStatus, capture) => {
    const fetchFake = withCloseStatus(closeStatus);
    expect(await queryPayuniTrade(MERCHANT, 'T1', NOW, { fetch: fetchFake })).toMatchObject({
      status: 'paid',
      capture,
    });
  });
});

describe('PAYUNi cancellation of an authorisation (trade/cancel)', () => {
  const CANCELED = { Status: 'SUCCESS', Message: '取消授權成功', MerID: 'abc', TradeNo: '1688044976546407799' };
  const TRADE = { payuniTradeNo: '1688044976546407799' };

  it('posts Version 1.0 to /api/trade/cancel with MerID, TradeNo and Timestamp inside, and no amount', async () => {
    const fake = payuni(() => sealed(CANCELED));
    expect(await cancelPayuniAuthorization(MERCHANT, TRADE, NOW, { fetch: fake.fetch })).toEqual({
      status: 'refunded',
    });
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]!.url).toBe('https://sandbox-api.payuni.com.tw/api/trade/cancel');
    expect(fake.calls[0]!.outside).toMatchObject({ MerID: 'abc', Version: '1.0' });
    expect(fake.calls[0]!.inside).toEqual({ MerID: 'abc', TradeNo: '1688044976546407799', Timestamp: UNIX });
  });

  it('a signed Status other than SUCCESS is refused, with its Message', async () => {
    const fake = payuni(() => sealed({ ...CANCELED, Status: 'CANCEL_FAIL', Message: '此交易不可取消授權' }));
    expect(await cancelPayuniAuthorization(MERCHANT, TRADE, NOW, { fetch: fake.fetch })).toEqual({
      status: 'refused',
      code: 'cancel_fail',
      message: '此交易不可取消授權',
    });
  });

  it.each([
    ['an answer about another trade', () => sealed({ ...CANCELED, TradeNo: '999' }), 'another trade'],
    ['Status UNKNOWN', () => sealed({ ...CANCELED, Status: 'UNKNOWN' }), 'UNKNOWN'],
    ['an unsigned error', () => ({ Status: 'ERROR', Message: 'TradeNo Error' }), 'unsigned'],
  ])('%s is unanswered: the authorisation may have been canceled', async (_, answer, message) => {
    const cancel = cancelPayuniAuthorization(MERCHANT, TRADE, NOW, { fetch: payuni(answer).fetch });
    await expect(cancel).rejects.toThrow(RefundUnanswered);
    await expect(cancel).rejects.toThrow(message);
  });

  it('refuses a TradeNo PAYUNi would not have issued, before any call', async () => {
    const fake = payuni(() => sealed(CANCELED));
    await expect(
      cancelPayuniAuthorization(MERCHANT, { payuniTradeNo: 'T-1' }, NOW, { fetch: fake.fetch }),
    ).rejects.toThrow('letters or digits');
    expect(fake.calls).toEqual([]);
  });
});
