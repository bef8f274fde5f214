import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createContext, runInContext } from 'node:vm';
import { seal } from '../src/payments/payuni/crypto';
import {
  CardChargeUnanswered,
  type EmbeddedCardOrder,
  authorizeEmbeddedCard,
  chargeCreditToken,
  readCardNotification,
  requestSdkToken,
} from '../src/payments/payuni/embed';
import { type PayuniEmulator, startPayuniEmulator } from '../src/payments/payuni/emulator';
import { PAYUNI_PATHS, type PayuniMerchant } from '../src/payments/payuni/merchant';
import { NOTIFICATION_RECEIVED, readNotification } from '../src/payments/payuni/notifications';
import { queryPayuniTrade } from '../src/payments/payuni/query';
import { TEST_CARDS } from '../src/payments/sandbox';

/** Placeholder keys in the shape PAYUNi issues (no public test merchant was found). */
const KEYS = { merchantId: 'S01234567', hashKey: '12345678901234567890123456789012', hashIV: '1234567890123456' };
const SHOP = 'https://shop.example';

/** The merchant's NotifyURL: keeps every post's fields and answers 200, or 500 to the next `failNext` posts. */
async function startMerchant() {
  const posts: Record<string, string>[] = [];
  let failNext = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      if (failNext > 0) {
        failNext--;
        res.writeHead(500).end('busy');
        return;
      }
      posts.push(Object.fromEntries(new URLSearchParams(body)));
      res.writeHead(200, { 'content-type': 'text/plain' }).end(NOTIFICATION_RECEIVED);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    failNextPosts: (n: number) => void (failNext = n),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('PAYUNi UNi Embed and token charges against the emulator, over HTTP', () => {
  let clock = new Date('2026-11-26T16:30:00Z');
  let emulator: PayuniEmulator;
  let merchant: PayuniMerchant;
  let shop: Awaited<ReturnType<typeof startMerchant>>;
  let trades = 0;

  beforeAll(async () => {
    emulator = await startPayuniEmulator(KEYS, () => clock);
    merchant = { ...KEYS, baseUrl: emulator.url };
    shop = await startMerchant();
  });
  afterAll(async () => {
    await emulator.close();
    await shop.close();
  });

  /** What PAYUNi's script does when the buyer submits the fields: posts the card to PAYUNi's bind. */
  const bind = async (sdkToken: string, CardNo: string, CardExp = '12/34', CardCvc = '123') => {
    const response = await fetch(`${emulator.url}/sdk/bind/${encodeURIComponent(sdkToken)}`, {
      method: 'POST',
      body: new URLSearchParams({ CardNo, CardExp, CardCvc }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  };
  /** An SDK token with `card` bound to it, as the buyer leaves the card fields. */
  const tokenWithCard = async (card: string, creditToken?: string) => {
    const { sdkToken } = await requestSdkToken(merchant, { iframeDomain: SHOP, creditToken }, clock);
    expect((await bind(sdkToken, card)).body).toMatchObject({ Status: 'SUCCESS' });
    return sdkToken;
  };
  const order = (sdkToken: string, change: Partial<EmbeddedCardOrder> = {}): EmbeddedCardOrder => ({
    sdkToken,
    tradeNo: `EMB${++trades}`,
    amount: 299,
    description: 'Pro plan',
    email: 'buyer@example.com',
    returnUrl: `${SHOP}/payuni/return`,
    notifyUrl: `${shop.url}/payuni/notify`,
    threeDSecure: true,
    ...change,
  });

  it('token_get, the card bound by the script, merchant_trade paid with a CreditHash, then /api/credit with it paid', async () => {
    const token = await requestSdkToken(merchant, { iframeDomain: SHOP, creditToken: 'cus_1@shop.example' }, clock);
    expect(token.expiresAt).toEqual(new Date('2026-11-26T16:40:00Z'));
    expect(emulator.tokens.get(token.sdkToken)!.fields).toMatchObject({ UseTokenType: '2', IFrameDomain: SHOP });
    const bound = await bind(token.sdkToken, '4242 4242 4242 4242', '12/34', '987');
    expect(bound).toEqual({ status: 200, body: { Status: 'SUCCESS', HashTimestamp: String(clock.getTime() / 1000) } });
    // The emulator keeps the card for the charge, never its CVC.
    expect(emulator.tokens.get(token.sdkToken)!.card).toEqual({
      number: '4242424242424242',
      expMonth: 12,
      expYear: 2034,
    });
    expect(JSON.stringify([...emulator.tokens.values()])).not.toContain('987');

    const first = order(token.sdkToken);
    const paid = await authorizeEmbeddedCard(merchant, first, clock);
    expect(paid).toEqual({
      status: 'paid',
      payuniTradeNo: expect.stringMatching(/^\d+$/),
      amount: 299,
      card: { last4: '4242', first6: '424242', creditHash: expect.any(String), expMonth: 12, expYear: 2034 },
    });
    const creditHash = (paid as { card: { creditHash: string } }).card.creditHash;
    expect(await queryPayuniTrade(merchant, first.tradeNo, clock)).toMatchObject({
      status: 'paid',
      paymentType: '1',
      amount: 299,
    });
    // The token is used up: nothing more binds to it or charges it.
    expect((await bind(token.sdkToken, TEST_CARDS.success)).status).toBe(404);

    clock = new Date('2026-12-26T16:30:00Z');
    const renewal = {
      tradeNo: 'REN1',
      amount: 299,
      description: 'Pro plan',
      creditToken: 'cus_1@shop.example',
      creditHash,
    };
    expect(await chargeCreditToken(merchant, renewal, clock)).toMatchObject({
      status: 'paid',
      amount: 299,
      card: { last4: '4242', creditHash },
    });
    expect(emulator.trades.get('REN1')!.fields).toMatchObject({ CreditHash: creditHash });
    expect(emulator.trades.get('REN1')!.fields).not.toHaveProperty('Token');
    expect(await queryPayuniTrade(merchant, 'REN1', clock)).toMatchObject({ status: 'paid', paidAt: clock });
  });

  it('without a CreditToken the card is not saved: no CreditHash', async () => {
    const outcome = await authorizeEmbeddedCard(merchant, order(await tokenWithCard(TEST_CARDS.success)), clock);
    expect(outcome).toMatchObject({ status: 'paid', card: { creditHash: null, expMonth: null } });
  });

  it('refuses a second trade under one MerTradeNo, unsigned: unanswered, and the query still says the first was paid', async () => {
    const first = order(await tokenWithCard(TEST_CARDS.success));
    await authorizeEmbeddedCard(merchant, first, clock);
    const again = authorizeEmbeddedCard(
      merchant,
      { ...first, sdkToken: await tokenWithCard(TEST_CARDS.success) },
      clock,
    );
    await expect(again).rejects.toThrow(CardChargeUnanswered);
    await expect(again).rejects.toThrow('MER_TRADE_NO_DUPLICATE');
    await expect(
      chargeCreditToken(
        merchant,
        { tradeNo: first.tradeNo, amount: 1, description: 'x', creditToken: 'c', creditHash: 'h' },
        clock,
      ),
    ).rejects.toThrow('MER_TRADE_NO_DUPLICATE');
    expect(await queryPayuniTrade(merchant, first.tradeNo, clock)).toMatchObject({ status: 'paid', amount: 299 });
  });

  it('3-D Secure: the URL, the bank page, pass: NotifyURL hears TradeStatus 1 with the CreditHash, the browser is sent to ReturnURL, the query says paid', async () => {
    const sdkToken = await tokenWithCard(TEST_CARDS.challenge, 'cus_3d');
    const challenged = order(sdkToken);
    const outcome = await authorizeEmbeddedCard(merchant, challenged, clock);
    expect(outcome).toEqual({
      status: 'requires_3d',
      url: expect.stringMatching(new RegExp(`^${emulator.url}/3d/\\d+$`)),
    });
    const url = (outcome as { url: string }).url;
    expect(url.endsWith(emulator.trades.get(challenged.tradeNo)!.payuniTradeNo)).toBe(true);
    expect(await queryPayuniTrade(merchant, challenged.tradeNo, clock)).toMatchObject({ status: 'unpaid' });

    const bank = await (await fetch(url)).text();
    expect(bank).toContain('id="payuni-3d-pass"');
    expect(bank).toContain('id="payuni-3d-fail"');

    const before = shop.posts.length;
    const passed = await fetch(url, { method: 'POST', body: new URLSearchParams({ result: 'pass' }) });
    const form = await passed.text();
    // Server to server: one post, PAYUNi's, read paid with the card saved.
    expect(shop.posts).toHaveLength(before + 1);
    const notified = shop.posts.at(-1)!;
    expect(readNotification(notified, merchant)).toMatchObject({
      kind: 'paid',
      tradeNo: challenged.tradeNo,
      amount: 299,
    });
    const read = readCardNotification(notified, merchant);
    expect(read).toEqual({
      tradeNo: challenged.tradeNo,
      outcome: expect.objectContaining({
        status: 'paid',
        card: expect.objectContaining({ last4: '3220', creditHash: expect.any(String) }),
      }),
    });
    // Through the browser: an auto-submitting form of the four fields to ReturnURL.
    expect(form).toContain(`action="${SHOP}/payuni/return"`);
    expect(form).toContain('.submit()');
    const fields = Object.fromEntries([...form.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    expect(Object.keys(fields)).toEqual(['MerID', 'Version', 'EncryptInfo', 'HashInfo']);
    expect(readCardNotification(fields, merchant).outcome).toMatchObject({ status: 'paid' });
    expect(await queryPayuniTrade(merchant, challenged.tradeNo, clock)).toMatchObject({ status: 'paid' });

    // Answering the bank again changes nothing and posts nothing more.
    await fetch(url, { method: 'POST', body: new URLSearchParams({ result: 'fail' }) });
    expect(shop.posts).toHaveLength(before + 1);
    expect(await queryPayuniTrade(merchant, challenged.tradeNo, clock)).toMatchObject({ status: 'paid' });

    // The saved card's bank asks for the buyer again without them: declined, the buyer is needed.
    const creditHash = (read.outcome as { card: { creditHash: string } }).card.creditHash;
    expect(
      await chargeCreditToken(
        merchant,
        { tradeNo: 'REN3D', amount: 299, description: 'Pro plan', creditToken: 'cus_3d', creditHash },
        clock,
      ),
    ).toMatchObject({ status: 'declined', code: 'authentication_required' });
  });

  it('3-D Secure failed: NotifyURL hears the failure, posted again until acknowledged, and the query says failed', async () => {
    const challenged = order(await tokenWithCard(TEST_CARDS.challenge));
    const { url } = (await authorizeEmbeddedCard(merchant, challenged, clock)) as { url: string };
    shop.failNextPosts(1);
    const before = shop.posts.length;
    const failed = await (await fetch(url, { method: 'POST', body: new URLSearchParams({ result: 'fail' }) })).text();
    expect(failed).toContain('驗證失敗');
    expect(shop.posts).toHaveLength(before);
    await emulator.resendUnacknowledged();
    expect(shop.posts).toHaveLength(before + 1);
    expect(readCardNotification(shop.posts.at(-1)!, merchant).outcome).toEqual({
      status: 'declined',
      code: 'emulator_3d_failed',
      message: expect.any(String),
    });
    expect(await queryPayuniTrade(merchant, challenged.tradeNo, clock)).toMatchObject({ status: 'failed' });
  });

  it.each([
    [TEST_CARDS.genericDecline, 'emulator_card_declined'],
    [TEST_CARDS.insufficientFunds, 'emulator_insufficient_funds'],
    [TEST_CARDS.expiredCard, 'emulator_expired_card'],
  ])('card %s is declined at merchant_trade as %s, and the query says failed', async (card, code) => {
    const sdkToken = await tokenWithCard(card);
    const declined = order(sdkToken);
    const outcome = await authorizeEmbeddedCard(merchant, declined, clock);
    expect(outcome).toEqual({ status: 'declined', code, message: expect.stringMatching(/授權失敗/) });
    expect(await queryPayuniTrade(merchant, declined.tradeNo, clock)).toMatchObject({ status: 'failed' });
    // After a decline the buyer may type another card into the same fields.
    expect((await bind(sdkToken, TEST_CARDS.success)).body).toMatchObject({ Status: 'SUCCESS' });
    expect(await authorizeEmbeddedCard(merchant, order(sdkToken), clock)).toMatchObject({ status: 'paid' });
  });

  it('the three decline cards answer distinct Statuses and Messages', async () => {
    const outcomes = [];
    for (const card of [TEST_CARDS.genericDecline, TEST_CARDS.insufficientFunds, TEST_CARDS.expiredCard]) {
      outcomes.push(await authorizeEmbeddedCard(merchant, order(await tokenWithCard(card)), clock));
    }
    const messages = outcomes.map((o) => (o as { message: string }).message);
    expect(new Set(messages).size).toBe(3);
  });

  it('attachThenDecline pays and is saved, then every charge without the buyer is declined; a wrong pair is declined on its own', async () => {
    const paid = await authorizeEmbeddedCard(
      merchant,
      order(await tokenWithCard(TEST_CARDS.attachThenDecline, 'cus_later')),
      clock,
    );
    const creditHash = (paid as { card: { creditHash: string } }).card.creditHash;
    expect(paid).toMatchObject({ status: 'paid', card: { last4: '0341', creditHash: expect.any(String) } });
    const renew = (tradeNo: string, change = {}) =>
      chargeCreditToken(
        merchant,
        { tradeNo, amount: 299, description: 'Pro plan', creditToken: 'cus_later', creditHash, ...change },
        clock,
      );
    expect(await renew('LATER1')).toMatchObject({ status: 'declined', code: 'emulator_card_declined' });
    expect(await renew('LATER2')).toMatchObject({ status: 'declined', code: 'emulator_card_declined' });
    expect(await queryPayuniTrade(merchant, 'LATER2', clock)).toMatchObject({ status: 'failed' });
    expect(await renew('PAIR1', { creditToken: 'cus_other' })).toMatchObject({
      status: 'declined',
      code: 'emulator_credit_hash_error',
    });
    expect(await renew('PAIR2', { creditHash: 'F'.repeat(32) })).toMatchObject({ code: 'emulator_credit_hash_error' });
  });

  it('an answer lost after the charge (dropped, or HTTP 500) is unanswered, and the trade query then says paid', async () => {
    const lost = order(await tokenWithCard(TEST_CARDS.success, 'cus_lost'));
    emulator.failNext(PAYUNI_PATHS.embedTrade, 'drop');
    await expect(authorizeEmbeddedCard(merchant, lost, clock)).rejects.toThrow(CardChargeUnanswered);
    expect(await queryPayuniTrade(merchant, lost.tradeNo, clock)).toMatchObject({ status: 'paid', amount: 299 });

    const creditHash = [...emulator.savedCards.values()].find((c) => c.creditToken === 'cus_lost')!.creditHash;
    emulator.failNext(PAYUNI_PATHS.credit, 'http500');
    await expect(
      chargeCreditToken(
        merchant,
        { tradeNo: 'LOST2', amount: 299, description: 'Pro plan', creditToken: 'cus_lost', creditHash },
        clock,
      ),
    ).rejects.toThrow('HTTP 500');
    expect(await queryPayuniTrade(merchant, 'LOST2', clock)).toMatchObject({ status: 'paid' });
  });

  it('refuses a request with a wrong HashInfo or other keys, unsigned, and opens no trade', async () => {
    const sdkToken = await tokenWithCard(TEST_CARDS.success);
    const forged = order(sdkToken);
    await expect(authorizeEmbeddedCard({ ...merchant, hashIV: 'wrongwrongwrongw' }, forged, clock)).rejects.toThrow(
      CardChargeUnanswered,
    );
    const request = seal(KEYS.merchantId, { MerID: KEYS.merchantId, Timestamp: '1', IFrameDomain: SHOP }, KEYS, '3.0');
    for (const path of [PAYUNI_PATHS.sdkToken, PAYUNI_PATHS.embedTrade, PAYUNI_PATHS.credit]) {
      const answer = await fetch(`${emulator.url}${path}`, {
        method: 'POST',
        body: new URLSearchParams({ ...request, HashInfo: 'A'.repeat(64) }),
      });
      const body = (await answer.json()) as Record<string, string>;
      expect(body).toEqual({ Status: 'ERROR', Message: 'HashInfo does not match' });
    }
    expect(await queryPayuniTrade(merchant, forged.tradeNo, clock)).toEqual({ status: 'unknown_trade' });
    // The token was not touched: the real merchant can still charge it.
    expect(await authorizeEmbeddedCard(merchant, forged, clock)).toMatchObject({ status: 'paid' });
  });

  it('the bind refuses a card PAYUNi would not bind, and an expired SDK token; merchant_trade declines a token without a card', async () => {
    const { sdkToken } = await requestSdkToken(merchant, { iframeDomain: SHOP }, clock);
    expect(await bind(sdkToken, '4242424242424241')).toMatchObject({ status: 400, body: { Status: 'ERROR' } });
    expect(await bind(sdkToken, TEST_CARDS.success, '13/30')).toMatchObject({ status: 400 });
    expect(await bind(sdkToken, TEST_CARDS.success, '01/20')).toMatchObject({ status: 400 });
    expect(await bind(sdkToken, TEST_CARDS.success, '12/34', '12')).toMatchObject({ status: 400 });
    const unbound = order(sdkToken);
    expect(await authorizeEmbeddedCard(merchant, unbound, clock)).toMatchObject({
      status: 'declined',
      code: 'emulator_token_error',
    });
    expect(await queryPayuniTrade(merchant, unbound.tradeNo, clock)).toMatchObject({
      status: 'failed',
      tradeStatus: '2',
    });
    clock = new Date(clock.getTime() + 11 * 60_000);
    expect((await bind(sdkToken, TEST_CARDS.success)).status).toBe(404);
    expect(await authorizeEmbeddedCard(merchant, order('never-issued'), clock)).toMatchObject({
      code: 'emulator_token_error',
    });
  });

  it('serves uni-payment.js to any origin: UniPayment fills the three elements, reports completeness, and binds the card', async () => {
    const served = await fetch(`${emulator.url}/sdk/uni-payment.js`);
    expect(served.status).toBe(200);
    expect(served.headers.get('access-control-allow-origin')).toBe('*');
    expect(served.headers.get('content-type')).toMatch(/^application\/javascript/);
    const script = await served.text();
    const preflight = await fetch(`${emulator.url}/sdk/bind/x`, { method: 'OPTIONS' });
    expect([preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([204, '*']);

    // A page with three holders, as the recur-tw SDK prepares them, and the script run in it.
    type Field = { attributes: Record<string, string>; value: string; placeholder: string; fire(): void };
    const holders = new Map<string, { innerHTML: string; children: Field[]; appendChild(child: Field): void }>();
    for (const id of ['no', 'exp', 'cvc']) {
      holders.set(id, { innerHTML: '…', children: [], appendChild: (child) => holders.get(id)!.children.push(child) });
    }
    const document = {
      getElementById: (id: string) => holders.get(id) ?? null,
      createElement: () => {
        const listeners: (() => void)[] = [];
        const field = {
          attributes: {} as Record<string, string>,
          value: '',
          placeholder: '',
          style: { cssText: '' },
          setAttribute: (name: string, value: string) => void (field.attributes[name] = value),
          addEventListener: (_: string, listener: () => void) => void listeners.push(listener),
          fire: () => listeners.forEach((listener) => listener()),
        };
        return field;
      },
    };
    const page = { window: {} as Record<string, unknown>, document, fetch, URLSearchParams, setTimeout };
    runInContext(script, createContext(page));
    const UniPayment = page.window.UniPayment as {
      createSession(
        token: string,
        options: unknown,
      ): {
        start(): Promise<void>;
        onUpdate(listener: (update: { status: Record<string, boolean> }) => void): void;
        getTradeResult(): Promise<Record<string, string>>;
      };
    };
    const { sdkToken } = await requestSdkToken(merchant, { iframeDomain: SHOP }, clock);
    const session = UniPayment.createSession(sdkToken, {
      env: 'S',
      elements: { CardNo: 'no', CardExp: 'exp', CardCvc: 'cvc' },
    });
    const updates: Record<string, boolean>[] = [];
    session.onUpdate((update) => updates.push({ ...update.status }));
    await session.start();
    // The first update comes once the fields are in the page: nothing typed yet.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(updates).toEqual([{ CardNo: false, CardExp: false, CardCvc: false }]);
    const [number, exp, cvc] = ['no', 'exp', 'cvc'].map((id) => holders.get(id)!.children[0]!);
    expect([number, exp, cvc].map((f) => f!.attributes['data-payuni-field'])).toEqual(['CardNo', 'CardExp', 'CardCvc']);
    expect([number, exp, cvc].map((f) => f!.attributes.inputmode)).toEqual(['numeric', 'numeric', 'numeric']);
    expect(exp!.placeholder).toBe('MM/YY');
    expect(holders.get('no')!.innerHTML).toBe('');

    number!.value = '4242 4242 4242 4242';
    number!.fire();
    exp!.value = '12/34';
    cvc!.value = '123';
    cvc!.fire();
    expect(updates.at(-2)).toEqual({ CardNo: true, CardExp: false, CardCvc: false });
    expect(updates.at(-1)).toEqual({ CardNo: true, CardExp: true, CardCvc: true });

    expect(await session.getTradeResult()).toEqual({ Status: 'SUCCESS', HashTimestamp: expect.any(String) });
    expect(emulator.tokens.get(sdkToken)!.card).toMatchObject({ number: '4242424242424242' });
    number!.value = '4242424242424241';
    expect(await session.getTradeResult()).toMatchObject({ Status: 'ERROR' });
    // What was charged is the card bound by the script.
    const outcome = await authorizeEmbeddedCard(merchant, order(sdkToken, { threeDSecure: false }), clock);
    expect(outcome).toMatchObject({ status: 'paid', card: { last4: '4242' } });
  });
});
