import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type PayuniEmulator, startPayuniEmulator } from '@billing/checkout';
import { ebook, eventually } from '@billing/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../src/browser';
import { type CreatedOrganization, type Platform, clientOf, jsonApi, plan, startPlatform } from '../src/platform';

jest.setTimeout(180_000);

/** The page's own globals, inside `page.evaluate` (the test's tsconfig has no DOM types). */
declare const window: any;

const PAYUNI = { merchantId: 'S01234567', hashKey: '12345678901234567890123456789012', hashIV: '1234567890123456' };
/** Where the recur-tw SDK loads PAYUNi's card fields in Sandbox; the emulator's script answers there. */
const PAYUNI_SANDBOX_SCRIPT = 'https://sandbox-vendor.payuni.com.tw/sdk/uni-payment.js';
const SDK_DIST = join(dirname(createRequire(__filename).resolve('recur-tw/package.json')), 'dist');
const SHOP_HOST = 'shop.example';

/** The merchant's site: a page and the SDK's browser file from node_modules, unchanged. */
async function merchantShop(): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url === '/vendor/recur.umd.js') {
      res.writeHead(200, { 'content-type': 'application/javascript' });
      res.end(readFileSync(join(SDK_DIST, 'recur.umd.js')));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><head><title>Leaf &amp; Co</title></head><body><h1>Leaf &amp; Co</h1></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://${SHOP_HOST}:${(server.address() as AddressInfo).port}`, server };
}

/**
 * A buyer pays by card through PAYUNi (the emulator) in Chromium: on the hosted page at 375 px in
 * zh-TW and en, typing the card into PAYUNi's fields and passing 3-D Secure at the bank's page;
 * and in the recur-tw SDK's embedded checkout on a merchant's page, whose card fields are
 * PAYUNi's script (docs/payments.md).
 */
describeWithBrowser('PAYUNi cards in the browser', () => {
  let platform: Platform;
  let emulator: PayuniEmulator;
  let browser: Browser;
  let shop: Awaited<ReturnType<typeof merchantShop>>;
  let org: CreatedOrganization;
  let send: ReturnType<typeof jsonApi>;

  beforeAll(async () => {
    [emulator, browser, shop] = await Promise.all([
      startPayuniEmulator(PAYUNI),
      launchChromium([`--host-resolver-rules=MAP ${SHOP_HOST} 127.0.0.1`]),
      merchantShop(),
    ]);
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Leaf & Co');
    send = jsonApi(
      () => platform.gatewayUrl,
      () => org.api_keys.sandbox.secret_key,
    );
    await client.createProduct(org.id, plan({ slug: 'pro', name: 'Pro plan', price: 299 }));
    await client.createProduct(org.id, ebook({ slug: 'ebook', name: 'Tea guide', price: 480 }));
    await client.createProduct(org.id, plan({ slug: 'trial', name: 'Pro plan', price: 299, trial_days: 14 }));
    expect((await client.admin('PATCH', `/organizations/${org.id}`, { allowed_origins: [shop.origin] })).status).toBe(
      200,
    );
    const processor = await client.admin('PUT', `/organizations/${org.id}/payment_processor?environment=sandbox`, {
      processor: 'payuni',
      merchant_id: PAYUNI.merchantId,
      hash_key: PAYUNI.hashKey,
      hash_iv: PAYUNI.hashIV,
      endpoint_url: emulator.url,
    });
    expect(processor.status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    shop?.server.close();
    await platform?.stop();
    await emulator?.close();
  });

  /** Types a card into PAYUNi's three fields wherever its script put them. */
  async function typeCard(page: Page, number: string) {
    const cardNo = page.locator('[data-payuni-field="CardNo"]');
    await cardNo.waitFor();
    await cardNo.fill(number);
    await page.locator('[data-payuni-field="CardExp"]').fill('12/34');
    await page.locator('[data-payuni-field="CardCvc"]').fill('123');
  }

  const subscriptionsOf = async (email: string) =>
    eventually(async () => {
      const customers = (await send('GET', `/customers?email=${encodeURIComponent(email)}`)).body.data;
      expect(customers).toEqual([expect.objectContaining({ subscriptions_count: 1 })]);
      return customers[0];
    }, 30000);

  it.each([
    ['zh-TW', '信用卡號', '姓名'],
    ['en', 'Card number', 'Name'],
  ])('%s: the hosted page takes the card in PAYUNi fields and passes 3-D Secure', async (locale, cardLabel, name) => {
    const email = `payuni-${locale.toLowerCase()}@example.com`;
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/',
      customer_email: email,
    });
    expect(session.status).toBe(201);
    const context: BrowserContext = await browser.newContext({ locale, viewport: { width: 375, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${platform.gatewayUrl}/checkout/${session.body.id}`);
    expect(await page.getByText(cardLabel, { exact: true }).count()).toBe(1);
    await page.getByLabel(name).fill('王小明');
    await typeCard(page, '4000 0000 0000 3220');
    await page.screenshot({ path: `/tmp/payuni-card-${locale}.png`, fullPage: true });
    expect(
      await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    await page.locator('#pay').click();
    await page.waitForURL(new RegExp(`^${emulator.url}/3d/`));
    // The bank's page posts PAYUNi's result through the browser to the checkout, which sends the
    // buyer on to the merchant's success URL (not served here).
    const returned = page.waitForResponse((r) => r.url().endsWith(`/checkout/${session.body.id}/payuni/return`));
    await page.locator('#payuni-3d-pass').click();
    const back = await returned;
    expect([back.status(), back.headers().location]).toEqual([303, 'https://shop.example/thanks']);
    await subscriptionsOf(email);
    await context.close();
  });

  it.each([
    ['zh-TW', '統一金流（PAYUNi）會先授權 NT$1'],
    ['en', 'PAYUNi authorises NT$1 on it now and gives it back at once'],
  ])('%s: a free trial takes the card in PAYUNi fields, saying the NT$1 check is given back', async (locale, note) => {
    const email = `trial-${locale.toLowerCase()}@example.com`;
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'trial',
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/',
      customer_email: email,
    });
    const context = await browser.newContext({ locale, viewport: { width: 375, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${platform.gatewayUrl}/checkout/${session.body.id}`);
    expect(await page.locator('#verification-note').textContent()).toContain(note);
    await page.getByLabel(locale === 'en' ? 'Name' : '姓名').fill('林小華');
    await typeCard(page, '4242 4242 4242 4242');
    await page.screenshot({ path: `/tmp/payuni-trial-${locale}.png`, fullPage: true });
    expect(
      await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    const paid = page.waitForResponse(
      (r) => r.url() === `${platform.gatewayUrl}/checkout/${session.body.id}` && r.request().method() === 'POST',
    );
    await page.locator('#pay').click();
    const answer = await paid;
    expect([answer.status(), answer.headers().location]).toEqual([303, 'https://shop.example/thanks']);
    await subscriptionsOf(email);
    const verified = [...emulator.trades.values()].find((t) => t.fields.UsrMail === email)!;
    expect([verified.fields.TradeAmt, verified.refunds]).toEqual(['1', [1]]);
    await context.close();
  });

  it.each([
    ['zh-TW', 'ATM 轉帳（虛擬帳號）', '前往統一金流付款', '請轉帳至此帳號', 'atm'],
    ['en', 'Convenience-store payment code', 'Continue to PAYUNi', 'Pay with this code at a convenience store', 'cvs'],
  ])(
    '%s: a one-time item paid by a code from PAYUNi: chosen beside the card fields, shown back, completed when paid',
    async (locale, methodLabel, continueLabel, instructionsTitle, method) => {
      const session = await send('POST', '/checkout/sessions', {
        product_slug: 'ebook',
        success_url: 'https://shop.example/thanks',
        cancel_url: 'https://shop.example/',
        customer_email: `code-${locale.toLowerCase()}@example.com`,
      });
      expect(session.status).toBe(201);
      const context = await browser.newContext({ locale, viewport: { width: 375, height: 800 } });
      const page = await context.newPage();
      const checkoutUrl = `${platform.gatewayUrl}/checkout/${session.body.id}`;
      await page.goto(checkoutUrl);
      await page.locator('[data-payuni-field="CardNo"]').waitFor();
      await page.getByLabel(locale === 'en' ? 'Name' : '姓名').fill('陳大文');
      await page.getByLabel(methodLabel).check();
      // The card fields step aside and the button says where the buyer goes.
      expect(await page.locator('#payuni-fields').isHidden()).toBe(true);
      expect(await page.locator('#pay').textContent()).toBe(continueLabel);
      await page.screenshot({ path: `/tmp/payuni-code-choice-${locale}.png`, fullPage: true });
      expect(
        await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);
      await page.locator('#pay').click();
      await page.waitForURL(`${emulator.url}/api/upp`);
      const code = await page.locator(method === 'atm' ? '#account' : '#payment-no').textContent();

      await page.goto(checkoutUrl);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(instructionsTitle);
      expect(await page.locator(method === 'atm' ? '#account' : '#payment-code').textContent()).toBe(code);
      await page.screenshot({ path: `/tmp/payuni-code-instructions-${locale}.png`, fullPage: true });
      expect(
        await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);

      const [tradeNo] = [...emulator.trades.entries()].find(([, t]) => t.fields.NotifyURL?.includes(session.body.id))!;
      await emulator.pay(tradeNo);
      expect((await send('GET', `/checkout/sessions/${session.body.id}`)).body.status).toBe('COMPLETE');
      await context.close();
    },
  );

  it.each([
    ['zh-TW', '目前無法付款'],
    ['en', 'Payments unavailable'],
  ])(
    '%s: PAYUNi not opening its card fields leaves the buyer a page that says so, fitting the phone',
    async (locale, title) => {
      const session = await send('POST', '/checkout/sessions', {
        product_slug: 'pro',
        success_url: 'https://shop.example/thanks',
        cancel_url: 'https://shop.example/',
        customer_email: `unavailable-${locale.toLowerCase()}@example.com`,
      });
      const context = await browser.newContext({ locale, viewport: { width: 375, height: 800 } });
      const page = await context.newPage();
      emulator.failNext('/api/iframe/token_get', 'http500');
      const response = await page.goto(`${platform.gatewayUrl}/checkout/${session.body.id}`);
      expect(response?.status()).toBe(503);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(title);
      await page.screenshot({ path: `/tmp/payuni-unavailable-${locale}.png`, fullPage: true });
      expect(
        await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);
      await context.close();
    },
  );

  it.each([
    // In zh-TW with a card whose bank asks for the customer (3-D Secure): to the bank and back.
    ['zh-TW', '卡號', '支付 NT$299 並儲存信用卡', '逾期帳單已付清', '4000 0000 0000 3220'],
    ['en', 'Card number', 'Pay NT$299 and save card', 'overdue invoice is paid', '4111 1111 1111 1111'],
  ])(
    "%s: a customer past due pays the overdue invoice with a new card in the portal's PAYUNi fields, fitting the phone",
    async (locale, cardLabel, button, notice, card) => {
      const email = `portal-card-${locale.toLowerCase()}@example.com`;
      const clock = (await send('POST', '/test_clocks', { frozen_time: '2026-01-31T10:00:00Z' })).body.id as string;
      const session = await send('POST', '/checkout/sessions', {
        product_slug: 'pro',
        success_url: 'https://shop.example/thanks',
        cancel_url: 'https://shop.example/',
        customer_email: email,
        test_clock: clock,
      });
      // Subscribed with a card that pays now and declines every later charge (bound as PAYUNi's script does).
      const hosted = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`).then((r) => r.text());
      const sdkToken = /data-sdk-token="([^"]+)"/.exec(hosted)![1]!;
      await fetch(`${emulator.url}/sdk/bind/${encodeURIComponent(sdkToken)}`, {
        method: 'POST',
        body: new URLSearchParams({ CardNo: '4000000000000341', CardExp: '12/34', CardCvc: '123' }),
      });
      const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({}),
      });
      expect(paid.status).toBe(303);
      const customer = await subscriptionsOf(email);
      await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-03-01T00:00:00Z' });
      await eventually(async () => {
        const subscriptions = (await send('GET', `/subscriptions?customer_id=${customer.id}`)).body.data;
        expect(subscriptions.map((s: { status: string }) => s.status)).toEqual(['PAST_DUE']);
      }, 60_000);

      const portal = await send('POST', '/portal/sessions', {
        customer_id: customer.id,
        return_url: 'https://shop.example/account',
        locale,
      });
      const context = await browser.newContext({ locale, viewport: { width: 375, height: 800 } });
      const page = await context.newPage();
      // The portal offers the card page while the invoice is overdue (PAYUNi's fields pay it there).
      await page.goto(portal.body.url);
      await page.screenshot({ path: `/tmp/payuni-portal-past-due-${locale}.png`, fullPage: true });
      await page.locator('#update-card').click();
      await page.waitForURL(`${portal.body.url}/payment_method`);
      expect(await page.getByText(cardLabel, { exact: true }).count()).toBe(1);
      await typeCard(page, card);
      expect((await page.locator('#save-card').textContent())?.trim()).toBe(button);
      await page.screenshot({ path: `/tmp/payuni-portal-card-${locale}.png`, fullPage: true });
      expect(
        await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);
      const toBank = new RegExp(`^${emulator.url}/3d/`);
      // The page on the way to the bank refreshes there at once: its answer is kept as it passes,
      // to be looked at on its own afterwards.
      let wayToBank = '';
      await page.route(`${portal.body.url}/payment_method`, async (route) => {
        if (route.request().method() !== 'POST') return route.continue();
        const response = await route.fetch({ maxRedirects: 0 });
        wayToBank = await response.text();
        await route.fulfill({ response });
      });
      await page.locator('#save-card').click();
      if (card.endsWith('3220')) {
        await page.waitForURL(toBank);
        expect(wayToBank).toContain('id="to-bank"');
        await page.locator('#payuni-3d-pass').click();
        const shown = await context.newPage();
        await shown.setContent(wayToBank);
        await shown.screenshot({ path: `/tmp/payuni-portal-to-bank-${locale}.png`, fullPage: true });
        await shown.close();
      }
      await page.waitForURL((url) => url.toString().startsWith(portal.body.url) && url.toString().includes('notice='));
      expect(await page.locator('.notice').textContent()).toContain(notice);
      await page.screenshot({ path: `/tmp/payuni-portal-card-paid-${locale}.png`, fullPage: true });
      const subscriptions = (await send('GET', `/subscriptions?customer_id=${customer.id}`)).body.data;
      expect(subscriptions.map((s: { status: string }) => s.status)).toEqual(['ACTIVE']);
      // Nothing overdue now: the card page stays offered (a card then is verified by NT$1 given back).
      expect(await page.locator('#update-card').count()).toBe(1);
      await page.locator('#update-card').click();
      await page.locator('#verification-note').waitFor();
      await page.screenshot({ path: `/tmp/payuni-portal-verify-${locale}.png`, fullPage: true });
      expect(
        await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);
      await context.close();
    },
  );

  it("the recur-tw SDK's embedded checkout pays through PAYUNi's card fields", async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 800 } });
    const page = await context.newPage();
    const script = await fetch(`${emulator.url}/sdk/uni-payment.js`).then((r) => r.text());
    await page.route(PAYUNI_SANDBOX_SCRIPT, (route) =>
      route.fulfill({ status: 200, contentType: 'application/javascript', body: script }),
    );
    await page.goto(`${shop.origin}/`);
    await page.addScriptTag({ url: '/vendor/recur.umd.js' });
    const api = platform.gatewayUrl.replace('127.0.0.1', 'localhost');
    const pro = (await send('GET', '/products')).body.data.find((p: { slug: string }) => p.slug === 'pro');
    await page.evaluate(
      ({ config, productId }) => {
        const w = window as any;
        w.outcome = null;
        void w.RecurCheckout.init(config)
          .checkout({
            productId,
            customerEmail: 'embedded@example.com',
            customerName: 'Mei Lin',
            mode: 'modal',
            onPaymentComplete: (result: unknown) => (w.outcome = { paid: result }),
            onError: (error: unknown) => (w.outcome = { error }),
          })
          .catch((error: Error) => (w.outcome = { error: error.message }));
      },
      { config: { publishableKey: org.api_keys.sandbox.publishable_key, baseUrl: api }, productId: pro.id },
    );
    await typeCard(page, '4242 4242 4242 4242');
    await page.screenshot({ path: '/tmp/payuni-sdk-modal.png' });
    await page.locator('recur-payment-form button.recur-submit-button').click();
    const outcome = await eventually(
      async () => {
        const found = await page.evaluate(() => (window as any).outcome);
        expect(found).toBeTruthy();
        return found;
      },
      20000,
      200,
    );
    expect(outcome).toEqual({ paid: expect.objectContaining({ id: expect.stringMatching(/^sub_/), amount: 299 }) });
    await subscriptionsOf('embedded@example.com');
    expect([...emulator.trades.values()].some((t) => t.fields.UsrMail === 'embedded@example.com')).toBe(true);
    await context.close();
  });
});
