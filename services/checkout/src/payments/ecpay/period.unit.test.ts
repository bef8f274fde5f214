import { aioCheckOutForm } from './aio';
import { checkMacValue, hasValidCheckMac } from './check-mac';
import { ECPAY_STAGING_MERCHANT } from './merchant';
import {
  PeriodActionUnanswered,
  PeriodQueryUnanswered,
  periodAction,
  periodScheduleOf,
  queryPeriod,
  readPeriodNotification,
} from './period';

const merchant = { ...ECPAY_STAGING_MERCHANT, baseUrl: 'https://ecpay.test' };
const now = new Date('2026-11-27T04:00:00Z');
const answering =
  (status: number, body: string, seen: { url?: string; fields?: Record<string, string> } = {}) =>
  async (url: string | URL | Request, init?: RequestInit) => {
    seen.url = String(url);
    seen.fields = Object.fromEntries(new URLSearchParams(String(init?.body)));
    return new Response(body, { status });
  };

describe('ECPay card plans (定期定額)', () => {
  it('given a plan interval, counts it as ECPay does, as many times as ECPay allows, or not at all', () => {
    expect(periodScheduleOf('month', 1)).toEqual({ periodType: 'M', frequency: 1, execTimes: 99 });
    expect(periodScheduleOf('month', 3)).toEqual({ periodType: 'M', frequency: 3, execTimes: 99 });
    expect(periodScheduleOf('year', 1)).toEqual({ periodType: 'Y', frequency: 1, execTimes: 9 });
    expect(periodScheduleOf('week', 2)).toEqual({ periodType: 'D', frequency: 14, execTimes: 999 });
    expect(periodScheduleOf('day', 30)).toEqual({ periodType: 'D', frequency: 30, execTimes: 999 });
    expect(periodScheduleOf('year', 2)).toBeNull();
    expect(periodScheduleOf('month', 13)).toBeNull();
    expect(periodScheduleOf('week', 53)).toBeNull();
  });

  it('given a plan order, adds the plan fields to a card form, the period amount the total, signed', () => {
    const form = aioCheckOutForm(merchant, {
      idempotencyKey: 'cs_1:0',
      amount: 299,
      method: 'Credit',
      itemName: 'Pro',
      description: 'Pro',
      now,
      returnUrl: 'https://b/result',
      period: { schedule: periodScheduleOf('month', 1)!, returnUrl: 'https://b/period' },
    });
    expect(form.fields).toMatchObject({
      TotalAmount: '299',
      PeriodAmount: '299',
      PeriodType: 'M',
      Frequency: '1',
      ExecTimes: '99',
      PeriodReturnURL: 'https://b/period',
    });
    expect(hasValidCheckMac(form.fields, merchant)).toBe(true);
    expect(() =>
      aioCheckOutForm(merchant, {
        idempotencyKey: 'cs_1:0',
        amount: 299,
        method: 'ATM',
        itemName: 'Pro',
        description: 'Pro',
        now,
        returnUrl: 'https://b/result',
        period: { schedule: periodScheduleOf('month', 1)!, returnUrl: 'https://b/period' },
      }),
    ).toThrow(RangeError);
  });

  it('when ECPay answers the plan query, reads its card, status and every authorisation; another trade or not JSON is no answer', async () => {
    const seen: { url?: string; fields?: Record<string, string> } = {};
    const answer = {
      MerchantID: '3002607',
      MerchantTradeNo: 'PLAN1',
      PeriodAmount: 299,
      ExecStatus: '1',
      card6no: '431195',
      card4no: '2222',
      ExecLog: [
        { RtnCode: 1, amount: 299, TradeNo: 'T1', process_date: '2026/10/27 10:00:00' },
        { RtnCode: 10100058, amount: 299, TradeNo: 'T2', process_date: '2026/11/27 10:00:00' },
      ],
    };
    const info = await queryPeriod(merchant, 'PLAN1', now, { fetch: answering(200, JSON.stringify(answer), seen) });
    expect(seen.url).toBe('https://ecpay.test/Cashier/QueryCreditCardPeriodInfo');
    expect(hasValidCheckMac(seen.fields!, merchant)).toBe(true);
    expect(seen.fields).toMatchObject({ MerchantID: '3002607', MerchantTradeNo: 'PLAN1', TimeStamp: '1795752000' });
    expect(info).toEqual({
      merchantTradeNo: 'PLAN1',
      amount: 299,
      execStatus: '1',
      card: { first6: '431195', last4: '2222' },
      executions: [
        { succeeded: true, amount: 299, tradeNo: 'T1', processDate: '2026/10/27 10:00:00', code: '1' },
        { succeeded: false, amount: 299, tradeNo: 'T2', processDate: '2026/11/27 10:00:00', code: '10100058' },
      ],
    });
    const other = JSON.stringify({ ...answer, MerchantTradeNo: 'PLAN2' });
    await expect(queryPeriod(merchant, 'PLAN1', now, { fetch: answering(200, other) })).rejects.toThrow(
      PeriodQueryUnanswered,
    );
    await expect(queryPeriod(merchant, 'PLAN1', now, { fetch: answering(200, '<html>') })).rejects.toThrow(
      PeriodQueryUnanswered,
    );
    await expect(queryPeriod(merchant, 'PLAN1', now, { fetch: answering(503, '') })).rejects.toThrow(
      PeriodQueryUnanswered,
    );
  });

  it('when ECPay answers a plan action, reads it only with its CheckMacValue', async () => {
    const fields = { MerchantID: '3002607', MerchantTradeNo: 'PLAN1', RtnCode: '1', RtnMsg: 'OK' };
    const signed = new URLSearchParams({ ...fields, CheckMacValue: checkMacValue(fields, merchant) }).toString();
    const seen: { url?: string; fields?: Record<string, string> } = {};
    expect(await periodAction(merchant, 'PLAN1', 'Cancel', now, { fetch: answering(200, signed, seen) })).toEqual({
      ok: true,
    });
    expect(seen.url).toBe('https://ecpay.test/Cashier/CreditCardPeriodAction');
    expect(seen.fields).toMatchObject({ Action: 'Cancel', MerchantTradeNo: 'PLAN1' });
    const refusedFields = { ...fields, RtnCode: '10100051', RtnMsg: 'Action Error' };
    const refused = new URLSearchParams({
      ...refusedFields,
      CheckMacValue: checkMacValue(refusedFields, merchant),
    }).toString();
    expect(await periodAction(merchant, 'PLAN1', 'ReAuth', now, { fetch: answering(200, refused) })).toEqual({
      ok: false,
      code: '10100051',
      message: 'Action Error',
    });
    const forged = new URLSearchParams({ ...fields, CheckMacValue: 'A'.repeat(64) }).toString();
    await expect(periodAction(merchant, 'PLAN1', 'Cancel', now, { fetch: answering(200, forged) })).rejects.toThrow(
      PeriodActionUnanswered,
    );
  });

  it("when ECPay posts a period, reads it only with the merchant's CheckMacValue", () => {
    const fields = {
      MerchantID: '3002607',
      MerchantTradeNo: 'PLAN1',
      RtnCode: '1',
      RtnMsg: '授權成功',
      Amount: '299',
      TotalSuccessTimes: '2',
    };
    expect(readPeriodNotification({ ...fields, CheckMacValue: checkMacValue(fields, merchant) }, merchant)).toEqual({
      merchantTradeNo: 'PLAN1',
      succeeded: true,
      amount: 299,
      totalSuccessTimes: 2,
      message: '授權成功',
    });
    expect(readPeriodNotification({ ...fields, CheckMacValue: 'A'.repeat(64) }, merchant)).toBeNull();
    const other = { ...fields, MerchantID: '2000132' };
    expect(readPeriodNotification({ ...other, CheckMacValue: checkMacValue(other, merchant) }, merchant)).toBeNull();
  });
});
