import { seal } from './crypto';
import { PAYUNI_SANDBOX_URL, type PayuniMerchant } from './merchant';
import { RejectedNotification, readNotification } from './notifications';

const MERCHANT: PayuniMerchant = {
  merchantId: 'abc',
  hashKey: '12345678901234567890123456789012',
  hashIV: '1234567890123456',
  baseUrl: PAYUNI_SANDBOX_URL,
};

/** A NotifyURL post as PAYUNi's UPP documents it: Status outside, the rest inside EncryptInfo. */
const post = (inside: Record<string, string>, merchant = MERCHANT) => ({
  Status: inside.Status ?? 'SUCCESS',
  ...seal(merchant.merchantId, inside, merchant),
});

const PAID_CARD = {
  Status: 'SUCCESS',
  Message: '授權成功',
  MerID: 'abc',
  MerTradeNo: 'ABC123',
  TradeNo: '1764174605123456789',
  TradeAmt: '480',
  TradeStatus: '1',
  PaymentType: '1',
  Gateway: '2',
  Card6No: '414763',
  Card4No: '0001',
  AuthDay: '20261127',
  AuthTime: '003110',
};

describe('PAYUNi notifications', () => {
  it('given a paid card, reads it as paid with its Taiwan-time authorisation time', () => {
    expect(readNotification(post(PAID_CARD), MERCHANT)).toEqual({
      kind: 'paid',
      tradeNo: 'ABC123',
      payuniTradeNo: '1764174605123456789',
      amount: 480,
      paymentType: '1',
      paidAt: new Date('2026-11-26T16:31:10Z'),
    });
  });

  it('given a declined card, reads the failure with its status and message', () => {
    const declined = { ...PAID_CARD, Status: 'UPP00000', Message: '授權失敗', TradeStatus: '2' };
    expect(readNotification(post(declined), MERCHANT)).toMatchObject({
      kind: 'failed',
      status: 'UPP00000',
      tradeStatus: '2',
      message: '授權失敗',
    });
  });

  it('given an ATM account issued (TradeStatus 0, PaymentType 2), reads bank, account and deadline', () => {
    const issued = {
      ...PAID_CARD,
      Message: '(ATM)建立成功',
      TradeStatus: '0',
      PaymentType: '2',
      BankType: '822',
      PayNo: '98765432101234',
      PaySet: '1',
      ExpireDate: '2026-12-04 23:59:59',
    };
    expect(readNotification(post(issued), MERCHANT)).toMatchObject({
      kind: 'atm_issued',
      bankCode: '822',
      account: '98765432101234',
      expiresAt: new Date('2026-12-04T15:59:59Z'),
    });
  });

  it('given a CVS code issued (TradeStatus 0, PaymentType 3), reads store, code and deadline', () => {
    const issued = {
      ...PAID_CARD,
      TradeStatus: '0',
      PaymentType: '3',
      Store: 'SEVEN',
      PayNo: 'UN123456789012',
      ExpireDate: '2026-12-04 23:59:59',
    };
    expect(readNotification(post(issued), MERCHANT)).toMatchObject({
      kind: 'cvs_issued',
      store: 'SEVEN',
      paymentNo: 'UN123456789012',
    });
  });

  it('reads UNKNOWN (no bank answer within 60 s) and TradeStatus 8 as pending, not as failed', () => {
    expect(readNotification(post({ ...PAID_CARD, Status: 'UNKNOWN', TradeStatus: '' }), MERCHANT)).toMatchObject({
      kind: 'pending',
    });
    expect(readNotification(post({ ...PAID_CARD, TradeStatus: '8' }), MERCHANT)).toMatchObject({ kind: 'pending' });
  });

  it.each([
    ['a changed HashInfo', { ...post(PAID_CARD), HashInfo: 'A'.repeat(64) }],
    ['no EncryptInfo', { Status: 'SUCCESS', MerID: 'abc' }],
    ['other keys', post(PAID_CARD, { ...MERCHANT, hashKey: 'abcdefghijklmnopqrstuvwxyz123456' })],
    ['another merchant inside', post({ ...PAID_CARD, MerID: 'xyz' })],
    ['another merchant outside', { ...post(PAID_CARD), MerID: 'xyz' }],
    ['no trade number', post({ ...PAID_CARD, MerTradeNo: '' })],
  ])('refuses %s', (_, body) => {
    expect(() => readNotification(body, MERCHANT)).toThrow(RejectedNotification);
  });
});
