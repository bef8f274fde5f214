import { TEST_MERCHANT, fakePayuni, sealedAnswer } from './testing';
import { hashInfo } from './crypto';
import {
  CardChargeUnanswered,
  authorizeEmbeddedCard,
  chargeCreditToken,
  readCardNotification,
  readCardResult,
  requestSdkToken,
} from './embed';
import { RejectedNotification } from './notifications';

const MERCHANT = TEST_MERCHANT;
const NOW = new Date('2026-11-26T16:30:05Z');
const UNIX = String(Date.parse('2026-11-26T16:30:05Z') / 1000);

const payuni = fakePayuni;
const sealed = sealedAnswer;

const PAID = {
  Status: 'SUCCESS',
  Message: '授權成功',
  MerID: 'abc',
  MerTradeNo: 'T1',
  TradeNo: '1764174605123456789',
  TradeAmt: '480',
  TradeStatus: '1',
  Card6No: '424242',
  Card4No: '4242',
  AuthCode: '123456',
  AuthDay: '20261127',
  AuthTime: '003110',
  CreditHash: 'HASH123',
  CreditLife: '1229',
};

const ORDER = {
  sdkToken: 'sdk-token-1',
  tradeNo: 'T1',
  amount: 480,
  description: 'Pro 月方案',
  email: 'buyer@example.com',
  returnUrl: 'https://billing.example/payuni/return',
  notifyUrl: 'https://billing.example/payuni/notify',
  threeDSecure: true,
};
const CREDIT = { tradeNo: 'T2', amount: 480, description: 'Pro 月方案', creditToken: 'cus_123', creditHash: 'HASH123' };

describe('PAYUNi SDK token (token_get)', () => {
  it('given a creditToken, posts Version 3.0 to /api/iframe/token_get with UseTokenType 2 inside, and reads Token and TokenExpired', async () => {
    const fake = payuni(() =>
      sealed({ Status: 'SUCCESS', MerID: 'abc', Token: 'tok_1', TokenExpired: String(Number(UNIX) + 600) }, '3.0'),
    );
    const token = await requestSdkToken(
      MERCHANT,
      { iframeDomain: 'https://shop.example', creditToken: 'cus_123@shop.example' },
      NOW,
      { fetch: fake.fetch },
    );
    expect(token).toEqual({ sdkToken: 'tok_1', expiresAt: new Date('2026-11-26T16:40:05Z') });
    expect(fake.calls[0]!.url).toBe('https://sandbox-api.payuni.com.tw/api/iframe/token_get');
    expect(fake.calls[0]!.outside).toMatchObject({ MerID: 'abc', Version: '3.0' });
    expect(fake.calls[0]!.inside).toEqual({
      MerID: 'abc',
      Timestamp: UNIX,
      IFrameDomain: 'https://shop.example',
      UseTokenType: '2',
      CreditToken: 'cus_123@shop.example',
    });
  });

  it('given no creditToken, asks no UseTokenType; an answer without TokenExpired has no expiry', async () => {
    const fake = payuni(() => sealed({ Status: 'SUCCESS', MerID: 'abc', Token: 'tok_2' }, '3.0'));
    const token = await requestSdkToken(MERCHANT, { iframeDomain: 'https://shop.example' }, NOW, {
      fetch: fake.fetch,
    });
    expect(token).toEqual({ sdkToken: 'tok_2', expiresAt: null });
    expect(fake.calls[0]!.inside).not.toHaveProperty('UseTokenType');
    expect(fake.calls[0]!.inside).not.toHaveProperty('CreditToken');
  });

  it.each([
    ['a space', { creditToken: 'cus 1' }],
    ['a character outside A-Za-z0-9@.#$%_-', { creditToken: 'cus/1' }],
    ['151 characters', { creditToken: 'a'.repeat(151) }],
    ['an empty creditToken', { creditToken: '' }],
    ['an ftp origin', { iframeDomain: 'ftp://shop.example' }],
    ['a page, not an origin', { iframeDomain: 'https://shop.example/checkout' }],
  ])('refuses %s before any call', async (_, change) => {
    const fake = payuni(() => ({}));
    await expect(
      requestSdkToken(MERCHANT, { iframeDomain: 'https://shop.example', ...change }, NOW, { fetch: fake.fetch }),
    ).rejects.toThrow(Error);
    expect(fake.calls).toHaveLength(0);
  });

  it('accepts a creditToken of exactly 150 allowed characters', async () => {
    const fake = payuni(() => sealed({ Status: 'SUCCESS', MerID: 'abc', Token: 't' }, '3.0'));
    const creditToken = `${'a'.repeat(140)}@.#$%_-Z9x`;
    await requestSdkToken(MERCHANT, { iframeDomain: 'https://shop.example', creditToken }, NOW, {
      fetch: fake.fetch,
    });
    expect(fake.calls[0]!.inside.CreditToken).toBe(creditToken);
  });

  it('a verified refusal is an Error with its Status; an unsigned one or a SUCCESS without Token is unanswered', async () => {
    const refused = payuni(() => sealed({ Status: 'TOKEN_ERROR', Message: 'IFrameDomain Error', MerID: 'abc' }));
    await expect(
      requestSdkToken(MERCHANT, { iframeDomain: 'https://shop.example' }, NOW, { fetch: refused.fetch }),
    ).rejects.toThrow('TOKEN_ERROR IFrameDomain Error');
    const unsigned = payuni(() => ({ Status: 'ERROR', Message: 'HashInfo Error' }));
    await expect(
      requestSdkToken(MERCHANT, { iframeDomain: 'https://shop.example' }, NOW, { fetch: unsigned.fetch }),
    ).rejects.toThrow(CardChargeUnanswered);
    const noToken = payuni(() => sealed({ Status: 'SUCCESS', MerID: 'abc' }));
    await expect(
      requestSdkToken(MERCHANT, { iframeDomain: 'https://shop.example' }, NOW, { fetch: noToken.fetch }),
    ).rejects.toThrow(CardChargeUnanswered);
  });
});

describe('PAYUNi embedded card charge (merchant_trade)', () => {
  it('posts Version 1.0 to /api/iframe/merchant_trade with the token, the order and API3D inside', async () => {
    const fake = payuni(() => sealed(PAID));
    await authorizeEmbeddedCard(MERCHANT, ORDER, NOW, { fetch: fake.fetch });
    expect(fake.calls[0]!.url).toBe('https://sandbox-api.payuni.com.tw/api/iframe/merchant_trade');
    expect(fake.calls[0]!.outside).toMatchObject({ MerID: 'abc', Version: '1.0' });
    expect(fake.calls[0]!.inside).toEqual({
      MerID: 'abc',
      MerTradeNo: 'T1',
      Token: 'sdk-token-1',
      TradeAmt: '480',
      Timestamp: UNIX,
      ProdDesc: 'Pro 月方案',
      ReturnURL: 'https://billing.example/payuni/return',
      NotifyURL: 'https://billing.example/payuni/notify',
      UsrMail: 'buyer@example.com',
      API3D: '1',
    });
  });

  it('without 3-D Secure or an email, sends neither API3D nor UsrMail', async () => {
    const fake = payuni(() => sealed(PAID));
    await authorizeEmbeddedCard(MERCHANT, { ...ORDER, threeDSecure: false, email: undefined }, NOW, {
      fetch: fake.fetch,
    });
    expect(fake.calls[0]!.inside).not.toHaveProperty('API3D');
    expect(fake.calls[0]!.inside).not.toHaveProperty('UsrMail');
  });

  it('given a paid answer, reads the trade, the card, its CreditHash and CreditLife', async () => {
    const fake = payuni(() => sealed(PAID));
    expect(await authorizeEmbeddedCard(MERCHANT, ORDER, NOW, { fetch: fake.fetch })).toEqual({
      status: 'paid',
      payuniTradeNo: '1764174605123456789',
      amount: 480,
      card: { last4: '4242', first6: '424242', creditHash: 'HASH123', expMonth: 12, expYear: 2029 },
    });
  });

  it('given a URL, the buyer must pass 3-D Secure there', async () => {
    const url = 'https://sandbox-api.payuni.com.tw/3d/1764174605123456789';
    const fake = payuni(() => sealed({ Status: 'SUCCESS', MerID: 'abc', MerTradeNo: 'T1', URL: url }));
    expect(await authorizeEmbeddedCard(MERCHANT, ORDER, NOW, { fetch: fake.fetch })).toEqual({
      status: 'requires_3d',
      url,
    });
  });

  it("given a decline, keeps PAYUNi's Status lower-cased as the code and its Message", async () => {
    const fake = payuni(() =>
      sealed({ Status: 'CREDIT_DECLINED', Message: '授權失敗', MerID: 'abc', MerTradeNo: 'T1', TradeStatus: '2' }),
    );
    expect(await authorizeEmbeddedCard(MERCHANT, ORDER, NOW, { fetch: fake.fetch })).toEqual({
      status: 'declined',
      code: 'credit_declined',
      message: '授權失敗',
    });
  });

  it('refuses an order PAYUNi would refuse, before any call', async () => {
    const fake = payuni(() => sealed(PAID));
    await expect(authorizeEmbeddedCard(MERCHANT, { ...ORDER, amount: 0 }, NOW, { fetch: fake.fetch })).rejects.toThrow(
      RangeError,
    );
    await expect(
      authorizeEmbeddedCard(MERCHANT, { ...ORDER, amount: 1.5 }, NOW, { fetch: fake.fetch }),
    ).rejects.toThrow(RangeError);
    await expect(
      authorizeEmbeddedCard(MERCHANT, { ...ORDER, tradeNo: 'x'.repeat(26) }, NOW, { fetch: fake.fetch }),
    ).rejects.toThrow('MerTradeNo');
    expect(fake.calls).toHaveLength(0);
  });
});

describe('PAYUNi token charge (/api/credit)', () => {
  it('posts the CreditToken and CreditHash, no card, to /api/credit, and reads a paid answer', async () => {
    const fake = payuni(() => sealed({ ...PAID, MerTradeNo: 'T2' }));
    const outcome = await chargeCreditToken(MERCHANT, CREDIT, NOW, { fetch: fake.fetch });
    expect(outcome).toMatchObject({ status: 'paid', amount: 480, card: { creditHash: 'HASH123', last4: '4242' } });
    expect(fake.calls[0]!.url).toBe('https://sandbox-api.payuni.com.tw/api/credit');
    expect(fake.calls[0]!.outside).toMatchObject({ Version: '1.0' });
    expect(fake.calls[0]!.inside).toEqual({
      MerID: 'abc',
      MerTradeNo: 'T2',
      TradeAmt: '480',
      Timestamp: UNIX,
      ProdDesc: 'Pro 月方案',
      CreditToken: 'cus_123',
      CreditHash: 'HASH123',
    });
  });

  it('given a URL (the bank asks for the buyer), is declined as authentication_required', async () => {
    const fake = payuni(() => sealed({ Status: 'SUCCESS', MerID: 'abc', MerTradeNo: 'T2', URL: 'https://x/3d' }));
    expect(await chargeCreditToken(MERCHANT, CREDIT, NOW, { fetch: fake.fetch })).toMatchObject({
      status: 'declined',
      code: 'authentication_required',
    });
  });

  it('refuses a bad creditToken or no creditHash before any call', async () => {
    const fake = payuni(() => sealed(PAID));
    await expect(
      chargeCreditToken(MERCHANT, { ...CREDIT, creditToken: 'a b' }, NOW, { fetch: fake.fetch }),
    ).rejects.toThrow('CreditToken');
    await expect(
      chargeCreditToken(MERCHANT, { ...CREDIT, creditHash: '' }, NOW, { fetch: fake.fetch }),
    ).rejects.toThrow('CreditHash');
    expect(fake.calls).toHaveLength(0);
  });
});

describe('PAYUNi card answers that cannot be trusted', () => {
  const tamperedHash = () => ({ ...sealed(PAID), HashInfo: 'F'.repeat(64) });
  const tamperedCipher = () => {
    const envelope = sealed(PAID);
    const joined = Buffer.from(envelope.EncryptInfo, 'hex').toString('utf8');
    const flipped = Buffer.from((joined[0] === 'A' ? 'B' : 'A') + joined.slice(1), 'utf8').toString('hex');
    // A HashInfo recomputed over the changed ciphertext: only the GCM tag can catch it.
    return { ...envelope, EncryptInfo: flipped, HashInfo: hashInfo(flipped, MERCHANT) };
  };
  const cases: [string, ReturnType<typeof payuni>['fetch']][] = [
    [
      'a network error',
      async () => {
        throw new TypeError('fetch failed');
      },
    ],
    ['an HTTP 500', payuni(() => sealed(PAID), 500).fetch],
    ['an HTTP 302', payuni(() => sealed(PAID), 302).fetch],
    ['a page, not JSON', payuni(() => '<html>busy</html>').fetch],
    ['JSON null', payuni(() => 'null').fetch],
    ['an unsigned error (a MerTradeNo used before)', payuni(() => ({ Status: 'MER_TRADE_NO_DUPLICATE' })).fetch],
    ['a wrong HashInfo', payuni(tamperedHash).fetch],
    ['a ciphertext changed in transit', payuni(tamperedCipher).fetch],
    ['another merchant outside', payuni(() => ({ ...sealed(PAID), MerID: 'xyz' })).fetch],
    ['a SUCCESS without TradeNo', payuni(() => sealed({ ...PAID, TradeNo: '' })).fetch],
    ['UNKNOWN (no bank answer yet)', payuni(() => sealed({ ...PAID, Status: 'UNKNOWN', TradeStatus: '' })).fetch],
    ['TradeStatus 8', payuni(() => sealed({ ...PAID, TradeStatus: '8' })).fetch],
    ['another trade', payuni(() => sealed({ ...PAID, MerTradeNo: 'OTHER' })).fetch],
    ['paid for another amount', payuni(() => sealed({ ...PAID, TradeAmt: '48' })).fetch],
  ];

  it.each(cases)('given %s, merchant_trade throws CardChargeUnanswered, never a decline', async (_, fetchFake) => {
    await expect(authorizeEmbeddedCard(MERCHANT, ORDER, NOW, { fetch: fetchFake })).rejects.toThrow(
      CardChargeUnanswered,
    );
  });

  it('given a timeout, /api/credit throws CardChargeUnanswered', async () => {
    const hanging: typeof fetch = (_, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
    await expect(
      chargeCreditToken(MERCHANT, { ...CREDIT, tradeNo: 'T1' }, NOW, { fetch: hanging, timeoutMs: 20 }),
    ).rejects.toThrow(CardChargeUnanswered);
  });
});

describe('readCardResult and the 3-D Secure notification', () => {
  it('reads a card without CreditHash or CreditLife as unsaved', () => {
    const { CreditHash, CreditLife, Card6No, ...plain } = PAID;
    expect(readCardResult(plain)).toMatchObject({
      status: 'paid',
      card: { last4: '4242', first6: null, creditHash: null, expMonth: null, expYear: null },
    });
  });

  it('given a posted 3-D Secure result, reads the paid card with its CreditHash; a failure as declined', () => {
    expect(readCardNotification(sealed(PAID), MERCHANT)).toEqual({
      tradeNo: 'T1',
      outcome: expect.objectContaining({ status: 'paid', card: expect.objectContaining({ creditHash: 'HASH123' }) }),
    });
    const failed = sealed({ ...PAID, Status: 'AUTH_3D_FAILED', Message: '3D 驗證失敗', TradeStatus: '2' });
    expect(readCardNotification(failed, MERCHANT).outcome).toEqual({
      status: 'declined',
      code: 'auth_3d_failed',
      message: '3D 驗證失敗',
    });
  });

  it('refuses a forged 3-D Secure result', () => {
    expect(() => readCardNotification({ ...sealed(PAID), HashInfo: 'A'.repeat(64) }, MERCHANT)).toThrow(
      RejectedNotification,
    );
  });
});
