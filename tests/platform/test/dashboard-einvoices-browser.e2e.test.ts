import { eventually } from '@billing/testing';
import type { Browser, Locator, Page } from 'playwright-core';
import {
  type AmegoEmulator,
  startAmegoEinvoiceEmulator,
} from '../../../services/billing/dist/einvoices/providers/amego/emulator';
import { runEinvoiceWork } from '../../../services/billing/dist/einvoices/worker';
import { describeWithBrowser, launchChromium, expectAccessible, textOf } from '../src/browser';
import { createUser } from '../src/dashboard-helpers';
import { lifecycleOrganization } from '../src/lifecycle-helpers';
import { type Platform, startPlatform } from '../src/platform';

jest.setTimeout(180000);

declare const window: any;

const PASSWORD = 'correct horse battery';
const AMEGO = { sellerTaxId: '12345678', appKey: 'sHeq7t8G1wiQvhAuIM27' };

/**
 * The e-invoice pages of the dashboard in Chromium, on a phone (375 px) and a desktop (1280 px):
 * the settings form saved and refused with the problems at their fields, the E-invoices page
 * with one failing near its deadline, the customer, invoice and e-invoice pages; axe finds no
 * serious violation and nothing is wider than the screen. DASHBOARD_SCREENSHOTS=1 keeps
 * /tmp/dash-einvoice-<page>-<width>.png.
 */
describeWithBrowser('e-invoices in the merchant dashboard, in a browser', () => {
  let platform: Platform;
  let browser: Browser;
  let amego: AmegoEmulator;
  let ahead = 0;
  const now = () => new Date(Date.now() + ahead);

  beforeAll(async () => {
    amego = await startAmegoEinvoiceEmulator(AMEGO, now);
    [platform, browser] = await Promise.all([
      startPlatform({ checkout: true, billing: true, now, config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' } }),
      launchChromium(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await amego?.close();
  });

  it('sets the provider, shows each e-invoice and the one failing near its deadline, at 375 and 1280 px', async () => {
    const shop = await lifecycleOrganization(platform);
    await createUser(platform.gatewayUrl, shop.org.id, 'mei@shop.example', 'owner', PASSWORD);
    const base = `${platform.gatewayUrl}/dashboard/${shop.org.id}/sandbox`;
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const signIn = async () => {
      await page.goto(`${platform.gatewayUrl}/dashboard/login`);
      await page.getByLabel('Email').fill('mei@shop.example');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(/\/sandbox$/);
    };
    /** The page at both widths: accessible, nothing wider than a phone's screen, kept as a picture when asked. */
    const look = async (name: string, part?: Locator) => {
      for (const width of [375, 1280]) {
        await page.setViewportSize({ width, height: 900 });
        await expectAccessible(page);
        const overflow = await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth);
        expect({ name, width, overflow }).toEqual({ name, width, overflow: 0 });
        const path = `/tmp/dash-einvoice-${name}-${width}.png`;
        if (process.env.DASHBOARD_SCREENSHOTS)
          await (part ? part.screenshot({ path }) : page.screenshot({ path, fullPage: true }));
      }
      await page.setViewportSize({ width: 1280, height: 900 });
    };
    await signIn();

    // Settings: refused with the problems at their fields, then saved; the key never shown back.
    await page.goto(`${base}/settings`);
    const form = page.getByRole('form', { name: 'E-invoices (Sandbox)' });
    expect(await textOf(form)).toContain('E-invoices now: None: no e-invoice is issued.');
    await form.getByLabel('Provider', { exact: true }).selectOption('ecpay');
    await form.getByLabel("Seller's tax ID").fill('1234');
    await form.getByLabel('Merchant ID').fill('abc');
    await form.getByLabel('HashKey').fill('short');
    await form.getByLabel('HashIV').fill('ejCk326UnaZWKisg');
    await form.getByRole('button', { name: 'Save e-invoice settings' }).click();
    await page.waitForLoadState();
    const refused = page.getByRole('form', { name: 'E-invoices (Sandbox)' });
    expect(await refused.getByLabel('Merchant ID').getAttribute('aria-invalid')).toBe('true');
    expect(await refused.getByLabel('Merchant ID').inputValue()).toBe('abc');
    expect(await refused.getByLabel('HashIV').inputValue()).toBe('');
    expect(await textOf(page.locator('#ei-seller-error'))).toBe('must be 8 digits (統一編號)');
    await look('settings-refused', refused);

    await refused.getByLabel('Provider', { exact: true }).selectOption('amego');
    await refused.getByLabel("Seller's tax ID").fill(AMEGO.sellerTaxId);
    await refused.getByLabel('App Key').fill(AMEGO.appKey);
    await refused.getByLabel('Sandbox endpoint URL').fill(amego.url);
    await refused.getByRole('button', { name: 'Save e-invoice settings' }).click();
    await page.waitForLoadState();
    expect(await textOf(page.getByRole('status'))).toContain('Amego e-invoice settings saved');
    expect(await page.content()).not.toContain(AMEGO.appKey);
    await look('settings', page.getByRole('form', { name: 'E-invoices (Sandbox)' }));

    // A buyer whose e-invoice is issued, and one whose provider refuses until close to the deadline.
    const { subscription: barcode } = await shop.subscribe('mei.buyer@shop.example', '4242424242424242', {
      einvoice: { type: 'B2B', tax_id: '04595257', company_name: 'Acme Trading Co., Ltd.' },
    });
    const [invoice] = await shop.invoicesOf(barcode.id);
    const issued = await eventually(async () => {
      const [e] = (await shop.send('GET', `/einvoices?invoice_id=${invoice.id}`)).body.data;
      expect(e?.status).toBe('issued');
      return e;
    }, 30000);
    for (let i = 0; i < 60; i += 1) amego.failNext('/json/f0401', 'refuse');
    const { subscription: donor } = await shop.subscribe('hank@shop.example', '4242424242424242', {
      einvoice: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
    });
    const [donorInvoice] = await shop.invoicesOf(donor.id);
    // The first attempt is refused before the clock moves on.
    await eventually(async () => {
      const [e] = (await shop.send('GET', `/einvoices?invoice_id=${donorInvoice.id}`)).body.data;
      expect(e?.last_error?.code).toEqual(expect.any(String));
    }, 30000);
    ahead += 37 * 3_600_000;
    const warned = await eventually(async () => {
      await runEinvoiceWork(platform.billing!.service.context);
      const [e] = (await shop.send('GET', `/einvoices?invoice_id=${donorInvoice.id}`)).body.data;
      expect(e?.deadline_warned_at).toEqual(expect.any(String));
      return e;
    }, 30000);
    await signIn();

    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'E-invoices' }).click();
    await page.waitForLoadState();
    expect(await textOf(page.getByRole('alert'))).toContain('1 e-invoice below is still not issued');
    const row = page.getByRole('row').filter({ hasText: 'Deadline near' });
    expect(await textOf(row)).toContain(warned.last_error.message);
    await look('list');

    await page.goto(`${base}/customers/${barcode.customer_id}`);
    expect(await textOf(page.getByRole('region', { name: 'Invoices' }))).toContain(issued.number);
    await look('customer');
    // On a phone the invoices scroll sideways to their e-invoices.
    await page.setViewportSize({ width: 375, height: 900 });
    const invoices = page.getByRole('region', { name: 'Invoices' });
    await invoices.evaluate((table: any) => (table.scrollLeft = table.scrollWidth));
    if (process.env.DASHBOARD_SCREENSHOTS)
      await invoices.screenshot({ path: '/tmp/dash-einvoice-customer-invoices-375.png' });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base}/invoices/${invoice.id}`);
    expect(await textOf(page.getByRole('region', { name: 'E-invoice' }))).toContain('Acme Trading Co., Ltd.');
    await look('invoice');
    await page.goto(`${base}/einvoices/${warned.id}`);
    await look('detail');
    await context.close();
  });
});
