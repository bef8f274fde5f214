import { checkMacValue } from './check-mac';
import { ECPAY_STAGING_MERCHANT } from './merchant';
import { RejectedNotification, readNotification } from './notifications';

const signed = (fields: Record<string, string>) => ({
  ...fields,
  CheckMacValue: checkMacValue(fields, ECPAY_STAGING_MERCHANT),
});

/** The fields of ECPay's 付款結果通知 (ReturnURL), with the staging merchant's keys. */
const PAID = {
  MerchantID: '3002607',
  MerchantTradeNo: 'ABC123',
  StoreID: '',
  RtnCode: '1',
  RtnMsg: '交易成功',
  TradeNo: '2611270030051234',
  TradeAmt: '480',
  PaymentDate: '2026/11/27 00:31:10',
  PaymentType: 'Credit_CreditCard',
  PaymentTypeChargeFee: '10',
  TradeDate: '2026/11/27 00:30:05',
  SimulatePaid: '0',
  CustomField1: '',
};

describe('ECPay notifications', () => {
  it('given a signed payment result, reads it as paid with its Taiwan-time payment date and how it was paid', () => {
    expect(readNotification(signed(PAID), ECPAY_STAGING_MERCHANT)).toEqual({
      kind: 'paid',
      tradeNo: 'ABC123',
      ecpayTradeNo: '2611270030051234',
      amount: 480,
      paidAt: new Date('2026-11-26T16:31:10Z'),
      simulated: false,
      paymentType: 'Credit_CreditCard',
    });
    const byAtm = readNotification(signed({ ...PAID, PaymentType: 'ATM_TAISHIN' }), ECPAY_STAGING_MERCHANT);
    expect(byAtm).toMatchObject({ kind: 'paid', paymentType: 'ATM_TAISHIN' });
  });

  it('given a failed result, reads the failure with its code', () => {
    const notification = readNotification(
      signed({ ...PAID, RtnCode: '10100058', RtnMsg: '付款失敗' }),
      ECPAY_STAGING_MERCHANT,
    );
    expect(notification).toMatchObject({ kind: 'failed', code: '10100058', message: '付款失敗' });
  });

  it('given an ATM account issued (RtnCode 2), the deadline is the end of that day in Taiwan', () => {
    const info = {
      ...PAID,
      RtnCode: '2',
      RtnMsg: 'Get VirtualAccount Succeeded',
      BankCode: '812',
      vAccount: '9103522175887271',
      ExpireDate: '2026/11/30',
    };
    delete (info as Partial<typeof PAID>).PaymentDate;
    expect(readNotification(signed(info), ECPAY_STAGING_MERCHANT)).toMatchObject({
      kind: 'atm_issued',
      bankCode: '812',
      account: '9103522175887271',
      expiresAt: new Date('2026-11-30T15:59:59Z'),
    });
  });

  it('given a CVS code issued (RtnCode 10100073), reads the code and its deadline', () => {
    const info = {
      ...PAID,
      RtnCode: '10100073',
      RtnMsg: 'Get CVS Code Succeeded',
      PaymentNo: 'LLL22251222',
      ExpireDate: '2026/12/04 00:30:05',
    };
    expect(readNotification(signed(info), ECPAY_STAGING_MERCHANT)).toMatchObject({
      kind: 'cvs_issued',
      paymentNo: 'LLL22251222',
      expiresAt: new Date('2026-12-03T16:30:05Z'),
    });
    expect(readNotification(signed({ ...info, RtnCode: '10100050' }), ECPAY_STAGING_MERCHANT)).toMatchObject({
      kind: 'issue_failed',
    });
  });

  it.each([
    ['a changed amount', { ...signed(PAID), TradeAmt: '1' }],
    ['no CheckMacValue', PAID],
    ['another merchant', signed({ ...PAID, MerchantID: '2000132' })],
    ['no trade number', signed({ ...PAID, MerchantTradeNo: '' })],
  ])('refuses %s', (_, body) => {
    expect(() => readNotification(body, ECPAY_STAGING_MERCHANT)).toThrow(RejectedNotification);
  });
});
