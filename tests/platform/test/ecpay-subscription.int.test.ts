import { ECPAY_STAGING_MERCHANT, type EcpayEmulator, startEcpayEmulator } from '@billing/checkout';
import { eventually } from '@billing/testing';
import { type CreatedOrganization, type Platform, clientOf, jsonApi, plan, startPlatform } from '../src/platform';
import {
  PROCESSOR_TEST_CONFIG,
  capturedLogs,
  organizationOn,
  hiddenFieldsOf,
  leaksIn,
  subscriptionOf,
  testClockOf,
  useProcessor,
} from '../src/processor-helpers';

jest.setTimeout(180_000);

/**
 * Subscriptions through ECPay's card plan (信用卡定期定額, docs/payments.md), with a Sandbox pointed
 * at the ECPay emulator: the buyer authorises the plan on ECPay's page, ECPay charges each
 * period itself, and each renewal on a test clock is the period ECPay charged, matched once; a
 * period ECPay has not charged yet waits for the reconciler; a failed period is authorised again
 * (補授權) once; a plan is stopped at ECPay when its subscription ends.
 */
describe('ECPay card plans: subscriptions and their renewals', () => {
  let platform: Platform;
  let emulator: EcpayEmulator;
  let org: CreatedOrganization;
  let send: ReturnType<typeof jsonApi>;
  /** The services' and ECPay's clock: real time, moved ahead where a test waits for a sweep's threshold or ECPay's capture. */
  let ahead = 0;

  const logs = capturedLogs();

  beforeAll(async () => {
    emulator = await startEcpayEmulator(ECPAY_STAGING_MERCHANT, () => new Date(Date.now() + ahead));
    platform = await startPlatform({
      checkout: true,
      billing: true,
      logger: logs.logger,
      now: () => new Date(Date.now() + ahead),
      config: {
        ...PROCESSOR_TEST_CONFIG,
        BILLING_PENDING_CHARGE_MS: '1000',
        BILLING_TRIAL_SWEEP_INTERVAL_MS: '500',
        CHECKOUT_PLAN_CHECK_MS: '300',
        CHECKOUT_RECONCILE_INTERVAL_MS: '300',
      },
    });
    const shop = await organizationOn(platform);
    ({ org, send } = shop);
    const { client } = shop;
    expect((await client.createProduct(org.id, plan({ slug: 'pro', price: 299 }))).status).toBe(201);
    expect((await client.createProduct(org.id, plan({ slug: 'trial', price: 299, trial_days: 14 }))).status).toBe(201);
    expect((await client.createProduct(org.id, plan({ slug: 'team', price: 599 }))).status).toBe(201);
    await useProcessor(client, org.id, 'ecpay', ECPAY_STAGING_MERCHANT, emulator.url);
  });
  afterAll(async () => {
    await platform?.stop();
    await emulator?.close();
  });

  const page = (sessionId: string, init: RequestInit = {}) =>
    fetch(`${platform.gatewayUrl}/checkout/${sessionId}`, {
      redirect: 'manual',
      ...init,
      headers: { 'accept-language': 'en', ...(init.headers ?? {}) },
    }).then(async (r) => ({ status: r.status, html: await r.text() }));

  async function openSession(email: string, fields: Record<string, unknown> = {}) {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: email,
      ...fields,
    });
    expect([session.status, session.body?.error]).toEqual([201, undefined]);
    return session.body.id as string;
  }

  /** The buyer authorises the plan on ECPay's page: the form the checkout page posts, then paid there. */
  async function subscribeAtEcpay(sessionId: string) {
    const offered = await page(sessionId);
    expect(offered.html).toContain('Card, on ECPay&#39;s secure page');
    // Beside ATM and store codes, whose renewals are paid by transfer (ecpay-transfer-renewals.int.test.ts).
    expect(offered.html).toContain('value="atm"');
    const redirect = await page(sessionId, { method: 'POST', body: new URLSearchParams({ method: 'card' }) });
    expect(redirect.status).toBe(200);
    const fields = hiddenFieldsOf(redirect.html);
    expect(fields).toMatchObject({
      ChoosePayment: 'Credit',
      TotalAmount: '299',
      PeriodAmount: '299',
      PeriodType: 'M',
      Frequency: '1',
      ExecTimes: '99',
      PeriodReturnURL: `${platform.gatewayUrl}/checkout/${sessionId}/ecpay/period`,
    });
    const atEcpay = await fetch(`${emulator.url}/Cashier/AioCheckOut/V5`, {
      method: 'POST',
      body: new URLSearchParams(fields),
    });
    expect(atEcpay.status).toBe(200);
    await emulator.pay(fields.MerchantTradeNo!);
    return fields.MerchantTradeNo!;
  }

  const invoicesOf = async (subscriptionId: string) =>
    (await send('GET', `/invoices?subscription_id=${subscriptionId}`)).body.data as { id: string; status: string }[];
  const paidCount = async (subscriptionId: string) =>
    (await invoicesOf(subscriptionId)).filter((invoice) => invoice.status === 'paid').length;

  it('renews with the periods ECPay charged, each once; a period not charged yet waits for the reconciler; the plan stops when the subscription ends', async () => {
    const { clock, advance } = await testClockOf(send, '2026-01-31T10:00:00Z');
    const sessionId = await openSession('plan@example.com', { test_clock: clock });
    const tradeNo = await subscribeAtEcpay(sessionId);
    const subscription = await subscriptionOf(send, sessionId);
    expect(subscription).toMatchObject({ status: 'ACTIVE', price: 299 });
    expect(await paidCount(subscription.id)).toBe(1);

    // ECPay charges the plan's amount each period: a plan switch is refused, saying why.
    const products = (await send('GET', '/products')).body.data as { id: string; slug: string }[];
    const team = products.find((product) => product.slug === 'team')!.id;
    const preview = await send('GET', `/subscriptions/${subscription.id}/switch-preview?target_product_id=${team}`);
    expect(preview.body).toMatchObject({ can_proceed: false, blocking_reason: 'fixed_amount_plan' });
    const switched = await send('POST', `/subscriptions/${subscription.id}/switch`, { target_product_id: team });
    expect([switched.status, switched.body.error?.details?.[0]]).toEqual([
      409,
      expect.objectContaining({ blocking_reason: 'fixed_amount_plan' }),
    ]);

    // ECPay charges the second period on its own schedule and posts it; billing's renewal finds it.
    await emulator.chargePeriod(tradeNo);
    expect(emulator.posts.at(-1)).toMatchObject({
      url: `${platform.gatewayUrl}/checkout/${sessionId}/ecpay/period`,
      answer: '1|OK',
    });
    await advance('2026-03-01T00:00:00Z');
    await eventually(async () => expect(await paidCount(subscription.id)).toBe(2), 30000);

    // The third renewal comes before ECPay's charge: the invoice waits (and the clock with it),
    // then the reconciler matches the period ECPay charged.
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-04-01T00:00:00Z' })).status).toBe(
      200,
    );
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await paidCount(subscription.id)).toBe(2);
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE');
    await emulator.chargePeriod(tradeNo, { notify: false });
    await eventually(async () => expect(await paidCount(subscription.id)).toBe(3), 60000);
    await eventually(async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'), 30000);
    // Three paid invoices for three authorisations: no period paid two invoices.
    expect(emulator.trades.get(tradeNo)!.plan!.executions.filter((e) => e.RtnCode === '1')).toHaveLength(3);

    // ECPay charges a fourth period before the subscription is canceled, for a renewal that will
    // never come: once the plan is stopped, that period is listed to refund by hand.
    await emulator.chargePeriod(tradeNo);
    const fourth = emulator.trades.get(tradeNo)!.plan!.executions.at(-1)!;
    // Canceled now: checkout stops the plan at ECPay, which charges nothing more.
    const canceled = await send('POST', `/subscriptions/${subscription.id}/cancel`, { at_period_end: false });
    expect(canceled.status).toBe(200);
    await eventually(async () => expect(emulator.trades.get(tradeNo)!.plan!.execStatus).toBe('0'), 30000);
    expect(emulator.trades.get(tradeNo)!.plan!.actions).toContain('Cancel');
    const unmatched = await eventually(async () => {
      const listed = await clientOf(platform.gatewayUrl).admin(
        'GET',
        `/organizations/${org.id}/unmatched_payments?environment=sandbox`,
      );
      expect(listed.body.data).toHaveLength(1);
      return listed.body.data;
    });
    expect(unmatched).toEqual([
      expect.objectContaining({ trade_no: fourth.TradeNo, amount: 299, reason: 'period_not_invoiced' }),
    ]);

    // The period that paid the first renewal no longer shows authorised at ECPay (a chargeback, a
    // void in ECPay's site): a few minutes after it was matched, the reconciliation lists it with
    // its invoice; the periods that paid the others still agree.
    emulator.trades.get(tradeNo)!.plan!.executions[1]!.RtnCode = '10100248';
    try {
      ahead = 6 * 60_000;
      const reversed = await eventually(async () => {
        const listed = await clientOf(platform.gatewayUrl).admin(
          'GET',
          `/organizations/${org.id}/unmatched_payments?environment=sandbox`,
        );
        const found = (listed.body.data as { reason: string }[]).filter((p) => p.reason === 'not_paid_at_processor');
        expect(found).toHaveLength(1);
        return found[0] as unknown as { invoice_id: string };
      }, 30000);
      expect(reversed).toMatchObject({ trade_no: tradeNo, amount: 299, checkout_session_id: null, order_id: null });
      const renewals = (await invoicesOf(subscription.id)).filter((invoice) => invoice.status === 'paid');
      expect(renewals.map((invoice) => invoice.id)).toContain(reversed.invoice_id);
    } finally {
      ahead = 0;
    }
  });

  /** 16 minutes into ECPay's first daily capture (20:15 in Taiwan) after `instant` (ms): the capture under way. */
  const afterNextCapture = (instant: number) => {
    const sinceMidnight = (instant + 8 * 3600_000) % 86_400_000;
    const capture = instant - sinceMidnight + (20 * 60 + 15) * 60_000;
    return (capture > instant ? capture : capture + 86_400_000) + 16 * 60_000;
  };

  it('refunds part of the first payment and part of a renewal at ECPay once its capture began; a refund whose answer is lost stays pending and is never asked twice', async () => {
    const { clock, advance } = await testClockOf(send, '2026-01-31T10:00:00Z');
    const sessionId = await openSession('refunds@example.com', { test_clock: clock });
    const tradeNo = await subscribeAtEcpay(sessionId);
    const subscription = await subscriptionOf(send, sessionId);
    await emulator.chargePeriod(tradeNo);
    await advance('2026-03-01T00:00:00Z');
    await eventually(async () => expect(await paidCount(subscription.id)).toBe(2), 30000);
    const plan = emulator.trades.get(tradeNo)!;
    const [first, renewal] = plan.plan!.executions;

    const orderId = (await send('GET', `/checkout/sessions/${sessionId}`)).body.order_id;
    // A part of the first payment waits for ECPay's daily 20:15 capture: pending, nothing asked.
    const part = await send('POST', '/refunds', { order_id: orderId, amount: 100 });
    expect([part.status, part.body.status]).toEqual([201, 'pending']);
    expect(emulator.refunded.get(first!.TradeNo)).toBeUndefined();

    const invoices = (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data as {
      id: string;
      status: string;
      billing_reason?: string;
      created_at: string;
    }[];
    const renewed = invoices
      .filter((invoice) => invoice.status === 'paid')
      .sort((a, b) => (a.created_at < b.created_at ? 1 : -1))[0]!;
    // So does a part of a renewal, the period ECPay authorised today.
    const ofRenewal = await send('POST', '/refunds', { invoice_id: renewed.id, amount: 50 });
    expect([ofRenewal.status, ofRenewal.body.status]).toEqual([201, 'pending']);
    expect(emulator.refunded.get(renewal!.TradeNo)).toBeUndefined();

    try {
      // Once ECPay's capture is under way, the refund sweep makes both.
      ahead = afterNextCapture(Date.now()) - Date.now();
      await eventually(async () => {
        expect((await send('GET', `/refunds/${part.body.id}`)).body.status).toBe('succeeded');
        expect((await send('GET', `/refunds/${ofRenewal.body.id}`)).body.status).toBe('succeeded');
      });
      expect(emulator.refunded.get(first!.TradeNo)).toBe(100);
      expect(emulator.refunded.get(renewal!.TradeNo)).toBe(50);

      // ECPay makes the next refund but its answer is lost: pending, and no sweep asks ECPay again
      // (it takes no key; a second DoAction would refund twice). A person reads it in ECPay's site.
      emulator.failNext('/CreditDetail/DoAction', 'drop');
      const lost = await send('POST', '/refunds', { order_id: orderId, amount: 30 });
      expect([lost.status, lost.body.status]).toEqual([201, 'pending']);
      expect(emulator.refunded.get(first!.TradeNo)).toBe(130);
      ahead += 61_000; // past the sweep's minute for a refund the processor did not answer
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect((await send('GET', `/refunds/${lost.body.id}`)).body.status).toBe('pending');
      expect(emulator.refunded.get(first!.TradeNo)).toBe(130);
    } finally {
      ahead = 0;
    }
    // Never more than was paid: the rest of the first payment is 299 - 130 held.
    const tooMuch = await send('POST', '/refunds', { order_id: orderId, amount: 170 });
    expect(tooMuch.status).toBe(422);
  });

  it('a period ECPay could not charge is authorised again once; a card that still declines leaves the subscription past due', async () => {
    const { clock, advance } = await testClockOf(send, '2026-01-31T10:00:00Z');
    const rescued = await openSession('reauth@example.com', { test_clock: clock });
    const rescuedTrade = await subscribeAtEcpay(rescued);
    const rescuedSubscription = await subscriptionOf(send, rescued);
    await emulator.chargePeriod(rescuedTrade, { paid: false });

    const { clock: other, advance: advanceOther } = await testClockOf(send, '2026-01-31T10:00:00Z');
    const declined = await openSession('declined-plan@example.com', { test_clock: other });
    const declinedTrade = await subscribeAtEcpay(declined);
    const declinedSubscription = await subscriptionOf(send, declined);
    await emulator.chargePeriod(declinedTrade, { paid: false, declinesReAuth: true });

    await advance('2026-03-01T00:00:00Z');
    await eventually(async () => expect(await paidCount(rescuedSubscription.id)).toBe(2), 30000);
    expect(emulator.trades.get(rescuedTrade)!.plan!.actions).toEqual(['ReAuth']);

    await advanceOther('2026-03-01T00:00:00Z');
    await eventually(async () =>
      expect((await send('GET', `/subscriptions/${declinedSubscription.id}`)).body.status).toBe('PAST_DUE'),
    );
    expect((await invoicesOf(declinedSubscription.id)).map((invoice) => invoice.status).sort()).toEqual([
      'open',
      'paid',
    ]);
  });

  it('a free trial is refused before anything is opened at ECPay, and a forged plan post changes nothing', async () => {
    const trades = emulator.trades.size;
    const trial = await openSession('trial@example.com', { product_slug: 'trial' });
    const refused = await page(trial, { method: 'POST', body: new URLSearchParams({ method: 'card' }) });
    expect(refused.status).toBe(402);
    // The buyer reads that the shop cannot take the payment; the merchant's reason is in the log and docs.
    expect(refused.html).toContain('This shop cannot take payments right now');
    expect(emulator.trades.size).toBe(trades);
    expect((await send('GET', `/checkout/sessions/${trial}`)).body.status).toBe('OPEN');
    // A post that is not ECPay's about a plan is refused.
    const forged = await fetch(`${platform.gatewayUrl}/checkout/${trial}/ecpay/period`, {
      method: 'POST',
      body: new URLSearchParams({ MerchantID: '3002607', MerchantTradeNo: 'X', RtnCode: '1', CheckMacValue: 'A' }),
    });
    expect([forged.status, (await forged.text()).startsWith('0|')]).toEqual([400, true]);
  });

  it("writes no key or buyer's email to any log line", () => {
    const secrets = [
      ECPAY_STAGING_MERCHANT.hashKey,
      ECPAY_STAGING_MERCHANT.hashIV,
      'plan@example.com',
      'refunds@example.com',
      'reauth@example.com',
    ];
    expect(logs.lines.length).toBeGreaterThan(100);
    expect(leaksIn(logs.lines, secrets)).toEqual([]);
  });
});
