import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CodeIssueUnanswered, issuePayuniCode } from '../src/payments/payuni/codes';
import { type PayuniEmulator, startPayuniEmulator } from '../src/payments/payuni/emulator';
import type { PayuniMerchant } from '../src/payments/payuni/merchant';
import { readNotification } from '../src/payments/payuni/notifications';
import { queryPayuniTrade } from '../src/payments/payuni/query';
import { payuniTradeNo } from '../src/payments/payuni/upp';

/** Placeholder keys in the shape PAYUNi issues (no public test merchant was found). */
const KEYS = { merchantId: 'S01234567', hashKey: '12345678901234567890123456789012', hashIV: '1234567890123456' };

describe('PAYUNi ATM accounts and store codes issued server to server, against the emulator over HTTP', () => {
  const clock = new Date('2026-11-26T16:30:00Z');
  let emulator: PayuniEmulator;
  let merchant: PayuniMerchant;
  let shop: Server;
  const heard: ReturnType<typeof readNotification>[] = [];

  beforeAll(async () => {
    emulator = await startPayuniEmulator(KEYS, () => clock);
    merchant = { ...KEYS, baseUrl: emulator.url };
    shop = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        heard.push(readNotification(Object.fromEntries(new URLSearchParams(body)), merchant));
        res.writeHead(200).end('OK');
      });
    });
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await emulator.close();
    await new Promise((resolve) => shop.close(resolve));
  });

  const order = (key: string, method: 'atm' | 'cvs', amount = 299) => ({
    idempotencyKey: key,
    amount,
    method,
    description: 'Pro plan, December',
    notifyUrl: `http://127.0.0.1:${(shop.address() as AddressInfo).port}/notify`,
    email: 'buyer@example.com',
    expireDays: 3,
    now: clock,
  });

  it('issues an ATM account at once with its deadline; paid, NotifyURL hears it and the query says paid', async () => {
    const issued = await issuePayuniCode(merchant, order('inv_1:1', 'atm'));
    expect(issued).toMatchObject({
      kind: 'atm_issued',
      tradeNo: payuniTradeNo('inv_1:1'),
      amount: 299,
      bankCode: '822',
      account: expect.stringMatching(/^\d{14}$/),
      // Three days on in Taiwan (27 November 00:30 there), to the end of that day.
      expiresAt: new Date('2026-11-30T15:59:59Z'),
    });
    expect(await queryPayuniTrade(merchant, payuniTradeNo('inv_1:1'), clock)).toMatchObject({
      status: 'unpaid',
      paymentType: '2',
    });
    await emulator.pay(payuniTradeNo('inv_1:1'));
    expect(heard.at(-1)).toMatchObject({ kind: 'paid', tradeNo: payuniTradeNo('inv_1:1'), amount: 299 });
    expect(await queryPayuniTrade(merchant, payuniTradeNo('inv_1:1'), clock)).toMatchObject({ status: 'paid' });
  });

  it('issues a convenience-store code', async () => {
    expect(await issuePayuniCode(merchant, order('inv_2:1', 'cvs', 480))).toMatchObject({
      kind: 'cvs_issued',
      amount: 480,
      paymentNo: expect.stringMatching(/^UN\d{12}$/),
    });
  });

  it('a key used before, a lost answer or another merchant is no answer, never a code', async () => {
    await issuePayuniCode(merchant, order('inv_3:1', 'atm'));
    await expect(issuePayuniCode(merchant, order('inv_3:1', 'atm'))).rejects.toThrow(CodeIssueUnanswered);
    emulator.failNext('/api/atm', 'drop');
    await expect(issuePayuniCode(merchant, order('inv_4:1', 'atm'))).rejects.toThrow(CodeIssueUnanswered);
    // The account was issued all the same: PAYUNi knows the trade, unpaid, and it expires unpaid.
    expect(await queryPayuniTrade(merchant, payuniTradeNo('inv_4:1'), clock)).toMatchObject({ status: 'unpaid' });
    const other = { ...merchant, hashKey: 'abcdefghijabcdefghijabcdefghij12' };
    await expect(issuePayuniCode(other, order('inv_5:1', 'cvs'))).rejects.toThrow(CodeIssueUnanswered);
    await expect(issuePayuniCode(merchant, { ...order('inv_6:1', 'atm'), expireDays: 0 })).rejects.toThrow(RangeError);
  });
});
