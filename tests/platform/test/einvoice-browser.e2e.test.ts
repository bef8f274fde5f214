import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@billing/testing';
import type { Browser, Page } from 'playwright-core';
import {
  type AmegoEmulator,
  startAmegoEinvoiceEmulator,
} from '../../../services/billing/dist/einvoices/providers/amego/emulator';
import { describeWithBrowser, launchChromium, merchantSite } from '../src/browser';
import { untilCheckoutIssuesEinvoices } from '../src/einvoice-helpers';
import { type CreatedOrganization, type Platform, clientOf, jsonApi, plan, startPlatform } from '../src/platform';

declare const window: any;

jest.setTimeout(180_000);

/** Screenshots for a person to look at (EINVOICE_SCREENSHOTS, default a temporary folder); never committed. */
const SHOTS = process.env.EINVOICE_SCREENSHOTS ?? join(tmpdir(), 'einvoice-screenshots');

/**
 * E-invoices in a real headless Chromium at a phone's width (issue 29, parts 2 and 6): in the
 * portal, the e-invoice number of a paid invoice, where the next ones go, changed with the page's
 * form (a bad tax id refused at the field), and the receipt with the number and carrier; on the
 * embedded checkout's page, the buyer's choice sent with the payment.
 */
describeWithBrowser('e-invoices in the customer portal and the embedded checkout in a real browser', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;
  let browser: Browser;
  let amego: AmegoEmulator;
  let merchant: Awaited<ReturnType<typeof merchantSite>>;

  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    amego = await startAmegoEinvoiceEmulator({ sellerTaxId: '12345678', appKey: 'sHeq7t8G1wiQvhAuIM27' });
    [platform, browser, merchant] = await Promise.all([
      startPlatform({ checkout: true, billing: true, config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' } }),
      launchChromium(),
      merchantSite(),
    ]);
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    await client.createProduct(org.id, plan({ slug: 'pro', price: 299, name: 'Pro 專業方案' }));
    const set = await client.admin('PUT', `/organizations/${org.id}/einvoice_settings?environment=sandbox`, {
      provider: 'amego',
      app_key: 'sHeq7t8G1wiQvhAuIM27',
      seller_tax_id: '12345678',
      endpoint_url: amego.url,
    });
    expect(set.status).toBe(200);
    await untilCheckoutIssuesEinvoices(send, 'pro');
  });
  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await amego?.close();
    merchant?.server.close();
  });

  /** A monthly plan paid with a mobile barcode; its customer and the first invoice's e-invoice once issued. */
  async function subscribeWithBarcode(email: string) {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cancel',
      customer_email: email,
      einvoice: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
    });
    expect(session.status).toBe(201);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    return eventually(
      async () => {
        const read = await send('GET', `/checkout/sessions/${session.body.id}`);
        const [einvoice] = (await send('GET', `/einvoices?order_id=${read.body.order_id}`)).body.data;
        expect(einvoice?.status).toBe('issued');
        return einvoice;
      },
      30_000,
      100,
    );
  }

  it.each(['zh-TW', 'en'] as const)('shows and changes where the e-invoices go, at 375 px in %s', async (locale) => {
    const einvoice = await subscribeWithBarcode(`einvoice-${locale}@example.com`);
    const created = await send('POST', '/portal/sessions', {
      customer_id: einvoice.customer_id,
      return_url: 'https://shop.example/account',
      locale,
    });
    expect(created.status).toBe(201);
    const page = await browser.newPage({ viewport: { width: 375, height: 812 } });
    await page.goto(created.body.url);
    const zh = locale === 'zh-TW';
    expect(await page.textContent('#einvoice-choice')).toBe(zh ? '手機條碼 /ABC+123' : 'Mobile barcode /ABC+123');
    expect(await page.textContent(`#einvoice-${einvoice.invoice_id}`)).toBe(einvoice.number);
    // Nothing wider than the phone: the page does not scroll sideways.
    expect(await page.evaluate(() => window.document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot(page, `portal-${locale}-main`);

    await page.click('#change-einvoice');
    await page.check('input[name="einvoice_type"][value="B2B"]');
    await page.fill('#field-einvoice_tax_id', '04595258');
    await page.fill('#field-einvoice_company_name', 'Acme 有限公司');
    await page.click('#save-einvoice');
    expect(await page.textContent('#error')).toBe(
      zh ? '統一編號不正確，請檢查 8 碼數字。' : 'That tax ID is not valid: check its 8 digits.',
    );
    expect(await page.inputValue('#field-einvoice_company_name')).toBe('Acme 有限公司');
    expect(await page.evaluate(() => window.document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot(page, `portal-${locale}-einvoice-error`);

    await page.fill('#field-einvoice_tax_id', '04595257');
    await page.click('#save-einvoice');
    expect(await page.textContent('#einvoice-choice')).toBe(
      zh ? '公司：Acme 有限公司 統一編號 04595257' : 'Company: Acme 有限公司 tax ID 04595257',
    );
    await shot(page, `portal-${locale}-einvoice-saved`);

    await page.goto(`${created.body.url}/invoices/${einvoice.invoice_id}`);
    const receipt = await page.textContent('#receipt');
    expect(receipt).toContain(einvoice.number);
    expect(receipt).toContain(einvoice.random_code);
    expect(receipt).toContain(zh ? '手機條碼 /ABC+123' : 'Mobile barcode /ABC+123');
    await shot(page, `portal-${locale}-receipt`);
    await page.close();
  });

  it.each(['zh-TW', 'en'] as const)(
    "sends the buyer's choice from the embedded checkout's page, a bad barcode told in %s",
    async (locale) => {
      const ebook = (
        await clientOf(platform.gatewayUrl).createProduct(
          org.id,
          plan({
            slug: `ebook-${locale.toLowerCase()}`,
            name: '電子書',
            type: 'ONE_TIME',
            interval: null,
            interval_count: 1,
            price: 200,
          }),
        )
      ).body;
      const created = await fetch(`${platform.gatewayUrl}/v1/checkouts`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-recur-publishable-key': org.api_keys.sandbox.publishable_key,
          origin: 'https://shop.example',
        },
        body: JSON.stringify({ productId: ebook.id, customerEmail: `embed-${locale}@example.com`, locale }),
      }).then((r) => r.json() as Promise<any>);
      const { id, client_secret: secret } = created.checkout;
      const query = new URLSearchParams({ id, key: org.api_keys.sandbox.publishable_key, client_secret: secret });
      const page = await browser.newPage({ viewport: { width: 375, height: 812 }, locale });
      await page.goto(`${platform.gatewayUrl}/embed/checkout?${query}`);
      const zh = locale === 'zh-TW';
      await page.fill('#name', 'Mei Lin');
      await page.locator('[data-sandbox-card-field="card_number"]').fill('4242 4242 4242 4242');
      await page.locator('[data-sandbox-card-field="exp"]').fill('12/34');
      await page.locator('[data-sandbox-card-field="cvc"]').fill('123');
      await page.check('input[name="einvoice_type"][value="MOBILE_BARCODE"]');
      await page.fill('#field-einvoice_barcode', '/abc');
      await page.click('#pay');
      await page.waitForSelector('#error:not([hidden])');
      expect(await page.textContent('#error')).toContain(zh ? '手機條碼' : 'barcode');
      expect(await page.evaluate(() => window.document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      await shot(page, `embedded-${locale}-einvoice-error`);

      await page.fill('#field-einvoice_barcode', '/abc+123');
      await page.click('#pay');
      await page.waitForSelector('#paid');
      const einvoice = await eventually(
        async () => {
          const read = await send('GET', `/checkout/sessions/${id}`);
          const [e] = (await send('GET', `/einvoices?order_id=${read.body.order_id}`)).body.data;
          expect(e?.status).toBe('issued');
          return e;
        },
        30_000,
        100,
      );
      expect(einvoice.buyer).toEqual({ type: 'MOBILE_BARCODE', carrier: '/ABC+123' });
      await page.close();
    },
  );

  it('takes the choice on the hosted page in zh-TW at 375 px: a malformed barcode refused at its field, then paid and issued', async () => {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: `${merchant.url}/thanks`,
      cancel_url: `${merchant.url}/cancel`,
      customer_email: 'hosted-zh@example.com',
      locale: 'zh-TW',
    });
    expect([session.status, session.body.einvoice_enabled]).toEqual([201, true]);
    const page = await browser.newPage({ viewport: { width: 375, height: 812 }, locale: 'zh-TW' });
    await page.goto(session.body.url.replace(/^https?:\/\/[^/]+/, platform.gatewayUrl));
    const fill = async () => {
      await page.fill('#field-name', '林美');
      await page.fill('#field-card_number', '4242 4242 4242 4242');
      await page.fill('#field-exp', '12/34');
      await page.fill('#field-cvc', '123');
    };
    await fill();
    await page.check('input[name="einvoice_type"][value="MOBILE_BARCODE"]');
    await page.fill('#field-einvoice_barcode', '/abc');
    await page.click('#pay');
    await page.waitForSelector('#einvoice-error');
    expect(await page.textContent('#einvoice-error')).toContain('手機條碼');
    expect(await page.evaluate(() => window.document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot(page, 'hosted-zh-TW-einvoice-error');

    await fill();
    await page.fill('#field-einvoice_barcode', '/abc+123');
    await page.click('#pay');
    await page.waitForSelector('#landed');
    const einvoice = await eventually(
      async () => {
        const read = await send('GET', `/checkout/sessions/${session.body.id}`);
        const [e] = (await send('GET', `/einvoices?order_id=${read.body.order_id}`)).body.data;
        expect(e?.status).toBe('issued');
        return e;
      },
      30_000,
      100,
    );
    expect(einvoice).toMatchObject({ total: 299, buyer: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' } });
    await page.close();
  });
});
