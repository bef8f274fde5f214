import { type PayuniEmulator, startPayuniEmulator } from '@billing/checkout';
import { ebook, eventually } from '@billing/testing';
import {
  type AmegoEmulator,
  startAmegoEinvoiceEmulator,
} from '../../../services/billing/dist/einvoices/providers/amego/emulator';
import { untilCheckoutIssuesEinvoices } from '../src/einvoice-helpers';
import { type Receiver, startReceiver } from '../src/lifecycle-helpers';
import { type CreatedOrganization, type Platform, clientOf, jsonApi, plan, startPlatform } from '../src/platform';
import {
  PAYUNI_TEST_MERCHANT,
  PROCESSOR_TEST_CONFIG,
  hiddenFieldsOf,
  organizationOn,
  useProcessor,
} from '../src/processor-helpers';

jest.setTimeout(120_000);

const PAYUNI = PAYUNI_TEST_MERCHANT;

/**
 * ATM accounts and convenience-store codes through PAYUNi (docs/payments.md), with a Sandbox
 * pointed at the PAYUNi emulator: the hosted page offers them beside PAYUNi's card fields, the
 * buyer's browser posts the sealed UPP form to PAYUNi, PAYUNi posts the account or code (the
 * session waits, a webhook says how to pay) and later the payment (the session completes once,
 * however often PAYUNi repeats itself) and gets its e-invoice only then; an unpaid code expires at
 * its deadline on the service clock.
 */
describe('PAYUNi ATM and convenience-store payments through the hosted checkout', () => {
  let clock = new Date('2026-11-26T02:00:00Z');
  let platform: Platform;
  let emulator: PayuniEmulator;
  let receiver: Receiver;
  let amego: AmegoEmulator;
  let org: CreatedOrganization;
  let send: ReturnType<typeof jsonApi>;

  beforeAll(async () => {
    emulator = await startPayuniEmulator(PAYUNI, () => clock);
    // Amego's time window reads the platform's clock, as billing's requests do.
    amego = await startAmegoEinvoiceEmulator({ sellerTaxId: '12345678', appKey: 'sHeq7t8G1wiQvhAuIM27' }, () => clock);
    receiver = await startReceiver();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      now: () => clock,
      config: PROCESSOR_TEST_CONFIG,
    });
    const shop = await organizationOn(platform, { webhooksTo: receiver.url });
    ({ org, send } = shop);
    const { client } = shop;
    expect((await client.createProduct(org.id, ebook({ slug: 'ebook', price: 480 }))).status).toBe(201);
    expect((await client.createProduct(org.id, plan({ slug: 'trial', price: 299, trial_days: 14 }))).status).toBe(201);
    const processor = await useProcessor(client, org.id, 'payuni', PAYUNI, emulator.url);
    expect(processor.methods).toEqual(['card', 'atm', 'cvs']);
    const einvoices = await client.admin('PUT', `/organizations/${org.id}/einvoice_settings?environment=sandbox`, {
      provider: 'amego',
      app_key: 'sHeq7t8G1wiQvhAuIM27',
      seller_tax_id: '12345678',
      endpoint_url: amego.url,
    });
    expect(einvoices.status).toBe(200);
    await untilCheckoutIssuesEinvoices(send, 'ebook');
  });
  afterAll(async () => {
    await platform?.stop();
    await emulator?.close();
    await receiver?.close();
    await amego?.close();
  });

  const page = (sessionId: string, init: RequestInit = {}, language = 'en') =>
    fetch(`${platform.gatewayUrl}/checkout/${sessionId}`, {
      redirect: 'manual',
      ...init,
      headers: { 'accept-language': language, ...(init.headers ?? {}) },
    }).then(async (r) => ({ status: r.status, location: r.headers.get('location'), html: await r.text() }));

  async function openSession(email: string, product = 'ebook') {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: product,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: email,
    });
    expect([session.status, session.body?.error]).toEqual([201, undefined]);
    return session.body.id as string;
  }

  /** The buyer chooses ATM or CVS; the page posts the sealed UPP form to PAYUNi, as a browser does. */
  async function payAtPayuni(sessionId: string, method: 'atm' | 'cvs', einvoice: Record<string, string> = {}) {
    const redirect = await page(sessionId, { method: 'POST', body: new URLSearchParams({ method, ...einvoice }) });
    expect(redirect.status).toBe(200);
    expect(redirect.html).toContain('Continue to PAYUNi');
    const action = /<form method="post" action="([^"]+)" id="processor-form">/.exec(redirect.html)![1]!;
    expect(action).toBe(`${emulator.url}/api/upp`);
    const fields = hiddenFieldsOf(redirect.html);
    expect(Object.keys(fields).sort()).toEqual(['EncryptInfo', 'HashInfo', 'MerID', 'Version']);
    // Nothing of the order travels in the clear: the four fields are the merchant, the version and hex.
    expect(fields.EncryptInfo).toMatch(/^[0-9a-f]+$/);
    expect(JSON.stringify(fields)).not.toMatch(/TradeAmt|example\.com|NotifyURL/);
    const atPayuni = await fetch(action, { method: 'POST', body: new URLSearchParams(fields) });
    expect(atPayuni.status).toBe(200);
    const [tradeNo, trade] = [...emulator.trades.entries()].at(-1)!;
    expect(trade.fields).toMatchObject({
      TradeAmt: '480',
      [method === 'atm' ? 'ATM' : 'CVS']: '1',
      NotifyURL: `${platform.gatewayUrl}/checkout/${sessionId}/payuni/code-notify`,
      ReturnURL: `${platform.gatewayUrl}/checkout/${sessionId}/payuni/code-return`,
    });
    return { tradeNo, payuniPage: await atPayuni.text() };
  }

  const postsAbout = (tradeNo: string) => emulator.posts.filter((p) => p.inside.MerTradeNo === tradeNo);
  const webhooksOf = (sessionId: string, type: string) =>
    receiver.events.filter((e) => e.type === type && e.data.object.id === sessionId);

  it('ATM: offered beside the card fields, account posted and shown, paid later, completed once', async () => {
    const sessionId = await openSession('atm-buyer@example.com');
    const offered = await page(sessionId, {}, 'zh-TW');
    expect(offered.html).toContain('ATM 轉帳（虛擬帳號）');
    expect(offered.html).toContain('超商代碼繳費');
    expect(offered.html).toContain('id="payuni-fields"');
    expect(offered.html).toContain('統一金流測試環境');

    const { tradeNo, payuniPage } = await payAtPayuni(sessionId, 'atm', {
      einvoice_type: 'MOBILE_BARCODE',
      einvoice_barcode: '/abc+123',
    });
    const account = /<span id="account">(\d+)<\/span>/.exec(payuniPage)![1]!;
    const read = await send('GET', `/checkout/sessions/${sessionId}`);
    expect(read.body).toMatchObject({
      status: 'OPEN',
      payment_instructions: { type: 'atm', bank_code: '822', account, payment_code: null, amount: 480 },
    });
    // PAYUNi's deadline is the end of the seventh day in Taiwan: 2026-12-03 23:59:59 +08:00.
    expect(read.body.payment_instructions.expires_at).toBe('2026-12-03T15:59:59.000Z');
    expect(read.body.expires_at).toBe(read.body.payment_instructions.expires_at);
    const pending = await eventually(async () => {
      const [event] = webhooksOf(sessionId, 'checkout.async_payment_pending');
      expect(event).toBeDefined();
      return event!;
    });
    expect(pending.data.object.payment_instructions).toMatchObject({ type: 'atm', account });
    const instructions = await page(sessionId, {}, 'zh-TW');
    expect(instructions.html).toContain('請轉帳至此帳號');
    expect(instructions.html).toContain(account);
    expect(instructions.html).toContain('NT$480');
    expect(instructions.html).toContain('2026-12-03 23:59（GMT+8）');
    // The session takes no second trade while it waits.
    expect((await page(sessionId, { method: 'POST', body: new URLSearchParams({ method: 'cvs' }) })).status).toBe(409);

    // A post under other keys is refused and changes nothing.
    const issued = postsAbout(tradeNo)[0]!;
    const forged = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}/payuni/code-notify`, {
      method: 'POST',
      body: new URLSearchParams({ ...issued.fields, HashInfo: 'A'.repeat(64) }),
    });
    expect(forged.status).toBe(400);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('OPEN');

    // No e-invoice while the transfer waits: nothing was paid yet.
    const orderId = read.body.order_id;
    expect((await send('GET', `/einvoices?order_id=${orderId}`)).body.data).toEqual([]);

    clock = new Date(clock.getTime() + 26 * 3600_000);
    await emulator.pay(tradeNo);
    expect(postsAbout(tradeNo).map((p) => [p.inside.TradeStatus, p.answer])).toEqual([
      ['0', '200 OK'],
      ['1', '200 OK'],
    ]);
    const paid = (await send('GET', `/checkout/sessions/${sessionId}`)).body;
    expect(paid).toMatchObject({ status: 'COMPLETE' });
    expect(paid).not.toHaveProperty('payment_instructions');
    // PAYUNi repeats itself, and the buyer's browser brings the same fields: nothing new, to the success URL.
    const paidFields = postsAbout(tradeNo)[1]!.fields;
    const again = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}/payuni/code-notify`, {
      method: 'POST',
      body: new URLSearchParams(paidFields),
    });
    expect([again.status, await again.text()]).toEqual([200, 'OK']);
    const back = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}/payuni/code-return`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams(paidFields),
    });
    expect([back.status, back.headers.get('location')]).toEqual([303, 'https://shop.example/ok']);
    await eventually(async () => expect(webhooksOf(sessionId, 'checkout.completed')).toHaveLength(1));
    // Paid, it gets its e-invoice, to the barcode the buyer chose on the page before transferring.
    const einvoice = await eventually(async () => {
      const [issued] = (await send('GET', `/einvoices?order_id=${orderId}`)).body.data;
      expect(issued?.status).toBe('issued');
      return issued;
    }, 30_000);
    expect(einvoice).toMatchObject({ total: 480, buyer: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' } });
    expect(amego.invoices.get(einvoice.merchant_order_number)?.invoiceNumber).toBe(einvoice.number);
    // An ATM payment goes back by bank transfer, not through PAYUNi's API: refused, nothing held.
    const refund = await send('POST', '/refunds', { order_id: paid.order_id, amount: 100 });
    expect(refund.status).toBe(402);
    expect(refund.body.error.details[0]).toMatchObject({ path: 'order_id', code: 'processor_unavailable' });
  });

  it('CVS: a store code issued, paid at the store, completes the session once', async () => {
    const sessionId = await openSession('cvs-payer@example.com');
    const { tradeNo } = await payAtPayuni(sessionId, 'cvs');
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.payment_instructions).toMatchObject({
      type: 'cvs',
    });
    await emulator.pay(tradeNo);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('COMPLETE');
    await eventually(async () => expect(webhooksOf(sessionId, 'checkout.completed')).toHaveLength(1));
  });

  it('CVS: a code left unpaid expires at its deadline, with the session; paid after all, it is listed to refund by hand', async () => {
    const sessionId = await openSession('cvs-buyer@example.com');
    const { tradeNo, payuniPage } = await payAtPayuni(sessionId, 'cvs');
    const code = /<span id="payment-no">(\w+)<\/span>/.exec(payuniPage)![1]!;
    const read = await send('GET', `/checkout/sessions/${sessionId}`);
    expect(read.body.payment_instructions).toMatchObject({ type: 'cvs', payment_code: code, bank_code: null });
    const deadline = Date.parse(read.body.payment_instructions.expires_at);

    // Past the session's own 30 minutes, before the code's deadline: not due, and PAYUNi is not asked.
    clock = new Date(deadline - 60_000);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('OPEN');
    expect(emulator.queries).not.toContain(tradeNo);
    clock = new Date(deadline + 60_000);
    await eventually(async () => {
      expect(webhooksOf(sessionId, 'checkout.async_payment_expired')).toHaveLength(1);
      expect(webhooksOf(sessionId, 'checkout.expired')).toHaveLength(1);
    });
    expect(emulator.queries).toContain(tradeNo);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('EXPIRED');

    // Paid after all (PAYUNi's clock and ours disagree): acknowledged, listed once, the session stays expired.
    await emulator.pay(tradeNo);
    expect(postsAbout(tradeNo).at(-1)!.answer).toBe('200 OK');
    await fetch(`${platform.gatewayUrl}/checkout/${sessionId}/payuni/code-notify`, {
      method: 'POST',
      body: new URLSearchParams(postsAbout(tradeNo).at(-1)!.fields),
    });
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('EXPIRED');
    expect(webhooksOf(sessionId, 'checkout.completed')).toHaveLength(0);
    const unmatched = await clientOf(platform.gatewayUrl).admin(
      'GET',
      `/organizations/${org.id}/unmatched_payments?environment=sandbox`,
    );
    expect(unmatched.body.data).toEqual([
      expect.objectContaining({
        checkout_session_id: sessionId,
        processor: 'payuni',
        trade_no: tradeNo,
        amount: 480,
        reason: 'paid_after_expiry',
      }),
    ]);
  });

  it('a method the organization does not offer, or a code for a free trial, is refused and opens nothing', async () => {
    const sessionId = await openSession('refused@example.com');
    const trades = emulator.trades.size;
    const refused = await page(sessionId, { method: 'POST', body: new URLSearchParams({ method: 'bank' }) });
    expect(refused.status).toBe(422);
    expect(refused.html).toContain('id="payuni-fields"');
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('OPEN');

    // A subscription that starts free has nothing to transfer today: its page offers the card only.
    const trial = await openSession('trial@example.com', 'trial');
    const trialPage = await page(trial);
    expect(trialPage.html).toContain('id="payuni-fields"');
    expect(trialPage.html).not.toContain('id="methods"');
    const code = await page(trial, { method: 'POST', body: new URLSearchParams({ method: 'atm' }) });
    expect(code.status).toBe(402);
    expect(emulator.trades.size).toBe(trades);
    expect((await send('GET', `/checkout/sessions/${trial}`)).body.status).toBe('OPEN');
  });
});
