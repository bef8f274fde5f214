import { hasValidCheckMac } from './check-mac';
import { aioCheckOutForm, merchantTradeNo } from './aio';
import { ECPAY_STAGING_MERCHANT, ecpayDateTime, parseEcpayDateTime } from './merchant';

const order = {
  idempotencyKey: 'cs_123:0',
  amount: 480,
  method: 'Credit' as const,
  itemName: 'Pro 月方案 #1',
  description: 'Pro',
  now: new Date('2026-11-26T16:30:05Z'),
  returnUrl: 'https://billing.example/ecpay/notifications',
};

describe('AioCheckOut form', () => {
  it('given an order, names its trade by the charge key: 20 letters and digits, the same on a retry', () => {
    expect(merchantTradeNo('cs_123:0')).toMatch(/^[0-9A-Z]{20}$/);
    expect(merchantTradeNo('cs_123:0')).toBe(merchantTradeNo('cs_123:0'));
    expect(merchantTradeNo('cs_123:1')).not.toBe(merchantTradeNo('cs_123:0'));
  });

  it('given a card order, gives the V5 fields in Taiwan time with a CheckMacValue ECPay can check', () => {
    const form = aioCheckOutForm(ECPAY_STAGING_MERCHANT, order);
    expect(form.action).toBe('https://payment-stage.ecpay.com.tw/Cashier/AioCheckOut/V5');
    expect(form.fields).toMatchObject({
      MerchantID: '3002607',
      MerchantTradeDate: '2026/11/27 00:30:05',
      PaymentType: 'aio',
      TotalAmount: '480',
      ItemName: 'Pro 月方案  1',
      ChoosePayment: 'Credit',
      EncryptType: '1',
    });
    expect(form.fields).not.toHaveProperty('ExpireDate');
    expect(hasValidCheckMac(form.fields, ECPAY_STAGING_MERCHANT)).toBe(true);
  });

  it('given ATM and CVS orders, sets their deadlines and where the account or code is posted', () => {
    const atm = aioCheckOutForm(ECPAY_STAGING_MERCHANT, { ...order, method: 'ATM', paymentInfoUrl: 'https://b/info' });
    expect(atm.fields).toMatchObject({ ChoosePayment: 'ATM', ExpireDate: '3', PaymentInfoURL: 'https://b/info' });
    const cvs = aioCheckOutForm(ECPAY_STAGING_MERCHANT, { ...order, method: 'CVS', cvsExpireMinutes: 60 });
    expect(cvs.fields).toMatchObject({ ChoosePayment: 'CVS', StoreExpireDate: '60' });
  });

  it.each([
    [{ amount: 0 }, 'positive integer'],
    [{ amount: 10.5 }, 'positive integer'],
    [{ method: 'ATM' as const, atmExpireDays: 61 }, '1-60 days'],
    [{ method: 'CVS' as const, cvsExpireMinutes: 0 }, '1-43,200 minutes'],
  ])('refuses an order ECPay would refuse: %o', (change, message) => {
    expect(() => aioCheckOutForm(ECPAY_STAGING_MERCHANT, { ...order, ...change })).toThrow(message);
  });
});

describe('ECPay dates', () => {
  it('writes and reads Taiwan time', () => {
    expect(ecpayDateTime(new Date('2026-12-31T16:00:00Z'))).toBe('2027/01/01 00:00:00');
    expect(parseEcpayDateTime('2027/01/01 00:00:00')).toEqual(new Date('2026-12-31T16:00:00Z'));
    expect(parseEcpayDateTime('2027/01/03')).toEqual(new Date('2027-01-02T16:00:00Z'));
    expect(parseEcpayDateTime('2027/01/03 10:15')).toEqual(new Date('2027-01-03T02:15:00Z'));
    expect(parseEcpayDateTime('tomorrow')).toBeNull();
  });
});
