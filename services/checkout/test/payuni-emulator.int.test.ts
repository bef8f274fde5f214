import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seal } from '../src/payments/payuni/crypto';
import { type PayuniEmulator, startPayuniEmulator } from '../src/payments/payuni/emulator';
import type { PayuniMerchant } from '../src/payments/payuni/merchant';
import {
  NOTIFICATION_RECEIVED,
  type PayuniNotification,
  RejectedNotification,
  readNotification,
} from '../src/payments/payuni/notifications';
import { QueryUnanswered, queryPayuniTrade } from '../src/payments/payuni/query';
import { type UppForm, payuniTradeNo, uppForm } from '../src/payments/payuni/upp';

/** Placeholder keys in the shape PAYUNi issues (no public test merchant was found). */
const KEYS = { merchantId: 'S01234567', hashKey: '12345678901234567890123456789012', hashIV: '1234567890123456' };

/** The merchant's side: reads each post as the platform will, answers 200 unless told to fail the next ones. */
async function startReceiver(merchant: () => PayuniMerchant) {
  const heard: PayuniNotification[] = [];
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
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    heard,
    rejected,
    failNextPosts: (n: number) => void (failNext = n),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('PAYUNi UPP against the emulator, over HTTP', () => {
  let clock = new Date('2026-11-26T16:30:00Z');
  let emulator: PayuniEmulator;
  let merchant: PayuniMerchant;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    emulator = await startPayuniEmulator(KEYS, () => clock);
    merchant = { ...KEYS, baseUrl: emulator.url };
    receiver = await startReceiver(() => merchant);
  });
  afterAll(async () => {
    await emulator.close();
    await receiver.close();
  });

  const order = (key: string, method: 'Credit' | 'ATM' | 'CVS', amount = 480) =>
    uppForm(merchant, {
      idempotencyKey: key,
      amount,
      method,
      description: 'Pro plan',
      now: clock,
      notifyUrl: `${receiver.url}/payuni/notify`,
      returnUrl: 'https://shop.example/payuni/return',
    });

  /** What the buyer's browser does with the form: posts it to PAYUNi. */
  const submit = async (form: Pick<UppForm, 'action' | 'fields'>) => {
    const response = await fetch(form.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form.fields).toString(),
    });
    return { status: response.status, page: await response.text() };
  };
  const heardOf = (tradeNo: string) => receiver.heard.filter((n) => n.tradeNo === tradeNo);

  it('given a card order, the buyer pays: the result is posted once, verified, and the query agrees', async () => {
    expect((await submit(order('card-1', 'Credit'))).status).toBe(200);
    const tradeNo = payuniTradeNo('card-1');
    expect(await queryPayuniTrade(merchant, tradeNo, clock)).toMatchObject({ status: 'unpaid', amount: 480 });

    const paid = await fetch(`${emulator.url}/emulator/trades/${tradeNo}/pay`, { method: 'POST' });
    expect(await paid.text()).toContain('https://shop.example/payuni/return');
    expect(heardOf(tradeNo)).toEqual([expect.objectContaining({ kind: 'paid', amount: 480, paymentType: '1' })]);
    expect(await queryPayuniTrade(merchant, tradeNo, clock)).toMatchObject({ status: 'paid', paidAt: clock });
  });

  it('given a declined card, the failure is posted and the query says failed', async () => {
    await submit(order('card-2', 'Credit'));
    const tradeNo = payuniTradeNo('card-2');
    await emulator.decline(tradeNo);
    expect(heardOf(tradeNo)).toEqual([expect.objectContaining({ kind: 'failed', tradeStatus: '2' })]);
    expect(await queryPayuniTrade(merchant, tradeNo, clock)).toMatchObject({ status: 'failed', tradeStatus: '2' });
  });

  it('given an ATM order, the account is posted before any payment; the transfer settles it later', async () => {
    const opened = await submit(order('atm-1', 'ATM', 1200));
    const tradeNo = payuniTradeNo('atm-1');
    const [issued] = heardOf(tradeNo);
    expect(issued).toMatchObject({ kind: 'atm_issued', amount: 1200, bankCode: '822' });
    expect(opened.page).toContain((issued as { account: string }).account);
    // Ordered 2026-11-27 00:30 Taiwan time, 7 days to pay, to the end of that day.
    expect((issued as { expiresAt: Date }).expiresAt).toEqual(new Date('2026-12-04T15:59:59Z'));
    expect(await queryPayuniTrade(merchant, tradeNo, clock)).toMatchObject({ status: 'unpaid', tradeStatus: '0' });

    clock = new Date('2026-11-28T01:00:00Z');
    await emulator.pay(tradeNo);
    expect(heardOf(tradeNo).map((n) => n.kind)).toEqual(['atm_issued', 'paid']);
    expect(heardOf(tradeNo)[1]).toMatchObject({ paidAt: clock });
  });

  it('given a CVS order left unpaid, the code is posted and the trade stays unpaid', async () => {
    await submit(order('cvs-1', 'CVS', 300));
    const tradeNo = payuniTradeNo('cvs-1');
    expect(heardOf(tradeNo)).toEqual([expect.objectContaining({ kind: 'cvs_issued', amount: 300, store: 'SEVEN' })]);
    expect(await queryPayuniTrade(merchant, tradeNo, clock)).toMatchObject({ status: 'unpaid' });
  });

  it('when the merchant does not acknowledge, the notification is posted again, and the repeat reads the same', async () => {
    await submit(order('card-3', 'Credit'));
    const tradeNo = payuniTradeNo('card-3');
    receiver.failNextPosts(1);
    await emulator.pay(tradeNo);
    expect(heardOf(tradeNo)).toHaveLength(0);
    await emulator.resendUnacknowledged();
    await emulator.resendUnacknowledged();
    expect(heardOf(tradeNo)).toEqual([expect.objectContaining({ kind: 'paid' })]);
    const sent = emulator.posts.filter((p) => p.inside.MerTradeNo === tradeNo);
    expect(sent.map((p) => p.answer)).toEqual(['500 busy', `200 ${NOTIFICATION_RECEIVED}`]);
    // The repeat is the same envelope: the same EncryptInfo, the same trade, read the same way.
    expect(sent[0]!.fields.EncryptInfo).toBe(sent[1]!.fields.EncryptInfo);
  });

  it('refuses a second trade under one key, and a form changed after it was sealed', async () => {
    expect((await submit(order('card-1', 'Credit'))).page).toContain('MerTradeNo Duplicate');
    const form = order('card-4', 'Credit');
    const resealed = seal(
      merchant.merchantId,
      { ...form.encrypted, TradeAmt: '1' },
      { ...merchant, hashIV: 'x'.repeat(16) },
    );
    const tampered = await submit({ ...form, fields: { ...form.fields, EncryptInfo: resealed.EncryptInfo } });
    expect(tampered).toMatchObject({ status: 400, page: expect.stringContaining('HashInfo does not match') });
  });

  it('a post sealed with other keys is rejected by the merchant and acts on nothing', async () => {
    const forgedKeys = { ...KEYS, hashKey: 'forgedforgedforgedforgedforged12' };
    const forger = await startPayuniEmulator(forgedKeys, () => clock);
    try {
      const form = uppForm(
        { ...forgedKeys, baseUrl: forger.url },
        {
          idempotencyKey: 'forged',
          amount: 1,
          method: 'Credit',
          description: 'x',
          now: clock,
          notifyUrl: `${receiver.url}/payuni/notify`,
        },
      );
      await submit(form);
      const before = receiver.heard.length;
      await forger.pay(payuniTradeNo('forged'));
      expect(receiver.heard).toHaveLength(before);
      expect(receiver.rejected).toContain('HashInfo does not match');
    } finally {
      await forger.close();
    }
  });

  it('a query nobody answers, or answers with an error or a HashInfo that does not check, is unanswered: never not paid', async () => {
    await expect(queryPayuniTrade({ ...merchant, baseUrl: 'http://127.0.0.1:9' }, 'X', clock)).rejects.toThrow(
      QueryUnanswered,
    );
    // Wrong keys: the emulator refuses the query (Status ERROR, nothing sealed).
    await expect(
      queryPayuniTrade({ ...merchant, hashIV: 'wrongwrongwrongw' }, payuniTradeNo('card-1'), clock),
    ).rejects.toThrow('Status ERROR');
    // An answer whose HashInfo was changed in transit.
    const tampering: typeof fetch = async (input, init) => {
      const answer = (await (await fetch(input, init)).json()) as Record<string, string>;
      return new Response(JSON.stringify({ ...answer, HashInfo: 'F'.repeat(64) }), { status: 200 });
    };
    await expect(queryPayuniTrade(merchant, payuniTradeNo('card-1'), clock, { fetch: tampering })).rejects.toThrow(
      'HashInfo does not match',
    );
    // A trade never opened: a verified answer that lists nothing.
    expect(await queryPayuniTrade(merchant, payuniTradeNo('never'), clock)).toEqual({ status: 'unknown_trade' });
  });
});
