import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { aioCheckOutForm, merchantTradeNo } from '../src/payments/ecpay/aio';
import { type EcpayEmulator, startEcpayEmulator } from '../src/payments/ecpay/emulator';
import { type EcpayMerchant, ECPAY_STAGING_MERCHANT } from '../src/payments/ecpay/merchant';
import {
  type EcpayNotification,
  NOTIFICATION_RECEIVED,
  RejectedNotification,
  readNotification,
} from '../src/payments/ecpay/notifications';
import { QueryUnanswered, queryPaymentInfo, queryTrade } from '../src/payments/ecpay/query';
import { refundEcpayTrade } from '../src/payments/ecpay/refund';

/** The merchant's side: reads each post as the platform will, answers `1|OK` unless told to fail the next ones. */
async function startReceiver(merchant: () => EcpayMerchant) {
  const heard: EcpayNotification[] = [];
  const rejected: string[] = [];
  let failNext = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      try {
        const notification = readNotification(Object.fromEntries(new URLSearchParams(body)), merchant());
        if (failNext > 0) {
          failNext--;
          res.writeHead(500).end('busy');
          return;
        }
        heard.push(notification);
        res.writeHead(200, { 'content-type': 'text/plain' }).end(NOTIFICATION_RECEIVED);
      } catch (error) {
        rejected.push((error as Error).message);
        res.writeHead(error instanceof RejectedNotification ? 400 : 500).end('rejected');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    heard,
    rejected,
    failNextPosts: (n: number) => void (failNext = n),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('ECPay AIO against the emulator, over HTTP', () => {
  let clock = new Date('2026-11-26T16:30:00Z');
  let emulator: EcpayEmulator;
  let merchant: EcpayMerchant;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    emulator = await startEcpayEmulator(ECPAY_STAGING_MERCHANT, () => clock);
    merchant = { ...ECPAY_STAGING_MERCHANT, baseUrl: emulator.url };
    receiver = await startReceiver(() => merchant);
  });
  afterAll(async () => {
    await emulator.close();
    await receiver.close();
  });

  const order = (key: string, method: 'Credit' | 'ATM' | 'CVS', amount = 480) =>
    aioCheckOutForm(merchant, {
      idempotencyKey: key,
      amount,
      method,
      itemName: 'Pro',
      description: 'Pro plan',
      now: clock,
      returnUrl: `${receiver.url}/ecpay/result`,
      paymentInfoUrl: `${receiver.url}/ecpay/payment-info`,
      orderResultUrl: 'https://shop.example/thanks',
    });

  /** What the buyer's browser does with the form: posts it to ECPay. */
  const submit = async (form: { action: string; fields: Record<string, string> }) => {
    const response = await fetch(form.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form.fields).toString(),
    });
    return { status: response.status, page: await response.text() };
  };

  it('given a card order, the buyer passes 3-D Secure and pays on ECPay: the result is posted once, checked, and the query agrees', async () => {
    const opened = await submit(order('card-1', 'Credit'));
    expect(opened.status).toBe(200);
    const tradeNo = merchantTradeNo('card-1');
    expect(await queryTrade(merchant, tradeNo, clock)).toMatchObject({ status: 'unpaid', amount: 480 });

    // The bank's 3-D Secure step comes first: nothing is paid until the code is confirmed.
    const challenged = await fetch(`${emulator.url}/emulator/trades/${tradeNo}/pay`, { method: 'POST' });
    expect(await challenged.text()).toContain('3-D Secure');
    expect(await queryTrade(merchant, tradeNo, clock)).toMatchObject({ status: 'unpaid' });
    const paid = await fetch(`${emulator.url}/emulator/trades/${tradeNo}/otp`, { method: 'POST' });
    expect(await paid.text()).toContain('https://shop.example/thanks');
    expect(receiver.heard.filter((n) => n.tradeNo === tradeNo)).toEqual([
      expect.objectContaining({ kind: 'paid', amount: 480, paidAt: clock }),
    ]);
    expect(await queryTrade(merchant, tradeNo, clock)).toMatchObject({ status: 'paid', amount: 480, paidAt: clock });
  });

  it('given a declined card, the failure is posted and the query says failed', async () => {
    await submit(order('card-2', 'Credit'));
    await emulator.decline(merchantTradeNo('card-2'));
    expect(receiver.heard.find((n) => n.tradeNo === merchantTradeNo('card-2'))).toMatchObject({ kind: 'failed' });
    expect(await queryTrade(merchant, merchantTradeNo('card-2'), clock)).toMatchObject({ status: 'failed' });
  });

  it('given an ATM order, the account is posted before any payment; the bank transfer settles it later', async () => {
    const opened = await submit(order('atm-1', 'ATM', 1200));
    const tradeNo = merchantTradeNo('atm-1');
    const issued = receiver.heard.find((n) => n.tradeNo === tradeNo);
    expect(issued).toMatchObject({ kind: 'atm_issued', amount: 1200, bankCode: '812' });
    expect(opened.page).toContain((issued as { account: string }).account);
    expect((issued as { expiresAt: Date }).expiresAt).toEqual(new Date('2026-11-30T15:59:59Z'));
    expect(await queryTrade(merchant, tradeNo, clock)).toMatchObject({ status: 'unpaid' });
    // QueryPaymentInfo gives the same account, signed, for a post that never arrived; a card trade has none.
    expect(await queryPaymentInfo(merchant, tradeNo, clock)).toMatchObject({
      kind: 'atm_issued',
      account: (issued as { account: string }).account,
    });
    expect(await queryPaymentInfo(merchant, merchantTradeNo('card-2'), clock)).toBeNull();
    await expect(queryPaymentInfo({ ...merchant, hashKey: 'aaaaaaaaaaaaaaaa' }, tradeNo, clock)).rejects.toThrow(
      QueryUnanswered,
    );

    clock = new Date('2026-11-28T01:00:00Z');
    await emulator.pay(tradeNo);
    expect(receiver.heard.filter((n) => n.tradeNo === tradeNo).map((n) => n.kind)).toEqual(['atm_issued', 'paid']);
  });

  it('given a CVS order left unpaid, the code is posted and the trade stays unpaid', async () => {
    await submit(order('cvs-1', 'CVS', 300));
    const tradeNo = merchantTradeNo('cvs-1');
    expect(receiver.heard.find((n) => n.tradeNo === tradeNo)).toMatchObject({ kind: 'cvs_issued', amount: 300 });
    expect(await queryTrade(merchant, tradeNo, clock)).toMatchObject({ status: 'unpaid' });
  });

  it('when the merchant does not answer 1|OK, the result is posted again, and the repeat reads the same', async () => {
    await submit(order('card-3', 'Credit'));
    const tradeNo = merchantTradeNo('card-3');
    receiver.failNextPosts(1);
    await emulator.pay(tradeNo);
    expect(receiver.heard.filter((n) => n.tradeNo === tradeNo)).toHaveLength(0);
    await emulator.resendUnacknowledged();
    await emulator.resendUnacknowledged();
    expect(receiver.heard.filter((n) => n.tradeNo === tradeNo)).toEqual([expect.objectContaining({ kind: 'paid' })]);
    expect(emulator.posts.filter((p) => p.fields.MerchantTradeNo === tradeNo).map((p) => p.answer)).toEqual([
      'busy',
      NOTIFICATION_RECEIVED,
    ]);
  });

  it('refuses a second trade under one key, and a form whose amount was changed after signing', async () => {
    expect((await submit(order('card-1', 'Credit'))).page).toContain('MerchantTradeNo Duplicate');
    const form = order('card-4', 'Credit');
    const tampered = await submit({ ...form, fields: { ...form.fields, TotalAmount: '1' } });
    expect(tampered).toMatchObject({ status: 400, page: expect.stringContaining('CheckMacValue Error') });
  });

  it('a post signed with other keys is rejected by the merchant and acts on nothing', async () => {
    const forger = await startEcpayEmulator({ ...ECPAY_STAGING_MERCHANT, hashKey: 'forgedforgedforg' }, () => clock);
    try {
      const form = aioCheckOutForm(
        { ...ECPAY_STAGING_MERCHANT, hashKey: 'forgedforgedforg', baseUrl: forger.url },
        {
          idempotencyKey: 'forged',
          amount: 1,
          method: 'Credit',
          itemName: 'x',
          description: 'x',
          now: clock,
          returnUrl: `${receiver.url}/r`,
        },
      );
      await submit(form);
      const before = receiver.heard.length;
      await forger.pay(merchantTradeNo('forged'));
      expect(receiver.heard).toHaveLength(before);
      expect(receiver.rejected).toContain('CheckMacValue does not match');
    } finally {
      await forger.close();
    }
  });

  it('a query nobody answers, or answers with a wrong CheckMacValue, is unanswered: never read as not paid', async () => {
    await expect(queryTrade({ ...merchant, baseUrl: 'http://127.0.0.1:9' }, 'X', clock)).rejects.toThrow(
      QueryUnanswered,
    );
    await expect(
      queryTrade({ ...merchant, hashIV: 'wrongwrongwrongw' }, merchantTradeNo('card-1'), clock),
    ).rejects.toThrow(QueryUnanswered);
    const stale = new Date(clock.getTime() - 10 * 60_000);
    await expect(queryTrade(merchant, merchantTradeNo('card-1'), stale)).rejects.toThrow('HTTP 400');
  });

  it('refunds a card by the state of its capture: abandoned before 20:15, E then N while captured, R in part after', async () => {
    const start = clock;
    clock = new Date('2026-11-29T16:30:00Z');
    emulator.captures.mode = 'daily';
    const paidCard = async (key: string) => {
      await submit(order(key, 'Credit'));
      const tradeNo = merchantTradeNo(key);
      await emulator.pay(tradeNo);
      return { merchantTradeNo: tradeNo, ecpayTradeNo: emulator.trades.get(tradeNo)!.ecpayTradeNo, authorised: 480 };
    };
    try {
      // Paid at 00:30 in Taiwan: authorised only (已授權) until ECPay's capture at 20:15.
      const first = await paidCard('refund-1');
      const second = await paidCard('refund-2');
      const third = await paidCard('refund-3');
      expect(await refundEcpayTrade(merchant, { ...first, amount: 100 })).toMatchObject({ status: 'refused' });
      expect(await refundEcpayTrade(merchant, { ...first, amount: 480 })).toEqual({ status: 'refunded' });
      expect(emulator.refunded.get(first.ecpayTradeNo)).toBe(480);
      expect(await refundEcpayTrade(merchant, { ...first, amount: 480 })).toMatchObject({ status: 'refused' });

      clock = new Date('2026-11-30T13:00:00Z'); // 21:00 in Taiwan: being captured (要關帳)
      expect(await refundEcpayTrade(merchant, { ...second, amount: 80 })).toEqual({ status: 'refunded' });
      expect(await refundEcpayTrade(merchant, { ...third, amount: 480 })).toEqual({ status: 'refunded' });
      expect(emulator.refunded.get(third.ecpayTradeNo)).toBe(480);

      clock = new Date('2026-12-01T13:00:00Z'); // a day later: captured (已關帳)
      expect(await refundEcpayTrade(merchant, { ...second, amount: 400 })).toEqual({ status: 'refunded' });
      expect(await refundEcpayTrade(merchant, { ...second, amount: 1 })).toMatchObject({ status: 'refused' });
      expect(emulator.refunded.get(second.ecpayTradeNo)).toBe(480);
    } finally {
      emulator.captures.mode = 'at_once';
      clock = start;
    }
  });
});
