import { ECPAY_STAGING_MERCHANT, type EcpayEmulator, startEcpayEmulator } from '@billing/checkout';
import { ebook, eventually } from '@billing/testing';
import type { Browser } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../src/browser';
import { type Platform, clientOf, jsonApi, plan, startPlatform } from '../src/platform';
import { hiddenFieldsOf, subscriptionOf, testClockOf } from '../src/processor-helpers';

jest.setTimeout(120_000);

/** The page's own global, inside `page.evaluate` (the test's tsconfig has no DOM types). */
declare const window: any;

/**
 * A buyer on a phone pays through ECPay (the emulator) in Chromium, in zh-TW and in English: by
 * ATM (chooses the method, is taken to ECPay by the page's own form, comes back to the checkout
 * link and finds the account, the amount and the deadline), and subscribes to a monthly plan by
 * card on ECPay's page through 3-D Secure, sent back to the shop once paid; nothing wider than
 * the screen; and a subscriber who pays by ATM opens a renewal invoice's page, goes to ECPay for
 * the account and finds it on the page (docs/payments.md).
 */
describeWithBrowser('ECPay payments in the browser', () => {
  let platform: Platform;
  let emulator: EcpayEmulator;
  let browser: Browser;
  let send: ReturnType<typeof jsonApi>;

  beforeAll(async () => {
    emulator = await startEcpayEmulator(ECPAY_STAGING_MERCHANT);
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    browser = await launchChromium();
    const client = clientOf(platform.gatewayUrl);
    const org = await client.createOrganization();
    send = jsonApi(
      () => platform.gatewayUrl,
      () => org.api_keys.sandbox.secret_key,
    );
    await client.createProduct(org.id, ebook({ slug: 'ebook', name: '電子書', price: 480 }));
    await client.createProduct(org.id, plan({ slug: 'pro', name: 'Pro 月方案', price: 299 }));
    await client.admin('PUT', `/organizations/${org.id}/payment_processor?environment=sandbox`, {
      processor: 'ecpay',
      merchant_id: ECPAY_STAGING_MERCHANT.merchantId,
      hash_key: ECPAY_STAGING_MERCHANT.hashKey,
      hash_iv: ECPAY_STAGING_MERCHANT.hashIV,
      endpoint_url: emulator.url,
      methods: ['card', 'atm', 'cvs'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await emulator?.close();
  });

  it.each([
    ['zh-TW', '姓名', 'ATM 轉帳（虛擬帳號）', '前往綠界付款', '請轉帳至此帳號'],
    ['en', 'Name', 'ATM transfer (virtual account)', 'Continue to ECPay', 'Transfer to this account'],
  ])('%s: chooses ATM, goes to ECPay, comes back to the account to pay', async (locale, name, atm, go, title) => {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'ebook',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: `${locale}@example.com`,
    });
    const context = await browser.newContext({ locale, viewport: { width: 375, height: 800 } });
    const page = await context.newPage();
    const checkoutUrl = `${platform.gatewayUrl}/checkout/${session.body.id}`;
    await page.goto(checkoutUrl);
    await page.screenshot({ path: `/tmp/ecpay-choose-${locale}.png`, fullPage: true });
    await page.getByLabel(name).fill('王小明');
    await page.getByLabel(atm).check();
    await page.getByRole('button', { name: go }).click();
    await page.waitForURL(`${emulator.url}/Cashier/AioCheckOut/V5`);
    const account = await page.locator('#account').textContent();
    expect(account).toMatch(/^\d{14}$/);

    await eventually(async () => {
      expect((await send('GET', `/checkout/sessions/${session.body.id}`)).body.payment_instructions).toBeDefined();
    });
    await page.goto(checkoutUrl);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(title);
    expect(await page.locator('#account').textContent()).toBe(account);
    expect(await page.locator('#amount').textContent()).toBe('NT$480');
    await page.screenshot({ path: `/tmp/ecpay-instructions-${locale}.png`, fullPage: true });
    expect(
      await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    await context.close();
  });

  it.each([
    ['zh-TW', '姓名', '信用卡（綠界安全付款頁）', '前往綠界付款'],
    ['en', 'Name', "Card, on ECPay's secure page", 'Continue to ECPay'],
  ])(
    "%s: subscribes to a monthly plan by card on ECPay's page through 3-D Secure, and is sent back paid",
    async (locale, name, card, go) => {
      const session = await send('POST', '/checkout/sessions', {
        product_slug: 'pro',
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/no',
        customer_email: `plan-${locale.toLowerCase()}@example.com`,
      });
      const context = await browser.newContext({ locale, viewport: { width: 375, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${platform.gatewayUrl}/checkout/${session.body.id}`);
      await page.getByLabel(name).fill('王小明');
      expect(await page.getByLabel(card).isChecked()).toBe(true);
      // The card plan, an ATM account or a store code (renewals then paid by transfer).
      expect(await page.locator('input[name="method"]').count()).toBe(3);
      await page.screenshot({ path: `/tmp/ecpay-plan-${locale}.png`, fullPage: true });
      expect(
        await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);
      await page.getByRole('button', { name: go }).click();
      await page.waitForURL(`${emulator.url}/Cashier/AioCheckOut/V5`);
      await page.locator('#pay').click();
      await page.locator('#otp-pass').click();
      const returned = page.waitForResponse((r) => r.url().endsWith(`/checkout/${session.body.id}/ecpay/return`));
      await page.locator('#back button').click();
      const back = await returned;
      expect([back.status(), back.headers().location]).toEqual([303, 'https://shop.example/ok']);
      await eventually(async () => {
        const read = (await send('GET', `/checkout/sessions/${session.body.id}`)).body;
        expect(read).toMatchObject({ status: 'COMPLETE', subscription_id: expect.any(String) });
      }, 30000);
      await context.close();
    },
  );

  it.each([
    ['zh-TW', '繳付帳單', '前往綠界取得 ATM 虛擬帳號', '請轉帳至此帳號'],
    ['en', 'Pay your invoice', 'Get an ATM account at ECPay', 'Transfer to this account'],
  ])(
    "%s: a renewal invoice's page sends the subscriber to ECPay and shows the account",
    async (locale, heading, go, title) => {
      const { clock } = await testClockOf(send, '2026-01-31T10:00:00Z');
      const session = await send('POST', '/checkout/sessions', {
        product_slug: 'pro',
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/no',
        customer_email: `renewal-${locale.toLowerCase()}@example.com`,
        test_clock: clock,
      });
      // The first period by ATM, as the ATM test above does in the browser.
      const checkoutPage = `${platform.gatewayUrl}/checkout/${session.body.id}`;
      const form = await fetch(checkoutPage, { method: 'POST', body: new URLSearchParams({ method: 'atm' }) });
      const fields = hiddenFieldsOf(await form.text());
      await fetch(`${emulator.url}/Cashier/AioCheckOut/V5`, { method: 'POST', body: new URLSearchParams(fields) });
      await emulator.pay(fields.MerchantTradeNo!);
      const subscription = await subscriptionOf(send, session.body.id);
      // Advanced to the renewal (the clock stays `advancing` while the invoice waits for the transfer).
    await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-03-01T00:00:00Z' });
      const url = await eventually(async () => {
        const invoices = (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data;
        const open = invoices.find((invoice: { status: string }) => invoice.status === 'open');
        expect(open?.payment_instructions?.hosted_instructions_url).toEqual(expect.any(String));
        return open.payment_instructions.hosted_instructions_url as string;
      }, 30000);

      const context = await browser.newContext({ locale, viewport: { width: 375, height: 800 } });
      const page = await context.newPage();
      // From the customer portal's button, as from the email's.
      const portal = await send('POST', '/portal/sessions', {
        customer_id: subscription.customer_id,
        return_url: 'https://shop.example/account',
        locale,
      });
      await page.goto(portal.body.url);
      await page.screenshot({ path: `/tmp/ecpay-invoice-portal-${locale}.png`, fullPage: true });
      expect(
        await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);
      await page.getByRole('link', { name: go }).click();
      await page.waitForURL(url);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(heading);
      expect(await page.locator('#amount').textContent()).toBe('NT$299');
      await page.screenshot({ path: `/tmp/ecpay-invoice-page-${locale}.png`, fullPage: true });
      expect(
        await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);
      await page.getByRole('button', { name: go }).click();
      await page.waitForURL(`${emulator.url}/Cashier/AioCheckOut/V5`);
      const account = await page.locator('#account').textContent();
      expect(account).toMatch(/^\d{14}$/);
      // Back on the page (ECPay's link back goes to it): the account, the amount, the deadline.
      await page.goto(url);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(title);
      expect(await page.locator('#account').textContent()).toBe(account);
      await page.screenshot({ path: `/tmp/ecpay-invoice-account-${locale}.png`, fullPage: true });
      expect(
        await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);
      await context.close();
    },
  );
});
