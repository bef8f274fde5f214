import { ECPAY_STAGING_MERCHANT, type EcpayEmulator, startEcpayEmulator } from '@billing/checkout';
import { ebook, eventually } from '@billing/testing';
import { createUser, signedIn } from '../src/dashboard-helpers';
import { type Receiver, startReceiver } from '../src/lifecycle-helpers';
import { type CreatedOrganization, type Platform, clientOf, jsonApi, startPlatform } from '../src/platform';
import { PROCESSOR_TEST_CONFIG, hiddenFieldsOf, organizationOn, useProcessor } from '../src/processor-helpers';

jest.setTimeout(120_000);

/**
 * ATM and convenience-store payments through ECPay (docs/payments.md), with a Sandbox pointed at
 * the ECPay emulator: the hosted page offers the methods, the buyer's browser posts the signed
 * form to ECPay, ECPay posts the account or code (the session waits, a webhook says how to pay)
 * and later the payment (the session completes once, however often ECPay repeats itself); an
 * unpaid code expires at its deadline on the service clock.
 */
describe('ECPay ATM and convenience-store payments through the hosted checkout', () => {
  let clock = new Date('2026-11-26T02:00:00Z');
  let platform: Platform;
  let emulator: EcpayEmulator;
  let receiver: Receiver;
  let org: CreatedOrganization;
  let send: ReturnType<typeof jsonApi>;
  let client: ReturnType<typeof clientOf>;

  beforeAll(async () => {
    emulator = await startEcpayEmulator(ECPAY_STAGING_MERCHANT, () => clock);
    receiver = await startReceiver();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      now: () => clock,
      config: { ...PROCESSOR_TEST_CONFIG, CHECKOUT_RECONCILE_INTERVAL_MS: '200' },
    });
    const shop = await organizationOn(platform, { webhooksTo: receiver.url });
    ({ org, send, client } = shop);
    expect((await client.createProduct(org.id, ebook({ slug: 'ebook', price: 480 }))).status).toBe(201);
    await useProcessor(client, org.id, 'ecpay', ECPAY_STAGING_MERCHANT, emulator.url, {
      methods: ['card', 'atm', 'cvs'],
    });
  });
  afterAll(async () => {
    await platform?.stop();
    await emulator?.close();
    await receiver?.close();
  });

  const page = (sessionId: string, init: RequestInit = {}, language = 'en') =>
    fetch(`${platform.gatewayUrl}/checkout/${sessionId}`, {
      ...init,
      headers: { 'accept-language': language, ...(init.headers ?? {}) },
    }).then(async (r) => ({ status: r.status, html: await r.text() }));

  async function openSession(email: string) {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'ebook',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: email,
    });
    expect([session.status, session.body?.error]).toEqual([201, undefined]);
    return session.body.id as string;
  }

  /** The buyer chooses a method; the page posts the signed form to ECPay, as a browser does. */
  async function payAtEcpay(sessionId: string, method: 'card' | 'atm' | 'cvs') {
    const redirect = await page(sessionId, { method: 'POST', body: new URLSearchParams({ method }) });
    expect(redirect.status).toBe(200);
    const action = /<form method="post" action="([^"]+)" id="processor-form">/.exec(redirect.html)![1]!;
    expect(action).toBe(`${emulator.url}/Cashier/AioCheckOut/V5`);
    const fields = hiddenFieldsOf(redirect.html);
    expect(fields).toMatchObject({
      ChoosePayment: { card: 'Credit', atm: 'ATM', cvs: 'CVS' }[method],
      TotalAmount: '480',
      OrderResultURL: `${platform.gatewayUrl}/checkout/${sessionId}/ecpay/return`,
    });
    const atEcpay = await fetch(action, { method: 'POST', body: new URLSearchParams(fields) });
    expect(atEcpay.status).toBe(200);
    return { tradeNo: fields.MerchantTradeNo!, ecpayPage: await atEcpay.text() };
  }

  /** The ECPay trade the emulator opened for the session (by its ClientBackURL, the checkout page). */
  const tradeOf = (sessionId: string) =>
    [...emulator.trades.entries()].find(([, t]) => t.fields.ClientBackURL?.endsWith(sessionId))![0];

  const webhooksOf = (sessionId: string, type: string) =>
    receiver.events.filter((e) => e.type === type && e.data.object.id === sessionId);

  it('ATM: offered on the page, account posted and shown, paid later, completed once', async () => {
    const sessionId = await openSession('atm-buyer@example.com');
    const offered = await page(sessionId, {}, 'zh-TW');
    expect(offered.html).toContain('ATM 轉帳（虛擬帳號）');
    expect(offered.html).toContain('超商代碼繳費');
    expect(offered.html).not.toContain('card_number');

    const { tradeNo, ecpayPage } = await payAtEcpay(sessionId, 'atm');
    const account = /<span id="account">(\d+)<\/span>/.exec(ecpayPage)![1]!;
    const read = await send('GET', `/checkout/sessions/${sessionId}`);
    expect(read.body).toMatchObject({
      status: 'OPEN',
      payment_instructions: { type: 'atm', bank_code: '812', account, payment_code: null, amount: 480 },
    });
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
    expect(instructions.html).toContain('2026-11-29 23:59（GMT+8）');
    // The buyer is written to with the account and its deadline (kept in Sandbox), and a reminder waits.
    const emailsTo = async (address: string) =>
      (
        (await client.admin('GET', `/organizations/${org.id}/emails?environment=SANDBOX&limit=100`)).body.data as {
          kind: string;
          status: string;
          to: string;
          text: string | null;
        }[]
      ).filter((e) => e.to === address);
    const written = await eventually(async () => {
      const found = (await emailsTo('atm-buyer@example.com')).find((e) => e.kind === 'payment_instructions');
      expect(found?.status).toBe('KEPT');
      return found!;
    });
    // In the language the buyer chose ATM in: their browser's English.
    expect(written.text).toContain(`Virtual account: ${account}`);
    expect(written.text).toContain('Pay by: 2026-11-29 23:59 (GMT+8)');
    expect((await emailsTo('atm-buyer@example.com')).find((e) => e.kind === 'payment_reminder')?.status).toBe('QUEUED');
    // The dashboard lists the order as waiting, with ECPay's trade; the order's search finds nothing paid yet.
    const ordersAt = (path: string) => client.admin('GET', `/organizations/${org.id}/orders${path}`);
    const orderId = (await send('GET', `/checkout/sessions/${sessionId}`)).body.order_id as string;
    const awaiting = (await ordersAt('/awaiting_payment?environment=SANDBOX')).body.data;
    expect(awaiting.find((o: { id: string }) => o.id === orderId)).toMatchObject({
      status: 'awaiting_payment',
      checkout_session_id: sessionId,
      amount: 480,
      customer_email: 'atm-buyer@example.com',
      processor: 'ecpay',
      processor_reference: tradeNo,
      payment_instructions: { type: 'atm', account },
    });
    expect((await ordersAt(`/${orderId}?environment=SANDBOX`)).status).toBe(404);
    await createUser(platform.gatewayUrl, org.id, 'payments@ecpay.example', 'owner', 'a long enough password 1');
    const owner = await signedIn(platform.gatewayUrl, 'payments@ecpay.example', 'a long enough password 1');
    const paymentsPage = async (agent = owner) => (await agent.get(`/dashboard/${org.id}/sandbox/payments`)).html;
    const waitingPage = await paymentsPage();
    expect(waitingPage).toContain('Waiting for payment');
    expect(waitingPage).toContain(`<code>${account}</code>`);
    expect(waitingPage).toContain(`ECPay <code>${tradeNo}</code>`);
    // The session takes no second trade while it waits.
    expect((await page(sessionId, { method: 'POST', body: new URLSearchParams({ method: 'cvs' }) })).status).toBe(409);

    // A post with another merchant's MAC is refused and changes nothing.
    const forged = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}/ecpay/result`, {
      method: 'POST',
      body: new URLSearchParams({
        MerchantID: '3002607',
        MerchantTradeNo: tradeNo,
        RtnCode: '1',
        TradeAmt: '480',
        CheckMacValue: 'A'.repeat(64),
      }),
    });
    expect([forged.status, (await forged.text()).startsWith('0|')]).toEqual([400, true]);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('OPEN');

    clock = new Date(clock.getTime() + 26 * 3600_000);
    await emulator.pay(tradeNo);
    const result = emulator.posts.filter((p) => p.fields.MerchantTradeNo === tradeNo);
    expect(result.map((p) => p.answer)).toEqual(['1|OK', '1|OK']);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body).toMatchObject({
      status: 'COMPLETE',
    });
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body).not.toHaveProperty('payment_instructions');
    // ECPay repeats itself: the same result again records nothing.
    const again = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}/ecpay/result`, {
      method: 'POST',
      body: new URLSearchParams(result[1]!.fields),
    });
    expect(await again.text()).toBe('1|OK');
    await eventually(async () => expect(webhooksOf(sessionId, 'checkout.completed')).toHaveLength(1));
    expect((await page(sessionId)).status).toBe(409);
    // Paid before the reminder was due: it is dropped; the receipt is written.
    await eventually(async () => {
      const kinds = (await emailsTo('atm-buyer@example.com')).map((e) => `${e.kind} ${e.status}`);
      expect(kinds).toEqual(expect.arrayContaining(['payment_reminder SKIPPED', 'receipt KEPT']));
    });
    // Paid: no longer waiting, and the order names ECPay's trade.
    const waitingNow = (await ordersAt('/awaiting_payment?environment=SANDBOX')).body.data;
    expect(waitingNow.map((o: { id: string }) => o.id)).not.toContain(orderId);
    expect((await ordersAt(`/${orderId}?environment=SANDBOX`)).body).toMatchObject({
      id: orderId,
      amount: 480,
      processor: 'ecpay',
      processor_reference: tradeNo,
    });
    expect((await ordersAt(`/${orderId}?environment=PRODUCTION`)).status).toBe(404);
    // The dashboard's 12-hour session ended while the clock moved: a new one.
    const paidPage = await paymentsPage(
      await signedIn(platform.gatewayUrl, 'payments@ecpay.example', 'a long enough password 1'),
    );
    expect(paidPage).toContain('Payments from');
    expect(paidPage).not.toContain('Waiting for payment');
    expect(paidPage).toContain(`ECPay <code>${tradeNo}</code>`);
    expect((await ordersAt('/awaiting_payment?environment=SANDBOX&limit=0')).status).toBe(400);
    // An ATM payment goes back by bank transfer, outside ECPay's refund API: refused, nothing held.
    const refund = await send('POST', '/refunds', { order_id: orderId, amount: 100 });
    expect(refund.status).toBe(402);
    expect(refund.body.error.details[0]).toMatchObject({ path: 'order_id', code: 'processor_unavailable' });
  });

  it('ATM: an account whose post never arrived is found by asking ECPay when the session falls due, and paid', async () => {
    const sessionId = await openSession('lost-info@example.com');
    emulator.losePaymentInfoPost();
    const { tradeNo, ecpayPage } = await payAtEcpay(sessionId, 'atm');
    const account = /<span id="account">(\d+)<\/span>/.exec(ecpayPage)![1]!;
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body).not.toHaveProperty('payment_instructions');
    // Past the session's own 30 minutes: the sweep asks ECPay, finds the account, and the session waits for it.
    clock = new Date(clock.getTime() + 31 * 60_000);
    const waiting = await eventually(async () => {
      const read = (await send('GET', `/checkout/sessions/${sessionId}`)).body;
      expect(read.payment_instructions).toMatchObject({ type: 'atm', account });
      return read;
    });
    expect(waiting.status).toBe('OPEN');
    await eventually(async () => expect(webhooksOf(sessionId, 'checkout.async_payment_pending')).toHaveLength(1));
    await emulator.pay(tradeNo);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('COMPLETE');
  });

  it('CVS: a store code issued, paid at the store, completes the session once', async () => {
    const sessionId = await openSession('cvs-payer@example.com');
    const { tradeNo } = await payAtEcpay(sessionId, 'cvs');
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.payment_instructions).toMatchObject({
      type: 'cvs',
    });
    await emulator.pay(tradeNo);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('COMPLETE');
    await eventually(async () => expect(webhooksOf(sessionId, 'checkout.completed')).toHaveLength(1));
  });

  it('CVS: a code left unpaid expires at its deadline, with the session', async () => {
    const sessionId = await openSession('cvs-buyer@example.com');
    const { ecpayPage } = await payAtEcpay(sessionId, 'cvs');
    const code = /<span id="payment-no">(\w+)<\/span>/.exec(ecpayPage)![1]!;
    const read = await send('GET', `/checkout/sessions/${sessionId}`);
    expect(read.body.payment_instructions).toMatchObject({ type: 'cvs', payment_code: code, bank_code: null });
    const deadline = Date.parse(read.body.payment_instructions.expires_at);
    expect(read.body.expires_at).toBe(read.body.payment_instructions.expires_at);

    // Past the session's own 30 minutes, before the code's deadline: not due, and ECPay is not asked.
    clock = new Date(deadline - 60_000);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('OPEN');
    expect(emulator.queries).not.toContain(tradeOf(sessionId));
    clock = new Date(deadline + 60_000);
    await eventually(async () => {
      expect(webhooksOf(sessionId, 'checkout.async_payment_expired')).toHaveLength(1);
      expect(webhooksOf(sessionId, 'checkout.expired')).toHaveLength(1);
    });
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('EXPIRED');
    // Paid after all (ECPay's clock and ours disagree): acknowledged, logged for a refund, the session stays expired.
    await emulator.pay(tradeOf(sessionId));
    expect(emulator.posts.at(-1)!.answer).toBe('1|OK');
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('EXPIRED');
    expect(webhooksOf(sessionId, 'checkout.completed')).toHaveLength(0);
    // Listed for the operator, once however often ECPay repeats it, with the trade to refund.
    await fetch(`${platform.gatewayUrl}/checkout/${sessionId}/ecpay/result`, {
      method: 'POST',
      body: new URLSearchParams(emulator.posts.at(-1)!.fields),
    });
    const unmatched = await clientOf(platform.gatewayUrl).admin(
      'GET',
      `/organizations/${org.id}/unmatched_payments?environment=sandbox`,
    );
    expect(unmatched.body.data).toEqual([
      expect.objectContaining({
        object: 'unmatched_payment',
        checkout_session_id: sessionId,
        trade_no: tradeOf(sessionId),
        amount: 480,
        reason: 'paid_after_expiry',
        livemode: false,
      }),
    ]);
    await createUser(platform.gatewayUrl, org.id, 'owner@ecpay.example', 'owner', 'a long enough password 1');
    const owner = await signedIn(platform.gatewayUrl, 'owner@ecpay.example', 'a long enough password 1');
    const overview = (await owner.get(`/dashboard/${org.id}/sandbox`)).html;
    expect(overview).toContain('Payments that do not match the processor');
    expect(overview).toContain(tradeOf(sessionId));
  });

  /** The buyer's browser, sent back by ECPay's page: where the checkout sends it next. */
  const comeBack = async (sessionId: string) =>
    (
      await fetch(`${platform.gatewayUrl}/checkout/${sessionId}/ecpay/return`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({ RtnCode: '1' }),
      })
    ).headers.get('location');

  it("card on ECPay's page: back before ECPay's post, or with the post lost, the query settles it once", async () => {
    const sessionId = await openSession('card-buyer@example.com');
    const { tradeNo } = await payAtEcpay(sessionId, 'card');
    expect((await page(sessionId)).html).toContain('Confirming your payment');
    // Back before paying: nothing to record, the buyer returns to the checkout page.
    expect(await comeBack(sessionId)).toBe(`${platform.gatewayUrl}/checkout/${sessionId}`);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('OPEN');

    await emulator.pay(tradeNo, { notify: false });
    expect(await comeBack(sessionId)).toBe(`https://shop.example/ok`);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('COMPLETE');
    // ECPay's post arrives late: acknowledged, nothing new.
    await emulator.resendUnacknowledged();
    expect(emulator.posts.filter((p) => p.fields.MerchantTradeNo === tradeNo).map((p) => p.answer)).toEqual(['1|OK']);
    await eventually(async () => expect(webhooksOf(sessionId, 'checkout.completed')).toHaveLength(1));
    // A card ECPay took is refunded through ECPay (DoAction R), whole here.
    const orderId = (await send('GET', `/checkout/sessions/${sessionId}`)).body.order_id;
    const refund = await send('POST', '/refunds', { order_id: orderId, amount: 480 });
    expect([refund.status, refund.body.status]).toEqual([201, 'succeeded']);
    expect(emulator.refunded.get(emulator.trades.get(tradeNo)!.ecpayTradeNo)).toBe(480);
  });

  it('a card ECPay declined ends that trade; the buyer may choose again, under a new trade', async () => {
    const sessionId = await openSession('declined@example.com');
    const first = await payAtEcpay(sessionId, 'card');
    await emulator.decline(first.tradeNo);
    expect((await page(sessionId)).html).toContain('name="method"');
    const second = await payAtEcpay(sessionId, 'card');
    expect(second.tradeNo).not.toBe(first.tradeNo);
    await emulator.pay(second.tradeNo);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('COMPLETE');
  });

  it('a subscription is offered the card plan and transfers, one that starts free no transfer, and cards sent to the pay API are refused before anything is charged', async () => {
    const client = clientOf(platform.gatewayUrl);
    const product = { environment: 'SANDBOX', type: 'SUBSCRIPTION', interval: 'month', price: 299 } as const;
    await client.createProduct(org.id, { ...product, name: 'Pro', slug: 'pro' });
    await client.createProduct(org.id, { ...product, name: 'Trial', slug: 'pro-trial', trial_days: 14 });
    const sessionOf = (slug: string) =>
      send('POST', '/checkout/sessions', {
        product_slug: slug,
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/no',
        customer_email: 'sub@example.com',
      });
    const offered = await page((await sessionOf('pro')).body.id);
    expect(offered.html).toContain('value="card"');
    expect(offered.html).toContain('value="atm"');
    expect(offered.html).toContain('value="cvs"');
    // A free trial has nothing to transfer today, and ECPay's card plan takes no trial.
    const trial = (await sessionOf('pro-trial')).body.id as string;
    expect((await page(trial)).html).not.toContain('value="atm"');
    const refused = await page(trial, { method: 'POST', body: new URLSearchParams({ method: 'atm' }) });
    expect(refused.status).toBe(422);
    expect((await send('GET', `/checkout/sessions/${trial}`)).body.status).toBe('OPEN');
    const card = await fetch(`${platform.gatewayUrl}/checkout/${await openSession('card@example.com')}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(card.status).toBe(402);
    expect(((await card.json()) as any).error.details[0].code).toBe('processor_unavailable');
  });

  it('a payment recorded here that ECPay no longer shows paid is found by the reconciliation and listed for the operator', async () => {
    const sessionId = await openSession('voided@example.com');
    const { tradeNo } = await payAtEcpay(sessionId, 'card');
    await emulator.pay(tradeNo);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('COMPLETE');
    // Undone in ECPay's site; a few minutes later the reconciliation asks ECPay about it.
    emulator.voidTrade(tradeNo);
    clock = new Date(clock.getTime() + 6 * 60_000);
    const listed = await eventually(async () => {
      const unmatched = await clientOf(platform.gatewayUrl).admin(
        'GET',
        `/organizations/${org.id}/unmatched_payments?environment=sandbox`,
      );
      const found = unmatched.body.data.find((p: { trade_no: string }) => p.trade_no === tradeNo);
      expect(found).toBeDefined();
      return found;
    });
    expect(listed).toMatchObject({ checkout_session_id: sessionId, amount: 480, reason: 'not_paid_at_processor' });
    // Asked once: later passes do not ask ECPay about it again.
    const asked = emulator.queries.filter((q) => q === tradeNo).length;
    clock = new Date(clock.getTime() + 60_000);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(emulator.queries.filter((q) => q === tradeNo).length).toBe(asked);
  });

  it("the portal's card page says ECPay keeps the card, with no form to type one into", async () => {
    const sessionId = await openSession('portal-card@example.com');
    await emulator.pay((await payAtEcpay(sessionId, 'card')).tradeNo);
    const paid = (await send('GET', `/checkout/sessions/${sessionId}`)).body;
    expect(paid).toMatchObject({ status: 'COMPLETE', customer_id: expect.stringMatching(/^cus_/) });
    const portal = await send('POST', '/portal/sessions', {
      customer_id: paid.customer_id,
      return_url: 'https://shop.example/account',
    });
    const cardPage = await fetch(`${portal.body.url}/payment_method`);
    expect(cardPage.status).toBe(200);
    const html = await cardPage.text();
    expect(html).toContain('id="card-kept"');
    expect(html).toContain('ECPay');
    expect(html).not.toContain('name="card_number"');
  });

  it("a part of a card payment refunded on its day waits for ECPay's 20:15 capture; the sweep makes it then", async () => {
    emulator.captures.mode = 'daily';
    const paidAt = clock;
    try {
      const sessionId = await openSession('part-same-day@example.com');
      const { tradeNo } = await payAtEcpay(sessionId, 'card');
      await emulator.pay(tradeNo);
      const orderId = (await send('GET', `/checkout/sessions/${sessionId}`)).body.order_id;
      const ecpayTradeNo = emulator.trades.get(tradeNo)!.ecpayTradeNo;
      const part = await send('POST', '/refunds', { order_id: orderId, amount: 100 });
      expect([part.status, part.body.status]).toEqual([201, 'pending']);
      // Before 20:30 in Taiwan the sweeps leave it waiting (asked then, R would be refused: 已授權).
      clock = new Date(
        Date.parse(`${new Date(paidAt.getTime() + 8 * 3600_000).toISOString().slice(0, 10)}T20:14:00+08:00`),
      );
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect((await send('GET', `/refunds/${part.body.id}`)).body.status).toBe('pending');
      expect(emulator.refunded.get(ecpayTradeNo)).toBeUndefined();

      clock = new Date(clock.getTime() + 17 * 60_000); // 20:31: the capture under way (要關帳)
      await eventually(async () =>
        expect((await send('GET', `/refunds/${part.body.id}`)).body.status).toBe('succeeded'),
      );
      expect(emulator.refunded.get(ecpayTradeNo)).toBe(100);
    } finally {
      emulator.captures.mode = 'at_once';
    }
  });

  it('a card refunded whole on the day of payment, before ECPay captures it at 20:15, is abandoned (N)', async () => {
    emulator.captures.mode = 'daily';
    try {
      const sessionId = await openSession('same-day@example.com');
      const { tradeNo } = await payAtEcpay(sessionId, 'card');
      await emulator.pay(tradeNo);
      expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('COMPLETE');
      const orderId = (await send('GET', `/checkout/sessions/${sessionId}`)).body.order_id;
      const refund = await send('POST', '/refunds', { order_id: orderId, amount: 480 });
      expect([refund.status, refund.body.status]).toEqual([201, 'succeeded']);
      expect(emulator.refunded.get(emulator.trades.get(tradeNo)!.ecpayTradeNo)).toBe(480);
    } finally {
      emulator.captures.mode = 'at_once';
    }
  });
});
