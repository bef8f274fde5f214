import { open } from './crypto';
import { PAYUNI_SANDBOX_URL, type PayuniMerchant, parsePayuniDateTime, payuniDate, payuniDateTime } from './merchant';
import { payuniTradeNo, uppForm } from './upp';

const MERCHANT: PayuniMerchant = {
  merchantId: 'abc',
  hashKey: '12345678901234567890123456789012',
  hashIV: '1234567890123456',
  baseUrl: PAYUNI_SANDBOX_URL,
};

const order = {
  idempotencyKey: 'cs_123:0',
  amount: 480,
  method: 'Credit' as const,
  description: 'Pro 月方案',
  now: new Date('2026-11-26T16:30:05Z'),
  notifyUrl: 'https://billing.example/payuni/notify',
  returnUrl: 'https://billing.example/payuni/return',
};

describe('UPP form', () => {
  it('names the trade by the charge key: 20 letters and digits (PAYUNi allows 25 of A-Za-z0-9_-), the same on a retry', () => {
    expect(payuniTradeNo('cs_123:0')).toMatch(/^[0-9A-Z]{20}$/);
    expect(payuniTradeNo('cs_123:0')).toBe(payuniTradeNo('cs_123:0'));
    expect(payuniTradeNo('cs_123:1')).not.toBe(payuniTradeNo('cs_123:0'));
  });

  it('given a card order, posts MerID, Version, EncryptInfo and HashInfo to /api/upp, with only Credit switched on', () => {
    const form = uppForm(MERCHANT, order);
    expect(form.action).toBe('https://sandbox-api.payuni.com.tw/api/upp');
    expect(Object.keys(form.fields)).toEqual(['MerID', 'Version', 'EncryptInfo', 'HashInfo']);
    expect(form.fields).toMatchObject({ MerID: 'abc', Version: '1.0' });
    const inside = open(form.fields, MERCHANT);
    expect(inside).toEqual({
      MerID: 'abc',
      MerTradeNo: payuniTradeNo('cs_123:0'),
      TradeAmt: '480',
      Timestamp: String(Date.parse('2026-11-26T16:30:05Z') / 1000),
      ProdDesc: 'Pro 月方案',
      NotifyURL: 'https://billing.example/payuni/notify',
      ReturnURL: 'https://billing.example/payuni/return',
      Credit: '1',
    });
    expect(inside).not.toHaveProperty('ExpireDate');
  });

  it('given ATM and CVS orders, sets the deadline as a Taiwan-time day, 7 days by default', () => {
    const atm = open(uppForm(MERCHANT, { ...order, method: 'ATM' }).fields, MERCHANT);
    // 2026-11-27 00:30 in Taiwan, plus 7 days.
    expect(atm).toMatchObject({ ATM: '1', ExpireDate: '2026-12-04' });
    expect(atm).not.toHaveProperty('Credit');
    const cvs = open(uppForm(MERCHANT, { ...order, method: 'CVS', expireDays: 1 }).fields, MERCHANT);
    expect(cvs).toMatchObject({ CVS: '1', ExpireDate: '2026-11-28' });
  });

  it.each([
    [{ amount: 0 }, 'positive integer'],
    [{ amount: 10.5 }, 'positive integer'],
    [{ method: 'ATM' as const, expireDays: 181 }, '1-180 days'],
    [{ method: 'CVS' as const, expireDays: 0 }, '1-180 days'],
  ])('refuses an order PAYUNi would refuse: %o', (change, message) => {
    expect(() => uppForm(MERCHANT, { ...order, ...change })).toThrow(message);
  });
});

describe('PAYUNi dates', () => {
  it('writes and reads Taiwan time in the forms PAYUNi uses', () => {
    expect(payuniDate(new Date('2026-12-31T16:00:00Z'))).toBe('2027-01-01');
    expect(payuniDateTime(new Date('2026-12-31T16:00:00Z'))).toBe('2027-01-01 00:00:00');
    expect(parsePayuniDateTime('2027-01-01 00:00:00')).toEqual(new Date('2026-12-31T16:00:00Z'));
    expect(parsePayuniDateTime('2027-01-03')).toEqual(new Date('2027-01-02T16:00:00Z'));
    expect(parsePayuniDateTime('20270103', '101500')).toEqual(new Date('2027-01-03T02:15:00Z'));
    expect(parsePayuniDateTime('tomorrow')).toBeNull();
  });
});
