import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@billing/testing';
import type { Browser, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../src/browser';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

declare const getComputedStyle: any;
declare const document: any;

/** The merchant's site: its logo, and the pages buyers come back to. */
async function merchantSite(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url === '/logo.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="14" fill="#0a7d5a"/></svg>',
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><title>Leaf & Co</title><h1 id="landed">${req.url}</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/**
 * Issue 16's hosted pages as a buyer sees them, in English and Traditional Chinese: the
 * merchant's name, logo and colour (admin API), what is charged and when in words, typed
 * fields kept after a decline, read-only prefilled fields, a favicon, a payment link's cancel
 * that opens nothing, and thank-you and already-paid pages with the receipt and the way back.
 * Screenshots go to /tmp (not committed); the Chinese texts are checked in the DOM, as this
 * machine's Chromium may lack CJK fonts.
 */
describeWithBrowser('hosted pages a merchant can put in front of customers', () => {
  let platform: Platform;
  let browser: Browser;
  let site: Awaited<ReturnType<typeof merchantSite>>;
  let org: CreatedOrganization;
  let client: ReturnType<typeof clientOf>;
  const sk = () => org.api_keys.sandbox.secret_key;
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${platform.gatewayUrl}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${sk()}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const session = async (fields: Record<string, unknown>) => {
    const created = await api('POST', '/checkout/sessions', {
      success_url: `${site.url}/thanks`,
      cancel_url: `${site.url}/cart`,
      ...fields,
    });
    expect(created.status).toBe(201);
    return created.body as { id: string; url: string };
  };
  const pageIn = async (locale: 'en-US' | 'zh-TW'): Promise<Page> => {
    const context = await browser.newContext({ locale, viewport: { width: 720, height: 900 } });
    return context.newPage();
  };
  const text = (page: Page, selector: string) => page.locator(selector).textContent();

  beforeAll(async () => {
    [platform, browser, site] = await Promise.all([
      startPlatform({ checkout: true, config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' } }),
      launchChromium(),
      merchantSite(),
    ]);
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Leaf & Co');
    const branded = await client.admin('PATCH', `/organizations/${org.id}`, {
      logo_url: `${site.url}/logo.svg`,
      brand_color: '#0A7D5A',
      website_url: `${site.url}/`,
    });
    expect(branded.body).toMatchObject({ brand_color: '#0a7d5a', website_url: `${site.url}/` });
    await client.createProduct(org.id, plan({ name: 'Pro plan', slug: 'pro', price: 299 }));
    await client.createProduct(org.id, plan({ name: 'Trial plan', slug: 'trial', price: 299, trial_days: 7 }));
    await client.createProduct(
      org.id,
      plan({ name: 'Tea box', slug: 'box', type: 'ONE_TIME', interval: null, interval_count: 1, price: 480 }),
    );
    const coupon = await api('POST', '/coupons', {
      name: 'Welcome',
      discount_type: 'FIXED_AMOUNT',
      discount_amount: 59,
      duration: 'once',
    });
    expect((await api('POST', '/promotion-codes', { coupon_id: coupon.body.id, code: 'WELCOME59' })).status).toBe(201);
  });
  afterAll(async () => {
    await browser?.close();
    site?.server.close();
    await platform?.stop();
  });

  /** The merchant replica is eventually consistent: the page names the merchant once it caught up. */
  const openWithMerchant = async (page: Page, url: string) =>
    eventually(
      async () => {
        await page.goto(url);
        expect(await text(page, '#merchant')).toBe('Leaf & Co');
      },
      30000,
      300,
    );

  it('shows the merchant, its logo and colour, the price schedule in words, a favicon, and read-only prefilled fields', async () => {
    const cases = [
      {
        locale: 'en-US' as const,
        fields: { product_slug: 'pro', promotion_code: 'WELCOME59', customer_email: 'mei@example.com' },
        schedule: 'NT$240 today, then NT$299 per month',
        email: 'Email',
      },
      {
        locale: 'zh-TW' as const,
        fields: { product_slug: 'pro', promotion_code: 'WELCOME59', customer_email: 'mei.lin@example.com' },
        schedule: '今天 NT$240，之後每月 NT$299',
        email: '電子郵件',
      },
      {
        locale: 'en-US' as const,
        fields: { product_slug: 'trial' },
        schedule: 'Free for 7 days, then NT$299 per month',
        email: 'Email',
      },
      {
        locale: 'zh-TW' as const,
        fields: { product_slug: 'trial' },
        schedule: '前 7 天免費，之後每月 NT$299',
        email: '電子郵件',
      },
      {
        locale: 'en-US' as const,
        fields: { product_slug: 'box' },
        schedule: 'NT$480, one-time payment',
        email: 'Email',
      },
      // The session's locale wins over the browser's language.
      {
        locale: 'en-US' as const,
        fields: { product_slug: 'box', locale: 'zh-TW' },
        schedule: 'NT$480，一次付清',
        email: '電子郵件',
      },
    ];
    for (const [index, c] of cases.entries()) {
      const page = await pageIn(c.locale);
      const opened = await session(c.fields);
      await openWithMerchant(page, opened.url);
      expect(await text(page, '#schedule')).toBe(c.schedule);
      expect(await page.locator('label[for="field-email"]').textContent()).toBe(c.email);
      expect(await page.locator('#merchant img.logo').getAttribute('src')).toBe(`${site.url}/logo.svg`);
      expect(await page.evaluate(() => getComputedStyle(document.getElementById('pay')).backgroundColor)).toBe(
        'rgb(10, 125, 90)',
      );
      expect(await page.locator('link[rel="icon"]').getAttribute('href')).toMatch(/^data:image\/svg\+xml/);
      if ('customer_email' in c.fields) {
        const email = page.locator('#field-email');
        expect(await email.getAttribute('readonly')).not.toBeNull();
        const [readOnlyLook, editableLook] = await page.evaluate(() => [
          getComputedStyle(document.getElementById('field-email')).backgroundColor,
          getComputedStyle(document.getElementById('field-name')).backgroundColor,
        ]);
        expect(readOnlyLook).not.toBe(editableLook);
      }
      await page.screenshot({ path: `/tmp/hosted-checkout-${index}-${c.locale}.png`, fullPage: true });
      await page.context().close();
    }
  });

  it('keeps every typed field but the card number and CVC after a decline, in both languages', async () => {
    for (const [locale, declined, label] of [
      ['en-US', 'Your card was declined.', 'Card number'],
      ['zh-TW', '您的卡片遭到拒絕。', '信用卡號'],
    ] as const) {
      const page = await pageIn(locale);
      const opened = await session({ product_slug: 'box' });
      await openWithMerchant(page, opened.url);
      await page.locator('#field-email').fill('lin@example.com');
      await page.locator('#field-name').fill('Lin Yu');
      await page.locator('#field-card_number').fill('4000 0000 0000 0002');
      await page.locator('#field-exp').fill('11/33');
      await page.locator('#field-cvc').fill('321');
      await page.locator('#pay').click();
      await page.waitForLoadState('load');
      expect(await page.getByRole('alert').textContent()).toBe(declined);
      expect(await page.locator('#field-email').inputValue()).toBe('lin@example.com');
      expect(await page.locator('#field-name').inputValue()).toBe('Lin Yu');
      expect(await page.locator('#field-exp').inputValue()).toBe('11/33');
      expect(await page.locator('#field-card_number').inputValue()).toBe('');
      expect(await page.locator('#field-cvc').inputValue()).toBe('');
      expect(await page.locator('label[for="field-card_number"]').textContent()).toBe(label);
      await page.screenshot({ path: `/tmp/hosted-declined-${locale}.png`, fullPage: true });
      await page.context().close();
    }
  });

  it("returns from a payment link's checkout without opening another session or counting a visit", async () => {
    const link = await api('POST', '/payment-links', { productSlug: 'box' });
    expect(link.status).toBe(201);
    for (const locale of ['en-US', 'zh-TW'] as const) {
      const page = await pageIn(locale);
      await eventually(
        async () => {
          await page.goto(link.body.url);
          expect(await text(page, '#merchant')).toBe('Leaf & Co');
        },
        30000,
        300,
      );
      const before = (await api('GET', `/payment-links/${link.body.id}`)).body;
      await page.locator('#cancel').click();
      await page.waitForURL(`${link.body.url}/canceled`);
      expect(await text(page, 'h1')).toBe(locale === 'en-US' ? 'Checkout canceled' : '已取消結帳');
      expect(await page.locator('#back').getAttribute('href')).toBe(`${site.url}/`);
      const after = (await api('GET', `/payment-links/${link.body.id}`)).body;
      expect({ views: after.view_count, sessions: after.session_count }).toEqual({
        views: before.view_count,
        sessions: before.session_count,
      });
      await page.screenshot({ path: `/tmp/hosted-link-canceled-${locale}.png`, fullPage: true });
      await page.context().close();
    }
  });

  it("opens a payment link's checkout in the link's locale, whatever the browser's language", async () => {
    const link = await api('POST', '/payment-links', { productSlug: 'box', locale: 'zh-TW' });
    expect(link.body.locale).toBe('zh-TW');
    const page = await pageIn('en-US');
    await page.goto(link.body.url);
    expect(await text(page, '#schedule')).toBe('NT$480，一次付清');
    expect(await page.getAttribute('html', 'lang')).toBe('zh-TW');
    const english = await api('PATCH', `/payment-links/${link.body.id}`, { locale: 'en' });
    expect(english.body.locale).toBe('en');
    await page.goto(link.body.url);
    expect(await text(page, '#schedule')).toBe('NT$480, one-time payment');
    await page.context().close();
  });

  it('takes a promotion code on the page when the session allows one: the discount by code and coupon name, and the discounted amount paid', async () => {
    const coupon = await api('POST', '/coupons', {
      name: 'Spring sale',
      discount_type: 'PERCENTAGE',
      discount_amount: 20,
    });
    expect((await api('POST', '/promotion-codes', { coupon_id: coupon.body.id, code: 'SPRING20' })).status).toBe(201);
    mkdirSync('/tmp/promo-shots', { recursive: true });
    for (const [locale, texts] of [
      ['en-US', { label: 'Promotion code', refused: 'This code cannot be used for this purchase.', pay: 'Pay NT$384' }],
      ['zh-TW', { label: '優惠碼', refused: '此優惠碼無法用於這筆訂單', pay: '付款 NT$384' }],
    ] as const) {
      // A phone's width: the field and its button share one line.
      const context = await browser.newContext({ locale, viewport: { width: 375, height: 812 } });
      const page = await context.newPage();
      const opened = await session({ product_slug: 'box', allow_promotion_codes: true });
      await openWithMerchant(page, opened.url);
      expect(await page.locator('label[for="field-promotion_code"]').textContent()).toBe(texts.label);
      await page.screenshot({ path: `/tmp/promo-shots/field-${locale}.png`, fullPage: true });

      await page.getByLabel(texts.label).fill('SPRING2O');
      await page.locator('#apply-promotion').click();
      await page.waitForLoadState('load');
      expect(await text(page, '#promotion-error')).toContain(texts.refused);
      expect(await page.locator('#field-promotion_code').inputValue()).toBe('SPRING2O');
      await page.screenshot({ path: `/tmp/promo-shots/refused-${locale}.png`, fullPage: true });

      await page.getByLabel(texts.label).fill('spring20');
      await page.locator('#apply-promotion').click();
      await page.waitForLoadState('load');
      expect(await text(page, '#discount')).toBe('SPRING20 · Spring sale−NT$96');
      expect(await text(page, '#pay')).toBe(texts.pay);
      expect(await page.locator('#field-promotion_code').count()).toBe(0);
      await page.screenshot({ path: `/tmp/promo-shots/applied-${locale}.png`, fullPage: true });

      await page.locator('#field-email').fill(`spring-${locale}@example.com`);
      await page.locator('#field-name').fill('Mei Lin');
      await page.locator('#field-card_number').fill('4242 4242 4242 4242');
      await page.locator('#field-exp').fill('12/34');
      await page.locator('#field-cvc').fill('123');
      await page.locator('#pay').click();
      await page.waitForURL(`${site.url}/thanks`);
      expect((await api('GET', `/checkout/sessions/${opened.id}`)).body).toMatchObject({
        status: 'COMPLETE',
        amount_subtotal: 480,
        amount_total: 384,
        discount: { amount: 96 },
      });
      // The already-paid page's receipt: what was charged.
      await page.goto(opened.url);
      expect(await text(page, '#receipt')).toContain('NT$384');
      await context.close();
    }
  });

  it('shows the product, amount paid, date and the way back on the thank-you and already-paid pages', async () => {
    const link = await api('POST', '/payment-links', { productSlug: 'box' });
    for (const [locale, thanks, paid, product, amountPaid] of [
      ['en-US', 'Thank you', 'Already paid', 'Product', 'Amount paid'],
      ['zh-TW', '感謝您的購買', '已完成付款', '商品', '付款金額'],
    ] as const) {
      const page = await pageIn(locale);
      await page.goto(link.body.url);
      const checkoutUrl = page.url();
      await page.locator('#field-email').fill(`buyer-${locale}@example.com`);
      await page.locator('#field-name').fill('Mei Lin');
      await page.locator('#field-card_number').fill('4242 4242 4242 4242');
      await page.locator('#field-exp').fill('12/34');
      await page.locator('#field-cvc').fill('123');
      await page.locator('#pay').click();
      await page.waitForURL(/\/thanks\?session_id=cs_/);
      expect(await text(page, 'h1')).toBe(thanks);
      const receipt = await text(page, '#receipt');
      expect(receipt).toContain(product);
      expect(receipt).toContain('Tea box');
      expect(receipt).toContain(amountPaid);
      expect(receipt).toContain('NT$480');
      expect(receipt).toMatch(locale === 'en-US' ? /\d{1,2} \w+ 20\d\d/ : /20\d\d年\d{1,2}月\d{1,2}日/);
      expect(await page.locator('#back').getAttribute('href')).toBe(`${site.url}/`);
      await page.screenshot({ path: `/tmp/hosted-thanks-${locale}.png`, fullPage: true });

      await page.goto(checkoutUrl);
      expect(await text(page, 'h1')).toBe(paid);
      expect(await text(page, '#receipt')).toContain('NT$480');
      expect(await page.locator('#back').getAttribute('href')).toBe(`${link.body.url}/canceled`);
      await page.screenshot({ path: `/tmp/hosted-already-paid-${locale}.png`, fullPage: true });
      await page.context().close();
    }
  });
});
