import { type PayuniEmulator, startPayuniEmulator } from '@billing/checkout';
import { callService, caller, eventually } from '@billing/testing';
import { type CreatedOrganization, type Platform, clientOf, jsonApi, plan, startPlatform } from '../src/platform';
import {
  PAYUNI_TEST_MERCHANT,
  PROCESSOR_TEST_CONFIG,
  capturedLogs,
  leaksIn,
  organizationOn,
  subscriptionOf,
  useProcessor,
} from '../src/processor-helpers';

jest.setTimeout(180_000);

const PAYUNI = PAYUNI_TEST_MERCHANT;
const CARDS = { ok: '4242424242424242', challenge: '4000000000003220', declined: '4000000000000002' };

/**
 * Cards through PAYUNi (docs/payments.md), with a Sandbox pointed at the PAYUNi emulator: the
 * hosted page shows PAYUNi's card fields (the card is bound to an SDK token at PAYUNi, never
 * sent to the platform), checkout charges the token, 3-D Secure sends the buyer to the bank and
 * PAYUNi's result completes the session once; the card PAYUNi keeps is charged again for the
 * renewal on a test clock; a renewal whose answer is lost is settled by asking PAYUNi.
 */
describe('PAYUNi cards through the hosted checkout and renewals', () => {
  let platform: Platform;
  let emulator: PayuniEmulator;
  let org: CreatedOrganization;
  let send: ReturnType<typeof jsonApi>;
  /** The services' clock: real time, moved ahead where a test waits for a sweep's threshold. */
  let ahead = 0;
  /** PAYUNi's clock: real time, moved where a test needs a time of day for its capture. */
  let payuniAhead = 0;

  const logs = capturedLogs();

  beforeAll(async () => {
    emulator = await startPayuniEmulator(PAYUNI, () => new Date(Date.now() + payuniAhead));
    platform = await startPlatform({
      checkout: true,
      billing: true,
      logger: logs.logger,
      now: () => new Date(Date.now() + ahead),
      config: { ...PROCESSOR_TEST_CONFIG, BILLING_PENDING_CHARGE_MS: '1000', BILLING_TRIAL_SWEEP_INTERVAL_MS: '2000' },
    });
    const shop = await organizationOn(platform);
    ({ org, send } = shop);
    const { client } = shop;
    expect((await client.createProduct(org.id, plan({ slug: 'pro', price: 299 }))).status).toBe(201);
    await useProcessor(client, org.id, 'payuni', PAYUNI, emulator.url);
  });
  afterAll(async () => {
    await platform?.stop();
    await emulator?.close();
  });

  const page = (sessionId: string, init: RequestInit = {}) =>
    fetch(`${platform.gatewayUrl}/checkout/${sessionId}`, { redirect: 'manual', ...init }).then(async (r) => ({
      status: r.status,
      location: r.headers.get('location'),
      html: await r.text(),
    }));

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

  /** The page with PAYUNi's fields, and the card typed into them: bound at PAYUNi as its script does. */
  async function typeCard(sessionId: string, card: string) {
    const shown = await page(sessionId);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain(`<script src="${emulator.url}/sdk/uni-payment.js"></script>`);
    expect(shown.html).not.toContain('name="card_number"');
    const sdkToken = /data-sdk-token="([^"]+)"/.exec(shown.html)![1]!;
    const bound = await fetch(`${emulator.url}/sdk/bind/${encodeURIComponent(sdkToken)}`, {
      method: 'POST',
      body: new URLSearchParams({ CardNo: card, CardExp: '12/34', CardCvc: '123' }),
    });
    expect(await bound.json()).toMatchObject({ Status: 'SUCCESS' });
    return sdkToken;
  }

  const payuniTokens = () => emulator.tokens.size;
  const pay = (sessionId: string) => page(sessionId, { method: 'POST', body: new URLSearchParams({}) });

  it('a monthly plan paid through 3-D Secure: the bank page, PAYUNi posts the result, the session completes once', async () => {
    const sessionId = await openSession('three-d@example.com');
    await typeCard(sessionId, CARDS.challenge);
    const toBank = await pay(sessionId);
    expect(toBank.status).toBe(303);
    expect(toBank.location).toMatch(new RegExp(`^${emulator.url}/3d/`));

    // The buyer authenticates; PAYUNi posts to NotifyURL and sends the browser to ReturnURL.
    const bank = await fetch(toBank.location!, { method: 'POST', body: new URLSearchParams({ result: 'pass' }) });
    const form = await bank.text();
    const action = /action="([^"]+)"/.exec(form)![1]!.replaceAll('&amp;', '&');
    expect(action).toBe(`${platform.gatewayUrl}/checkout/${sessionId}/payuni/return`);
    const fields = Object.fromEntries(
      [...form.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replaceAll('&amp;', '&')]),
    );
    const back = await fetch(action, { method: 'POST', redirect: 'manual', body: new URLSearchParams(fields) });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe(`https://shop.example/ok`);

    const subscription = await subscriptionOf(send, sessionId);
    expect(subscription).toMatchObject({ status: 'ACTIVE' });
    const session = (await send('GET', `/checkout/sessions/${sessionId}`)).body;
    expect(session).toMatchObject({ status: 'COMPLETE' });
    // The notification and the browser's post were both read; one trade at PAYUNi, paid once.
    const trades = [...emulator.trades.values()].filter((t) => t.fields.UsrMail === 'three-d@example.com');
    expect(trades).toHaveLength(1);
    expect(emulator.posts.filter((p) => p.url.endsWith(`/checkout/${sessionId}/payuni/notify`))).toEqual([
      expect.objectContaining({ answer: '200 OK' }),
    ]);
    // A repeat of PAYUNi's post records nothing new; a post under other keys is refused.
    const again = await fetch(action, { method: 'POST', redirect: 'manual', body: new URLSearchParams(fields) });
    expect([again.status, again.headers.get('location')]).toEqual([303, 'https://shop.example/ok']);
    const forged = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}/payuni/notify`, {
      method: 'POST',
      body: new URLSearchParams({ ...fields, HashInfo: 'A'.repeat(64) }),
    });
    expect(forged.status).toBe(400);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('COMPLETE');
  });

  it('PAYUNi not answering for its card fields: the page says payments are unavailable, nothing else is shown', async () => {
    const sessionId = await openSession('no-fields@example.com');
    emulator.failNext('/api/iframe/token_get', 'http500');
    const shown = await page(sessionId, { headers: { 'accept-language': 'zh-TW' } });
    expect(shown.status).toBe(503);
    expect(shown.html).toContain('這家商店目前無法付款，未收取任何費用。請聯絡商家。');
    expect(shown.html).not.toContain('card_number');
    expect((await page(sessionId)).status).toBe(200);
  });

  it('a declined card: the page says so and nothing is charged; another card then pays under a new trade', async () => {
    const sessionId = await openSession('declined@example.com');
    // Reloading the page reuses its SDK token: PAYUNi is asked for one until a charge uses it.
    const tokenOf = (html: string) => /data-sdk-token="([^"]+)"/.exec(html)![1]!;
    const tokensBefore = payuniTokens();
    const first = tokenOf((await page(sessionId)).html);
    expect(tokenOf((await page(sessionId)).html)).toBe(first);
    expect(payuniTokens() - tokensBefore).toBe(1);
    await typeCard(sessionId, CARDS.declined);
    const refused = await pay(sessionId);
    expect(refused.status).toBe(402);
    expect(refused.html).toContain('payuni-fields');
    expect(tokenOf(refused.html)).not.toBe(first);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body.status).toBe('OPEN');

    await typeCard(sessionId, CARDS.ok);
    const paid = await pay(sessionId);
    expect([paid.status, paid.location]).toEqual([303, 'https://shop.example/ok']);
    expect(await subscriptionOf(send, sessionId)).toMatchObject({ status: 'ACTIVE' });
  });

  it('a lost charge answer: the buyer is told to try again, and paying again asks PAYUNi first, never charging twice', async () => {
    // Paid at PAYUNi, the answer lost: the next attempt finds the charge by the trade query.
    const paidSession = await openSession('lost-paid@example.com');
    await typeCard(paidSession, CARDS.ok);
    emulator.failNext('/api/iframe/merchant_trade', 'drop');
    expect((await pay(paidSession)).status).toBe(502);
    const again = await pay(paidSession);
    expect([again.status, again.location]).toEqual([303, 'https://shop.example/ok']);
    const trades = [...emulator.trades.values()].filter((t) => t.fields.UsrMail === 'lost-paid@example.com');
    expect(trades.map((t) => t.status)).toEqual(['paid']);

    // Declined at PAYUNi, the answer lost: the query says so, and another card pays under a new trade.
    const declinedSession = await openSession('lost-declined@example.com');
    await typeCard(declinedSession, CARDS.declined);
    emulator.failNext('/api/iframe/merchant_trade', 'drop');
    expect((await pay(declinedSession)).status).toBe(502);
    await typeCard(declinedSession, CARDS.ok);
    const retried = await pay(declinedSession);
    expect(retried.status).toBe(303);
    const both = [...emulator.trades.values()].filter((t) => t.fields.UsrMail === 'lost-declined@example.com');
    expect(both.map((t) => t.status).sort()).toEqual(['failed', 'paid']);
  });

  it('a free trial through PAYUNi keeps the card after an NT$1 authorisation given back at once, and charges it when the trial ends', async () => {
    const client = clientOf(platform.gatewayUrl);
    expect((await client.createProduct(org.id, plan({ slug: 'trial', price: 299, trial_days: 14 }))).status).toBe(201);
    const clock = (await send('POST', '/test_clocks', { frozen_time: '2026-01-31T10:00:00Z' })).body.id as string;
    emulator.captures.mode = 'daily';
    try {
      const sessionId = await openSession('trial@example.com', { product_slug: 'trial', test_clock: clock });
      const shown = await page(sessionId);
      expect(shown.html).toContain('id="verification-note"');
      await typeCard(sessionId, CARDS.ok);
      expect((await pay(sessionId)).status).toBe(303);
      const subscription = await subscriptionOf(send, sessionId);
      expect(subscription).toMatchObject({ status: 'TRIAL' });
      const verified = [...emulator.trades.values()].find((t) => t.fields.UsrMail === 'trial@example.com')!;
      expect([verified.fields.TradeAmt, verified.status, verified.authorisationCanceled]).toEqual(['1', 'paid', true]);
      expect(verified.refunds).toEqual([]);

      // The trial ends: the first period is charged to the card PAYUNi keeps.
      expect(
        (await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-02-15T00:00:00Z' })).status,
      ).toBe(200);
      await eventually(async () => {
        expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready');
        const invoices = (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data;
        expect(
          invoices.filter((i: { status: string; amount_paid: number }) => i.status === 'paid' && i.amount_paid === 299),
        ).toHaveLength(1);
      }, 60_000);
      const charged = [...emulator.trades.values()].filter((t) => t.fields.CreditHash && t.status === 'paid');
      expect(charged.map((t) => t.fields.TradeAmt)).toContain('299');
    } finally {
      emulator.captures.mode = 'at_once';
    }
  });

  it("a trial's NT$1 not given back at once (PAYUNi's answer lost) is given back by the sweep; one PAYUNi captured already is refunded", async () => {
    const verifiedFor = async (email: string) => {
      const sessionId = await openSession(email, { product_slug: 'trial' });
      await typeCard(sessionId, CARDS.ok);
      expect((await pay(sessionId)).status).toBe(303);
      return [...emulator.trades.values()].find((t) => t.fields.UsrMail === email)!;
    };
    emulator.captures.mode = 'daily';
    try {
      emulator.failNext('/api/trade/query', 'http500');
      const lost = await verifiedFor('trial-lost@example.com');
      expect(lost.authorisationCanceled).toBeUndefined();
      ahead = 61_000; // past the sweep's minute
      await eventually(async () => expect(lost.authorisationCanceled).toBe(true));
    } finally {
      emulator.captures.mode = 'at_once';
      ahead = 0;
    }
    // Captured at once (as the emulator does by default): refunded instead.
    const captured = await verifiedFor('trial-captured@example.com');
    expect([captured.authorisationCanceled, captured.refunds]).toEqual([undefined, [1]]);

    // The NT$1's own answer lost and the buyer gone: noted before it was asked, given back by the sweep.
    emulator.failNext('/api/iframe/merchant_trade', 'drop');
    const sessionId = await openSession('trial-gone@example.com', { product_slug: 'trial' });
    await typeCard(sessionId, CARDS.ok);
    expect((await pay(sessionId)).status).toBe(502);
    const gone = [...emulator.trades.values()].find((t) => t.fields.UsrMail === 'trial-gone@example.com')!;
    expect([gone.status, gone.refunds]).toEqual(['paid', []]);
    ahead = 61_000;
    try {
      await eventually(async () => expect(gone.refunds).toEqual([1]));
    } finally {
      ahead = 0;
    }
  });

  it("a trial's card that asks for 3-D Secure is verified at the bank's page, kept, and its NT$1 given back", async () => {
    const sessionId = await openSession('trial-3d@example.com', { product_slug: 'trial' });
    await typeCard(sessionId, CARDS.challenge);
    const toBank = await pay(sessionId);
    expect(toBank.location).toMatch(new RegExp(`^${emulator.url}/3d/`));
    const bank = await fetch(toBank.location!, { method: 'POST', body: new URLSearchParams({ result: 'pass' }) });
    const form = await bank.text();
    const action = /action="([^"]+)"/.exec(form)![1]!.replaceAll('&amp;', '&');
    const fields = Object.fromEntries(
      [...form.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replaceAll('&amp;', '&')]),
    );
    const back = await fetch(action, { method: 'POST', redirect: 'manual', body: new URLSearchParams(fields) });
    expect([back.status, back.headers.get('location')]).toEqual([303, 'https://shop.example/ok']);
    expect(await subscriptionOf(send, sessionId)).toMatchObject({ status: 'TRIAL' });
    const verified = [...emulator.trades.values()].find((t) => t.fields.UsrMail === 'trial-3d@example.com')!;
    expect([verified.fields.TradeAmt, verified.refunds]).toEqual(['1', [1]]);
  });

  it('renews on a test clock with the card PAYUNi keeps; a renewal whose answer is lost is settled once by asking PAYUNi', async () => {
    const clock = (await send('POST', '/test_clocks', { frozen_time: '2026-01-31T10:00:00Z' })).body.id as string;
    const sessionId = await openSession('renews@example.com', { test_clock: clock });
    await typeCard(sessionId, CARDS.ok);
    expect((await pay(sessionId)).status).toBe(303);
    const subscription = await subscriptionOf(send, sessionId);
    const session = (await send('GET', `/checkout/sessions/${sessionId}`)).body;
    expect(session.payment_method ?? session.card ?? {}).not.toHaveProperty('number');

    const advance = async (to: string) => {
      expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
      await eventually(
        async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'),
        60000,
      );
    };
    const paidInvoices = async () =>
      (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data.filter(
        (invoice: { status: string }) => invoice.status === 'paid',
      );

    await advance('2026-03-01T00:00:00Z');
    await eventually(async () => expect(await paidInvoices()).toHaveLength(2), 30000);
    const creditTrades = () =>
      [...emulator.trades.values()].filter((t) => t.fields.CreditHash && t.fields.CreditToken === sessionId);
    expect(creditTrades()).toHaveLength(1);

    // The next renewal's answer is lost, and so is the first query about it: billing waits,
    // the reconciler asks again, PAYUNi says paid, and the invoice is paid once.
    emulator.failNext('/api/credit', 'drop');
    emulator.failNext('/api/trade/query', 'http500');
    const queriesBefore = emulator.queries.length;
    await advance('2026-04-01T00:00:00Z');
    await eventually(async () => expect(await paidInvoices()).toHaveLength(3), 60000);
    expect(creditTrades()).toHaveLength(2);
    // Asked twice about the lost charge: the query that failed, then the reconciler's.
    const renewalTrade = [...emulator.trades.entries()].find(([, t]) => t === creditTrades()[1])![0];
    expect(emulator.queries.slice(queriesBefore).filter((q) => q === renewalTrade).length).toBeGreaterThanOrEqual(2);

    // Each payment names PAYUNi's trade (its MerTradeNo), the first period's as the renewals'.
    const payments = await clientOf(platform.gatewayUrl).admin(
      'GET',
      `/organizations/${org.id}/customers/${subscription.customer_id}/payments?environment=SANDBOX`,
    );
    const paid = payments.body.data.filter((p: { status: string }) => p.status === 'succeeded');
    expect(paid).toHaveLength(3);
    for (const payment of paid) {
      expect(payment.processor).toBe('payuni');
      expect(emulator.trades.has(payment.processor_reference)).toBe(true);
    }
    expect(paid.map((p: { processor_reference: string }) => p.processor_reference)).toContain(renewalTrade);
  });

  it('a kept card PAYUNi declines at renewal: the invoice stays open and the subscription goes past due, nothing recorded as paid', async () => {
    const clock = (await send('POST', '/test_clocks', { frozen_time: '2026-01-31T10:00:00Z' })).body.id as string;
    const sessionId = await openSession('declines-later@example.com', { test_clock: clock });
    await typeCard(sessionId, '4000000000000341'); // pays now, declines every later charge
    expect((await pay(sessionId)).status).toBe(303);
    const subscription = await subscriptionOf(send, sessionId);
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-03-01T00:00:00Z' })).status).toBe(
      200,
    );
    await eventually(async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'), 60000);
    await eventually(async () =>
      expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('PAST_DUE'),
    );
    const invoices = (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data;
    expect(invoices.map((invoice: { status: string }) => invoice.status).sort()).toEqual(['open', 'paid']);
    const renewals = [...emulator.trades.values()].filter(
      (t) => t.fields.CreditHash && t.card?.number === '4000000000000341',
    );
    expect(renewals.map((t) => t.status)).toEqual(['failed']);
  });

  /**
   * A subscription on a test clock whose kept card pays now and declines every later charge, with
   * a portal session for its customer: `goPastDue` renews it into PAST_DUE with its invoice open.
   */
  async function portalOfDecliningSubscriber(email: string) {
    const clock = (await send('POST', '/test_clocks', { frozen_time: '2026-01-31T10:00:00Z' })).body.id as string;
    const sessionId = await openSession(email, { test_clock: clock });
    await typeCard(sessionId, '4000000000000341');
    expect((await pay(sessionId)).status).toBe(303);
    const subscription = await subscriptionOf(send, sessionId);
    const advance = async (to: string) => {
      expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
      await eventually(
        async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'),
        60000,
      );
    };
    const created = await send('POST', '/portal/sessions', {
      customer_id: subscription.customer_id,
      return_url: 'https://shop.example/account',
    });
    expect([created.status, created.body.error]).toEqual([201, undefined]);
    const portalUrl = created.body.url as string;
    const cardPage = () =>
      fetch(`${portalUrl}/payment_method`).then(async (r) => ({ status: r.status, html: await r.text() }));
    const sdkTokenIn = (html: string) => /data-sdk-token="([^"]+)"/.exec(html)![1]!;
    /** What PAYUNi's script does on submit, then the form's post (without the card). */
    const payWith = async (shown: string, card: string) => {
      await fetch(`${emulator.url}/sdk/bind/${encodeURIComponent(sdkTokenIn(shown))}`, {
        method: 'POST',
        body: new URLSearchParams({ CardNo: card, CardExp: '12/34', CardCvc: '123' }),
      });
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(shown)![1]!;
      return fetch(`${portalUrl}/payment_method`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({ csrf_token: csrf, processor: 'payuni' }),
      }).then(async (r) => ({
        status: r.status,
        location: r.headers.get('location'),
        refresh: r.headers.get('refresh'),
        html: await r.text(),
      }));
    };
    const goPastDue = async () => {
      await advance('2026-03-01T00:00:00Z');
      await eventually(async () =>
        expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('PAST_DUE'),
      );
      return (await send('GET', `/invoices?subscription_id=${subscription.id}&status=open`)).body.data[0];
    };
    return { subscription, portalUrl, advance, cardPage, sdkTokenIn, payWith, goPastDue };
  }
  const paidTradesOf = (card: string) =>
    [...emulator.trades.values()].filter((t) => t.card?.number === card && t.status === 'paid');

  it("a new card in the portal's PAYUNi fields pays the overdue invoice once and is kept for the next renewal", async () => {
    const { subscription, advance, cardPage, sdkTokenIn, payWith, goPastDue } =
      await portalOfDecliningSubscriber('new-card@example.com');
    // Nothing due: PAYUNi's fields verify the new card by NT$1 given back at once, and it is kept.
    const nothingDue = await cardPage();
    expect(nothingDue.html).toContain('id="verification-note"');
    const verified = await payWith(nothingDue.html, '4000000000000341');
    expect([verified.status, verified.location]).toEqual([303, expect.stringContaining('notice=card_updated')]);
    const check = [...emulator.trades.values()].find(
      (t) => t.fields.ProdDesc === 'Card verification' && t.card?.number === '4000000000000341',
    )!;
    expect([check.status, check.refunds]).toEqual(['paid', [1]]);

    const open = await goPastDue();
    const shown = await cardPage();
    expect(shown.status).toBe(200);
    expect(shown.html).toContain(`<script src="${emulator.url}/sdk/uni-payment.js"`);
    expect(shown.html).not.toContain('name="card_number"');
    expect(emulator.tokens.get(sdkTokenIn(shown.html))?.fields).toMatchObject({
      CreditToken: subscription.customer_id,
    });

    // A declined card: the page says so, nothing is paid.
    const declined = await payWith(shown.html, CARDS.declined);
    expect(declined.status).toBe(402);
    expect(declined.html).toContain('declined');
    expect((await send('GET', `/invoices/${open.id}`)).body.status).toBe('open');
    // A good card in the fields the page shows again: the overdue invoice is paid, once.
    const paid = await payWith(declined.html, '4111111111111111');
    expect(paid.status).toBe(303);
    expect(paid.location).toContain('notice=card_paid');
    expect((await send('GET', `/invoices/${open.id}`)).body).toMatchObject({ status: 'paid' });
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE');
    expect(paidTradesOf('4111111111111111').map((t) => Number(t.fields.TradeAmt))).toEqual([open.amount_due]);

    // The next renewal is charged to the card kept from the portal.
    await advance('2026-04-01T00:00:00Z');
    await eventually(async () => {
      const invoices = (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data;
      expect(invoices.map((invoice: { status: string }) => invoice.status)).toEqual(['paid', 'paid', 'paid']);
    });
    const kept = paidTradesOf('4111111111111111');
    expect(kept).toHaveLength(2);
    expect(kept[1]!.fields.CreditHash).toBeTruthy();
  });

  it('a new card whose bank asks for the customer: the portal sends them to the bank and back; failed there it is a declined attempt, passed it pays the overdue invoice once', async () => {
    const { portalUrl, cardPage, payWith, goPastDue } = await portalOfDecliningSubscriber('bank-card@example.com');
    const open = await goPastDue();
    /** The customer at the bank's page, then back through PAYUNi's form to checkout, which sends them to the portal. */
    const atTheBank = async (bankUrl: string, result: 'pass' | 'fail') => {
      const bank = await fetch(bankUrl, { method: 'POST', body: new URLSearchParams({ result }) }).then((r) =>
        r.text(),
      );
      const action = /action="([^"]+)"/.exec(bank)![1]!;
      expect(action).toMatch(new RegExp(`^${platform.gatewayUrl}/checkout/[A-Za-z0-9]+/payuni/card-return$`));
      const fields = Object.fromEntries(
        [...bank.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replaceAll('&amp;', '&')]),
      );
      const back = await fetch(action, { method: 'POST', redirect: 'manual', body: new URLSearchParams(fields) });
      expect(back.status).toBe(303);
      const confirmUrl = back.headers.get('location')!;
      expect(confirmUrl.startsWith(`${portalUrl}/payment_method/confirm?key=`)).toBe(true);
      const confirmed = await fetch(confirmUrl, { redirect: 'manual' });
      return {
        action,
        fields,
        confirmUrl,
        status: confirmed.status,
        location: confirmed.headers.get('location'),
        html: await confirmed.text(),
      };
    };

    // Failed at the bank: a declined attempt, counted, and the page says so.
    // The bank's page is reached by a page that refreshes there (a redirect of the form's post
    // would be checked against the card page's form-action), with a link to it.
    const toBank = await payWith((await cardPage()).html, CARDS.challenge);
    expect(toBank.status).toBe(200);
    const bankUrl = /^0; url=(.+)$/.exec(toBank.refresh ?? '')![1]!;
    expect(bankUrl).toMatch(new RegExp(`^${emulator.url}/3d/`));
    expect(toBank.html).toContain(`id="to-bank" href="${bankUrl}"`);
    const failed = await atTheBank(bankUrl, 'fail');
    expect(failed.status).toBe(402);
    expect(failed.html).toContain('declined');
    expect((await send('GET', `/invoices/${open.id}`)).body).toMatchObject({
      status: 'open',
      attempt_count: open.attempt_count + 1,
    });

    // Passed: PAYUNi's post is read, the invoice is paid once with the card, and the card is kept.
    const again = await payWith(failed.html, CARDS.challenge);
    expect(again.status).toBe(200);
    const passed = await atTheBank(/^0; url=(.+)$/.exec(again.refresh ?? '')![1]!, 'pass');
    expect([passed.status, passed.location]).toEqual([303, expect.stringContaining('notice=card_paid')]);
    expect((await send('GET', `/invoices/${open.id}`)).body.status).toBe('paid');
    // The portal's charges are described by the invoice's number.
    const paidForInvoice = () =>
      paidTradesOf(CARDS.challenge).filter((t) => t.fields.ProdDesc === (open.number ?? open.id));
    expect(paidForInvoice().map((t) => Number(t.fields.TradeAmt))).toEqual([open.amount_due]);
    const notified = emulator.posts.filter((p) => p.url.includes('/payuni/card-notify'));
    expect(notified.map((p) => p.answer)).toEqual(['200 OK', '200 OK']);
    // Coming back again (a reload) settles nothing twice; a post under other keys is refused.
    expect((await fetch(passed.confirmUrl, { redirect: 'manual' })).status).toBe(303);
    const forged = await fetch(passed.action.replace('card-return', 'card-notify'), {
      method: 'POST',
      body: new URLSearchParams({ ...passed.fields, HashInfo: 'A'.repeat(64) }),
    });
    expect(forged.status).toBe(400);
    expect(paidForInvoice()).toHaveLength(1);
  });

  it('a portal card charge whose answer is lost is asked nothing more from the page, and the reconciler records it paid once', async () => {
    const { subscription, cardPage, payWith, goPastDue } = await portalOfDecliningSubscriber('lost-card@example.com');
    const open = await goPastDue();
    emulator.failNext('/api/iframe/merchant_trade', 'drop');
    const lost = await payWith((await cardPage()).html, '5555555555554444');
    expect(lost.status).toBe(502);
    expect(lost.html).toContain('being confirmed');
    // Paying again from the page asks nothing of PAYUNi while that charge is unsettled.
    const trades = emulator.trades.size;
    const again = await payWith(lost.html, '5555555555554444');
    expect([again.status, emulator.trades.size]).toEqual([502, trades]);

    await eventually(async () => {
      expect((await send('GET', `/invoices/${open.id}`)).body.status).toBe('paid');
      expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE');
    }, 30_000);
    expect(paidTradesOf('5555555555554444').map((t) => Number(t.fields.TradeAmt))).toEqual([open.amount_due]);
  });

  it("an embedded checkout gets PAYUNi's SDK token, answers requires3D with the bank's page, and is paid once PAYUNi posts the result", async () => {
    const headers = {
      authorization: `Bearer ${org.api_keys.sandbox.secret_key}`,
      'content-type': 'application/json',
      origin: 'https://shop.example',
    };
    const created = await fetch(`${platform.gatewayUrl}/v1/checkouts`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ productSlug: 'pro', customerEmail: 'embedded-3d@example.com', customerName: 'Mei' }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    expect(created.status).toBe(201);
    expect(created.body.card_form_script).toBe(`${emulator.url}/sdk/uni-payment.js`);
    expect(emulator.tokens.get(created.body.sdk_token)?.fields).toMatchObject({ IFrameDomain: 'https://shop.example' });
    const bound = await fetch(`${emulator.url}/sdk/bind/${encodeURIComponent(created.body.sdk_token)}`, {
      method: 'POST',
      body: new URLSearchParams({ CardNo: CARDS.challenge, CardExp: '12/34', CardCvc: '123' }),
    });
    expect(bound.status).toBe(200);
    const id = created.body.checkout.id;
    // A read answers the same card fields, without asking PAYUNi for another token.
    const tokensBefore = emulator.tokens.size;
    const read = await fetch(`${platform.gatewayUrl}/v1/checkouts/${id}`, { headers }).then(
      (r) => r.json() as Promise<any>,
    );
    expect(read).toMatchObject({ sdk_token: created.body.sdk_token, card_form_script: created.body.card_form_script });
    expect(emulator.tokens.size).toBe(tokensBefore);
    const paying = await fetch(`${platform.gatewayUrl}/v1/checkouts/${id}/pay`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ creditToken: created.body.credit_token }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    expect(paying).toMatchObject({ status: 200, body: { success: false, requires3D: true } });
    expect(paying.body.redirect_url.startsWith(`${emulator.url}/3d/`)).toBe(true);
    await fetch(paying.body.redirect_url, { method: 'POST', body: new URLSearchParams({ result: 'pass' }) });
    await eventually(async () => {
      const read = await fetch(`${platform.gatewayUrl}/v1/checkouts/${id}/status`, { headers }).then(
        (r) => r.json() as Promise<any>,
      );
      expect(read.checkout.status).toBe('SUCCEEDED');
    });
  });

  it('a card typed into the portal is refused for an organization on PAYUNi, not saved at the simulator', async () => {
    const typed = await callService(
      platform.checkout!.service.url,
      'POST',
      '/internal/payment_methods',
      caller(org.id),
      {
        card_number: CARDS.ok,
        exp: '12/34',
        cvc: '123',
      },
    );
    expect(typed.status).toBe(402);
    expect(typed.body.error.details).toEqual([expect.objectContaining({ code: 'processor_unavailable' })]);

    // The portal's PAYUNi calls refuse bad input, and a charge with no card in the fields, before PAYUNi.
    const checkout = (path: string, body: unknown) =>
      callService(platform.checkout!.service.url, 'POST', path, caller(org.id), body);
    const charge = { customer_id: 'cus_none', idempotency_key: 'in_x:1', amount: 299, description: 'INV-1' };
    const trades = emulator.trades.size;
    expect((await checkout('/internal/payment_methods/payuni', { ...charge, amount: 0 })).status).toBe(422);
    expect((await checkout('/internal/payment_methods/payuni', { ...charge, card_number: CARDS.ok })).status).toBe(422);
    const noCard = await checkout('/internal/payment_methods/payuni', charge);
    expect([noCard.status, noCard.body.error.message]).toEqual([422, 'Enter a card in the card fields first']);
    expect(emulator.trades.size).toBe(trades);
    const badDomain = await checkout('/internal/payment_methods/card_fields', {
      customer_id: 'cus_none',
      iframe_domain: 'javascript:alert(1)',
    });
    expect(badDomain.status).toBe(422);
  });

  it('refunds part of a payment at PAYUNi, then the rest; a refund whose answer is lost is settled once by the sweep', async () => {
    const sessionId = await openSession('refund@example.com');
    await typeCard(sessionId, CARDS.ok);
    expect((await pay(sessionId)).status).toBe(303);
    await subscriptionOf(send, sessionId);
    const orderId = (await send('GET', `/checkout/sessions/${sessionId}`)).body.order_id;
    const trade = [...emulator.trades.values()].find((t) => t.fields.UsrMail === 'refund@example.com')!;

    const part = await send('POST', '/refunds', { order_id: orderId, amount: 100 });
    expect([part.status, part.body.status]).toEqual([201, 'succeeded']);
    expect(trade.refunds).toEqual([100]);

    // PAYUNi refunds the rest but its answer is lost: pending, then the sweep reads PAYUNi's
    // refunded total and records it, without asking PAYUNi for a second refund.
    emulator.failNext('/api/trade/close', 'drop');
    const rest = await send('POST', '/refunds', { order_id: orderId, amount: 199 });
    expect([rest.status, rest.body.status]).toEqual([201, 'pending']);
    ahead = 61_000; // past the sweep's minute for a refund the processor did not answer
    try {
      await eventually(async () =>
        expect((await send('GET', `/refunds/${rest.body.id}`)).body.status).toBe('succeeded'),
      );
    } finally {
      ahead = 0;
    }
    expect(trade.refunds).toEqual([100, 199]);

    const tooMuch = await send('POST', '/refunds', { order_id: orderId, amount: 1 });
    expect(tooMuch.status).toBe(422);
    expect(trade.refunds).toEqual([100, 199]);
  });

  /** The first 09:00 in Taiwan after `instant` (ms). */
  const nextNineInTaipei = (instant: number) => {
    const sinceMidnight = (instant + 8 * 3600_000) % 86_400_000;
    const nine = instant - sinceMidnight + 9 * 3600_000;
    return nine > instant ? nine : nine + 86_400_000;
  };

  it('refunds a payment whole on its day by canceling the authorisation; a part waits for the capture and is made the next morning', async () => {
    // PAYUNi's clock at noon in Taiwan today: its capture (at midnight, in the emulator) is hours away.
    const taipeiNow = Date.now() + 8 * 3600_000;
    payuniAhead = taipeiNow - (taipeiNow % 86_400_000) + 12 * 3600_000 - taipeiNow;
    emulator.captures.mode = 'daily';
    const paidOrder = async (email: string) => {
      const sessionId = await openSession(email);
      await typeCard(sessionId, CARDS.ok);
      expect((await pay(sessionId)).status).toBe(303);
      await subscriptionOf(send, sessionId);
      const trade = [...emulator.trades.values()].find((t) => t.fields.UsrMail === email)!;
      return { orderId: (await send('GET', `/checkout/sessions/${sessionId}`)).body.order_id as string, trade };
    };
    try {
      const whole = await paidOrder('same-day@example.com');
      const canceled = await send('POST', '/refunds', { order_id: whole.orderId, amount: 299 });
      expect([canceled.status, canceled.body.status]).toEqual([201, 'succeeded']);
      expect([whole.trade.authorisationCanceled, whole.trade.refunds]).toEqual([true, []]);

      // A part on the day cannot be given back before PAYUNi's capture: the refund waits, pending,
      // nothing asked of PAYUNi, and is made by the sweep the next morning, once captured.
      const part = await paidOrder('next-day@example.com');
      const today = await send('POST', '/refunds', { order_id: part.orderId, amount: 100 });
      expect([today.status, today.body.status]).toEqual([201, 'pending']);
      expect([part.trade.authorisationCanceled, part.trade.refunds]).toEqual([undefined, []]);
      // The next morning, 09:00 in Taiwan, PAYUNi has captured it (at midnight in the emulator).
      payuniAhead += 86_400_000;
      ahead = nextNineInTaipei(Date.now() + 2 * 60_000) + 60_000 - Date.now();
      await eventually(async () =>
        expect((await send('GET', `/refunds/${today.body.id}`)).body.status).toBe('succeeded'),
      );
      expect(part.trade.refunds).toEqual([100]);
      ahead = 0;
      payuniAhead -= 86_400_000;

      // A whole cancellation whose answer is lost: pending, then the sweep reads the capture
      // canceled at PAYUNi and records the refund, without asking PAYUNi again.
      const lost = await paidOrder('lost-cancel@example.com');
      emulator.failNext('/api/trade/cancel', 'drop');
      const pending = await send('POST', '/refunds', { order_id: lost.orderId, amount: 299 });
      expect([pending.status, pending.body.status]).toEqual([201, 'pending']);
      expect(lost.trade.authorisationCanceled).toBe(true);
      ahead = 61_000;
      await eventually(async () =>
        expect((await send('GET', `/refunds/${pending.body.id}`)).body.status).toBe('succeeded'),
      );
      expect(lost.trade.refunds).toEqual([]);
    } finally {
      emulator.captures.mode = 'at_once';
      payuniAhead = 0;
      ahead = 0;
    }
  });

  it("writes no key, card, card token, SDK token or buyer's email to any log line", () => {
    const secrets = [
      PAYUNI.hashKey,
      PAYUNI.hashIV,
      ...Object.values(CARDS),
      ...[...emulator.savedCards.keys()],
      ...[...emulator.tokens.keys()],
      'three-d@example.com',
      'renews@example.com',
      'refund@example.com',
      'same-day@example.com',
      'next-day@example.com',
      'lost-cancel@example.com',
      'new-card@example.com',
      'trial@example.com',
      'trial-lost@example.com',
      'trial-captured@example.com',
      'trial-3d@example.com',
      'trial-gone@example.com',
      'lost-card@example.com',
      '4111111111111111',
      '5555555555554444',
    ];
    expect(logs.lines.length).toBeGreaterThan(100);
    expect(leaksIn(logs.lines, secrets)).toEqual([]);
  });
});
