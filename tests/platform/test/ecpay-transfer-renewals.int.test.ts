import { ECPAY_STAGING_MERCHANT, type EcpayEmulator, startEcpayEmulator } from '@billing/checkout';
import { eventually } from '@billing/testing';
import { type Receiver, startReceiver } from '../src/lifecycle-helpers';
import { DashboardAgent } from '../src/dashboard-helpers';
import {
  ADMIN_TOKEN,
  type CreatedOrganization,
  type Platform,
  clientOf,
  jsonApi,
  plan,
  startPlatform,
} from '../src/platform';
import {
  PROCESSOR_TEST_CONFIG,
  capturedLogs,
  hiddenFieldsOf,
  leaksIn,
  organizationOn,
  subscriptionOf,
  transferInvoicesOf,
  testClockOf,
  useProcessor,
} from '../src/processor-helpers';

jest.setTimeout(180_000);

const DAY = 86_400_000;

/**
 * A subscription paid by transfer through ECPay (docs/payments.md): the first period by an ATM
 * account on the hosted checkout, then each renewal invoice waits for a transfer. ECPay issues an
 * account only on its own page, with the buyer, so the invoice links to a page of ours
 * (`hosted_instructions_url`) that sends the buyer to ECPay; the account ECPay posts is then
 * shown, and its payment pays the invoice. A page left unopened past its deadline is a failed
 * attempt for dunning, whose next attempt gets a page of its own.
 */
describe('ECPay: subscriptions paid by transfer, renewal invoices paid from a page that sends the buyer to ECPay', () => {
  let platform: Platform;
  let emulator: EcpayEmulator;
  let receiver: Receiver;
  let org: CreatedOrganization;
  let send: ReturnType<typeof jsonApi>;
  /** The services' and ECPay's clock: real time, moved ahead past a page's deadline. */
  let ahead = 0;
  const now = () => new Date(Date.now() + ahead);
  const logs = capturedLogs();
  /** What no log line may hold: the merchant's keys, the buyers' emails, the pages' tokens. */
  const secrets = [
    ECPAY_STAGING_MERCHANT.hashKey,
    ECPAY_STAGING_MERCHANT.hashIV,
    'transfer@example.com',
    'late@example.com',
  ];

  beforeAll(async () => {
    emulator = await startEcpayEmulator(ECPAY_STAGING_MERCHANT, now);
    receiver = await startReceiver();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      now,
      logger: logs.logger,
      config: {
        ...PROCESSOR_TEST_CONFIG,
        BILLING_PENDING_CHARGE_MS: '1000',
        BILLING_TRIAL_SWEEP_INTERVAL_MS: '500',
        CHECKOUT_RECONCILE_INTERVAL_MS: '300',
      },
    });
    const shop = await organizationOn(platform, { webhooksTo: receiver.url });
    ({ org, send } = shop);
    expect((await shop.client.createProduct(org.id, plan({ slug: 'pro', price: 299 }))).status).toBe(201);
    await useProcessor(shop.client, org.id, 'ecpay', ECPAY_STAGING_MERCHANT, emulator.url, {
      methods: ['card', 'atm', 'cvs'],
    });
  });
  afterAll(async () => {
    await platform?.stop();
    await emulator?.close();
    await receiver?.close();
  });

  /** A monthly plan on a test clock, its first period paid by an ATM account on the hosted checkout. */
  async function subscribeByTransfer(email: string) {
    const { clock } = await testClockOf(send, '2026-01-31T10:00:00Z');
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: email,
      test_clock: clock,
    });
    expect(session.status).toBe(201);
    const sessionId = session.body.id as string;
    const checkoutPage = `${platform.gatewayUrl}/checkout/${sessionId}`;
    const offered = await fetch(checkoutPage).then((r) => r.text());
    expect(offered).toContain('value="card"');
    expect(offered).toContain('value="atm"');
    const redirect = await fetch(checkoutPage, { method: 'POST', body: new URLSearchParams({ method: 'atm' }) });
    const fields = hiddenFieldsOf(await redirect.text());
    // A one-time trade for the first period, not ECPay's card plan.
    expect(fields).toMatchObject({ ChoosePayment: 'ATM', TotalAmount: '299' });
    expect(fields.PeriodAmount).toBeUndefined();
    const atEcpay = await fetch(`${emulator.url}/Cashier/AioCheckOut/V5`, {
      method: 'POST',
      body: new URLSearchParams(fields),
    });
    expect(atEcpay.status).toBe(200);
    await emulator.pay(fields.MerchantTradeNo!);
    const subscription = await subscriptionOf(send, sessionId);
    expect(subscription).toMatchObject({ status: 'ACTIVE' });
    return { clock, subscription };
  }

  const { invoicesOf, waitingInvoice } = transferInvoicesOf(() => send);
  /** The one payment of `invoiceId` listed as not matching ECPay, once it is listed. */
  const unmatchedOf = (invoiceId: string) =>
    eventually(async () => {
      const found = await clientOf(platform.gatewayUrl).admin(
        'GET',
        `/organizations/${org.id}/unmatched_payments?environment=sandbox`,
      );
      const mine = (found.body.data as { invoice_id: string | null }[]).filter((p) => p.invoice_id === invoiceId);
      expect(mine).toHaveLength(1);
      return mine[0];
    }, 30000);
  const webhooks = (type: string, invoiceId: string) =>
    receiver.events.filter((event) => event.type === type && event.data.object.id === invoiceId);
  const invoicePage = (url: string, init: RequestInit = {}, language = 'zh-TW') =>
    fetch(url, { ...init, redirect: 'manual', headers: { 'accept-language': language } }).then(async (r) => ({
      status: r.status,
      location: r.headers.get('location'),
      html: await r.text(),
    }));
  const advanceTo = async (clock: string, to: string) =>
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
  /** A subscription by transfer whose clock reached its first renewal: the invoice waiting, its page's address. */
  async function renewalWaiting(email: string) {
    const { clock, subscription } = await subscribeByTransfer(email);
    await advanceTo(clock, '2026-03-01T00:00:00Z');
    const invoice = await waitingInvoice(subscription.id);
    const url = invoice.payment_instructions!.hosted_instructions_url!;
    secrets.push(url.split('/').at(-1)!);
    return { clock, subscription, invoice, url };
  }
  /** The buyer presses the page's button and the form reaches ECPay: the form's fields. */
  async function sendToEcpay(url: string) {
    const fields = hiddenFieldsOf((await invoicePage(url, { method: 'POST' })).html);
    await fetch(`${emulator.url}/Cashier/AioCheckOut/V5`, { method: 'POST', body: new URLSearchParams(fields) });
    return fields;
  }

  it("a renewal invoice links to a page that sends the buyer to ECPay; ECPay's account is shown and its transfer pays the invoice", async () => {
    const { clock, subscription, invoice, url } = await renewalWaiting('transfer@example.com');
    expect(url).toMatch(new RegExp(`^${platform.gatewayUrl}/checkout/invoice-payments/[A-Za-z0-9]{32}$`));
    expect(invoice.payment_instructions).toMatchObject({ bank_code: null, account: null });
    await eventually(async () => expect(webhooks('invoice.payment_action_required', invoice.id)).toHaveLength(1));
    expect(
      webhooks('invoice.payment_action_required', invoice.id)[0]!.data.object.payment_instructions
        .hosted_instructions_url,
    ).toBe(url);
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE');
    // The dashboard's payments page lists it as waiting, the account still to come from ECPay.
    const operator = new DashboardAgent(platform.gatewayUrl);
    await operator.signIn({ admin_token: ADMIN_TOKEN });
    const payments = (await operator.get(`/dashboard/${org.id}/sandbox/payments`)).html;
    expect(payments).toContain('Waiting for payment');
    expect(payments).toContain('ATM transfer (the buyer gets it at ECPay)');
    // The customer portal links to it.
    const portal = await send('POST', '/portal/sessions', {
      customer_id: subscription.customer_id,
      return_url: 'https://shop.example/account',
      locale: 'zh-TW',
    });
    const portalPage = await fetch(portal.body.url).then((r) => r.text());
    expect(portalPage).toContain(`href="${url}"`);

    // Billing asks the key again and again: one page, and nothing asked of ECPay before the buyer goes there.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await invoicesOf(subscription.id)).find((i) => i.id === invoice.id)?.payment_instructions).toEqual(
      invoice.payment_instructions,
    );
    const tradesBefore = emulator.trades.size;
    const queriedBefore = new Set(emulator.queries);

    // The page, in the buyer's language: the amount, the deadline and the way to ECPay.
    const shown = await invoicePage(url);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain('前往綠界取得 ATM 虛擬帳號');
    expect(shown.html).toContain('NT$299');
    expect((await invoicePage(url, {}, 'en')).html).toContain('Get an ATM account at ECPay');
    expect((await invoicePage(`${url.slice(0, -4)}XXXX`)).status).toBe(404);

    // The buyer's button: the signed form to ECPay, for the invoice's amount, open until the deadline.
    const redirect = await invoicePage(url, { method: 'POST' });
    expect(redirect.status).toBe(200);
    const fields = hiddenFieldsOf(redirect.html);
    expect(fields).toMatchObject({
      ChoosePayment: 'ATM',
      TotalAmount: '299',
      ExpireDate: '3',
      PaymentInfoURL: `${url}/ecpay/payment-info`,
      ReturnURL: `${url}/ecpay/result`,
      ClientBackURL: url,
    });
    // Sent once: ECPay opens a MerchantTradeNo once, so a second press shows the page again.
    expect(await invoicePage(url, { method: 'POST' })).toMatchObject({ status: 303, location: expect.any(String) });
    const atEcpay = await fetch(`${emulator.url}/Cashier/AioCheckOut/V5`, {
      method: 'POST',
      body: new URLSearchParams(fields),
    });
    expect(atEcpay.status).toBe(200);
    expect(emulator.trades.size).toBe(tradesBefore + 1);
    const tradeNo = fields.MerchantTradeNo!;
    expect(queriedBefore.has(tradeNo)).toBe(false);

    // ECPay posted the account: the page and the invoice show it. (Its webhook has the first one's
    // id on a frozen test clock: an event's id is made of the invoice's updated_at, which did not move.)
    const withAccount = await waitingInvoice(subscription.id);
    await eventually(async () => {
      const read = (await invoicesOf(subscription.id)).find((i) => i.id === invoice.id)!;
      expect(read.payment_instructions?.account).toMatch(/^\d+$/);
    }, 30000);
    const account = (await invoicesOf(subscription.id)).find((i) => i.id === invoice.id)!.payment_instructions!;
    expect(account).toMatchObject({ type: 'atm', bank_code: '812', amount: 299, hosted_instructions_url: url });
    expect(withAccount.id).toBe(invoice.id);
    expect((await invoicePage(url)).html).toContain(`<dd id="account">${account.account}</dd>`);

    // A post that is not ECPay's is refused and records nothing.
    const forged = await fetch(`${url}/ecpay/result`, {
      method: 'POST',
      body: new URLSearchParams({
        MerchantID: ECPAY_STAGING_MERCHANT.merchantId,
        MerchantTradeNo: tradeNo,
        RtnCode: '1',
        CheckMacValue: 'X',
      }),
    });
    expect(forged.status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect((await invoicesOf(subscription.id)).find((i) => i.id === invoice.id)?.status).toBe('open');

    // The transfer arrives: ECPay's post is acknowledged, and the next ask finds it paid.
    await emulator.pay(tradeNo);
    expect(emulator.trades.get(tradeNo)!.acknowledged).toBe(true);
    await eventually(async () => {
      const paid = (await invoicesOf(subscription.id)).find((i) => i.id === invoice.id)!;
      expect(paid.status).toBe('paid');
      expect(paid.payment_instructions ?? null).toBeNull();
    }, 30000);
    await eventually(async () => expect(webhooks('invoice.paid', invoice.id)).toHaveLength(1));
    expect((await invoicePage(url)).html).toContain('綠界已收到您的付款');
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE');

    // A transfer goes back by bank transfer, outside ECPay's refund API: refused, nothing held.
    const refund = await send('POST', '/refunds', { invoice_id: invoice.id, amount: 100 });
    expect(refund.status).toBe(402);
    expect(refund.body.error.details[0]).toMatchObject({ code: 'processor_unavailable' });

    // Reversed at ECPay afterwards: a few minutes later the reconciliation asks ECPay and lists it.
    emulator.voidTrade(tradeNo);
    try {
      ahead = 6 * 60_000;
      const listed = await unmatchedOf(invoice.id);
      expect(listed).toMatchObject({
        processor: 'ecpay',
        trade_no: tradeNo,
        amount: 299,
        reason: 'not_paid_at_processor',
      });
    } finally {
      ahead = 0;
    }
  });

  it('a page left unopened past its deadline is a failed attempt; dunning retries with a page of its own, which is paid', async () => {
    const { clock, subscription, invoice: first, url: firstUrl } = await renewalWaiting('late@example.com');
    try {
      ahead = 4 * DAY; // the services' clock past the page's three days
      await eventually(
        async () => expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('PAST_DUE'),
        30000,
      );
      await eventually(async () => expect(webhooks('invoice.payment_failed', first.id)).toHaveLength(1));
      // Past its deadline the page says so and sends no one to ECPay.
      expect((await invoicePage(firstUrl, {}, 'en')).html).toContain('This payment has expired');
      const tradesBefore = emulator.trades.size;
      expect(await invoicePage(firstUrl, { method: 'POST' })).toMatchObject({ status: 303 });
      expect(emulator.trades.size).toBe(tradesBefore);
    } finally {
      ahead = 0;
    }
    expect((await invoicesOf(subscription.id)).find((i) => i.id === first.id)).toMatchObject({
      status: 'open',
      attempt_count: 1,
      payment_instructions: null,
    });

    // Dunning's next attempt (three days after the invoice opened) gets a page of its own.
    await advanceTo(clock, '2026-03-04T01:00:00Z');
    const retried = await waitingInvoice(subscription.id, 1);
    const url = retried.payment_instructions!.hosted_instructions_url!;
    expect(url).not.toBe(firstUrl);
    const fields = await sendToEcpay(url);
    await emulator.pay(fields.MerchantTradeNo!);
    await eventually(
      async () => expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE'),
      30000,
    );
  });

  it("an account left unpaid past ECPay's expiry is a failed attempt; a transfer ECPay takes afterwards is listed for the operator", async () => {
    const { clock, subscription, invoice, url } = await renewalWaiting('expired@example.com');
    const fields = await sendToEcpay(url);
    const tradeNo = fields.MerchantTradeNo!;
    const issued = await eventually(async () => {
      const read = (await invoicesOf(subscription.id)).find((i) => i.id === invoice.id)!;
      expect(read.payment_instructions?.account).toMatch(/^\d+$/);
      return read.payment_instructions!;
    }, 30000);
    // ECPay's account runs to the end of its last day, past the page's own deadline: its expiry counts.
    expect(Date.parse(issued.expires_at)).toBeGreaterThanOrEqual(Date.parse(invoice.payment_instructions!.expires_at));
    try {
      ahead = Date.parse(issued.expires_at) - Date.now() + 60_000;
      await eventually(
        async () => expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('PAST_DUE'),
        30000,
      );
      // ECPay was asked once the deadline passed, and said unpaid.
      expect(emulator.queries).toContain(tradeNo);
      expect((await invoicePage(url, {}, 'en')).html).toContain('This payment has expired');

      // The buyer pays the expired account anyway and ECPay takes it: no invoice waits for it, so
      // ECPay's post has it listed for the operator to give back or credit by hand.
      await emulator.pay(tradeNo);
      const late = await unmatchedOf(invoice.id);
      expect(late).toMatchObject({ processor: 'ecpay', trade_no: tradeNo, amount: 299, reason: 'paid_after_deadline' });
      expect((await invoicesOf(subscription.id)).find((i) => i.id === invoice.id)).toMatchObject({
        status: 'open',
        attempt_count: 1,
      });
    } finally {
      ahead = 0;
    }
  });

  it("writes no key, buyer's email or page token to any log line", () => {
    expect(secrets).toHaveLength(7);
    expect(logs.lines.length).toBeGreaterThan(100);
    expect(leaksIn(logs.lines, secrets)).toEqual([]);
  });
});
