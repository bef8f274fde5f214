import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithBrowser, fillAndPay, launchChromium, expectAccessible, textOf } from '../src/browser';
import { createUser } from '../src/dashboard-helpers';
import { type CreatedOrganization, type Platform, clientOf, startPlatform } from '../src/platform';

// One merchant's whole day in a browser: 32 s alone, 80-148 s beside the rest of `npm test` on
// two cores (2026-11-27, at this commit and at the one before it alike).
jest.setTimeout(240000);

declare const window: any;

const PASSWORD = 'correct horse battery';

/** The merchant's webhook receiver on loopback (Sandbox may target it). */
async function startReceiver() {
  const received: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received, server };
}

/**
 * Issue 19, "Done when": a merchant user creates a product and a promotion code, opens a payment
 * link, a buyer pays through it, and the dashboard shows the customer, subscription, invoice,
 * event history and the webhook delivery; another organization's user sees none of it; axe
 * finds no serious violation on any page.
 */

describeWithBrowser('the merchant dashboard in a browser', () => {
  let platform: Platform;
  let browser: Browser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let acme: CreatedOrganization;
  let globex: CreatedOrganization;
  const visited = new Set<string>();

  beforeAll(async () => {
    receiver = await startReceiver();
    [platform, browser] = await Promise.all([
      startPlatform({
        checkout: true,
        billing: true,
        notifications: true,
        config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
      }),
      launchChromium(),
    ]);
    const client = clientOf(platform.gatewayUrl);
    acme = await client.createOrganization('Acme Cloud');
    globex = await client.createOrganization('Globex');
    await createUser(platform.gatewayUrl, acme.id, 'mei@acme.example', 'owner', PASSWORD);
    await createUser(platform.gatewayUrl, globex.id, 'hank@globex.example', 'owner', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    receiver?.server.close();
    await platform?.stop();
  });

  /** A dashboard tab of a signed-in user; axe runs on each page it lands on. */
  async function signIn(email: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${platform.gatewayUrl}/dashboard/login`);
    await expectAccessible(page);
    // By keyboard: the skip link comes first, the password field follows the email, Enter signs in.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => window.document.activeElement.textContent)).toBe('Skip to content');
    await page.getByLabel('Email').fill(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/sandbox$/);
    return { context, page };
  }
  const check = async (page: Page) => {
    await expectAccessible(page);
    visited.add(new URL(page.url()).pathname.split('/').slice(4, 5).join('/') || 'overview');
  };
  const section = async (page: Page, name: string) => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name }).click();
    await page.waitForLoadState();
    await check(page);
    if (process.env.DASHBOARD_SCREENSHOTS)
      await page.screenshot({ path: `/tmp/dashboard-${name.replace(/\W+/g, '-')}.png`, fullPage: true });
  };

  it('runs a sale end to end and shows it, to its organization only', async () => {
    const { context, page } = await signIn('mei@acme.example');
    await check(page);
    expect(await textOf(page.getByRole('note'))).toContain('Sandbox');

    await section(page, 'Products');
    await page.getByLabel('Slug').fill('pro');
    await page.getByLabel('Type').selectOption('SUBSCRIPTION');
    await page.getByLabel('Name').fill('Pro plan');
    await page.getByLabel('Price (whole TWD)').fill('299');
    await page.getByRole('button', { name: 'Create product' }).click();
    await page.waitForURL(/\/products\/prod_/);
    expect(await textOf(page.getByRole('status'))).toContain('Product Pro plan created');
    await check(page);
    const productHistory = await textOf(page.getByRole('region', { name: /Event history of prod_/ }));
    expect(productHistory).toMatch(/ProductCreated dashboard user usr_/);

    await section(page, 'Webhooks');
    await page.getByLabel('URL (https)').fill(receiver.url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.waitForURL(/\/webhooks\/wh_/);
    await check(page);

    await section(page, 'Coupons and codes');
    await page.getByLabel('Name').fill('Launch');
    await page.getByLabel('Discount type').selectOption('PERCENTAGE');
    await page.getByLabel('Amount (percent or whole TWD)').fill('10');
    await page.getByRole('button', { name: 'Create coupon' }).click();
    await page.waitForLoadState();
    await page.getByLabel('Code (3-20 uppercase letters and digits)').fill('LAUNCH10');
    await page.getByRole('button', { name: 'Create promotion code' }).click();
    await page.waitForLoadState();
    expect(await textOf(page.getByRole('status'))).toContain('LAUNCH10');
    await check(page);

    await section(page, 'Payment links');
    await page.getByLabel('Product').selectOption({ label: 'Pro plan' });
    await page.getByLabel('Promotion code applied by default (optional)').fill('LAUNCH10');
    await page.getByRole('button', { name: 'Create payment link' }).click();
    await page.waitForLoadState();
    await check(page);
    const linkUrl = await textOf(page.getByRole('link', { name: /\/pay\// }).first());
    expect(await page.getByRole('button', { name: 'Copy link for Pro plan' }).count()).toBe(1);

    const buyer = await browser.newPage();
    await buyer.goto(`${linkUrl}?email=buyer%40example.com`);
    await fillAndPay(buyer, '4242 4242 4242 4242');
    await buyer.waitForURL(/\/thanks/);
    await buyer.close();

    await page.reload();
    const linkRow = page.getByRole('row', { name: /Pro plan/ });
    expect(await textOf(linkRow.getByRole('cell').nth(4))).toBe('1');

    await section(page, 'Customers');
    await page.getByLabel('Search by email, name, external id or id').fill('BUYER@');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'buyer@example.com' }).click();
    await page.waitForURL(/\/customers\/cus_/);
    await check(page);
    const customerUrl = page.url();
    expect(await page.getByRole('heading', { name: 'History' }).count()).toBe(1);
    const customerHistory = page.getByRole('region', { name: /Event history of cus_/ });
    expect(await textOf(customerHistory)).toMatch(/Customer\w+/);
    expect(await textOf(page.getByRole('region', { name: 'Payments', exact: true }))).toContain('succeeded');
    const invoiceLink = page.getByRole('region', { name: 'Invoices', exact: true }).getByRole('link').first();
    expect(await textOf(invoiceLink)).toMatch(/^INV-/);

    await page.getByRole('link', { name: 'Pro plan' }).click();
    await page.waitForURL(/\/subscriptions\/sub_/);
    await check(page);
    expect(await textOf(page.getByRole('region', { name: 'Subscription', exact: true }))).toContain('ACTIVE');
    const subscriptionHistory = await textOf(page.getByRole('region', { name: /Event history of sub_/ }));
    expect(subscriptionHistory).toMatch(/Subscription\w+/);
    await page.getByRole('region', { name: 'Invoices of this subscription' }).getByRole('link').first().click();
    await page.waitForURL(/\/invoices\/in_/);
    await check(page);
    expect(await textOf(page.getByRole('region', { name: 'Invoice', exact: true }))).toContain('NT$270');
    const invoiceUrl = page.url();

    await page.screenshot({ path: '/tmp/dashboard-invoice.png', fullPage: true });
    await section(page, 'Webhooks');
    await page.getByRole('link', { name: receiver.url }).click();
    const deliveries = page.getByRole('region', { name: 'Deliveries' });
    for (let tries = 0; tries < 80 && !(await deliveries.count()); tries += 1) {
      await page.waitForTimeout(250);
      await page.reload();
    }
    expect(await textOf(deliveries)).toContain('checkout.completed');
    await check(page);

    // The money lists beside Payments, and the organization's events with one event's page.
    await section(page, 'Payments');
    for (const name of ['Invoices', 'Refunds']) {
      await page.getByRole('navigation', { name: 'Money' }).getByRole('link', { name }).click();
      await page.waitForLoadState();
      await check(page);
    }
    await section(page, 'Events');
    await page.getByRole('link', { name: /^evt_/ }).first().click();
    await page.waitForLoadState();
    await check(page);
    expect(await page.content()).toContain('"type":');
    for (const name of ['Subscriptions', 'API keys', 'Settings', 'Test clocks', 'Team', 'Overview'])
      await section(page, name);
    expect(
      await page
        .getByRole('img', {
          name: /^(Monthly recurring revenue|Active subscriptions|New and churned|Payments and failed)/,
        })
        .count(),
    ).toBe(4);
    expect(await textOf(page.getByRole('region', { name: 'Totals' }))).toContain('NT$299');
    await page.goto(`${platform.gatewayUrl}/dashboard/${acme.id}/production`);
    await check(page);
    expect(await page.getByRole('note').count()).toBe(0);
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(customerUrl);
    await page.screenshot({ path: '/tmp/dashboard-customer-phone.png', fullPage: true });
    const overflow = await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    // Production's settings on a phone: the payment processor form, nothing wider than the screen.
    await page.goto(`${platform.gatewayUrl}/dashboard/${acme.id}/production/settings`);
    await check(page);
    expect(await textOf(page.getByRole('form', { name: 'Payments (Production)' }))).toContain(
      'Production refuses every payment until a processor is set',
    );
    await page.screenshot({ path: '/tmp/dashboard-payments-phone.png', fullPage: true });
    expect(
      await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    await context.close();

    const other = await signIn('hank@globex.example');
    await section(other.page, 'Customers');
    expect(await other.page.getByText('No customers yet.').count()).toBe(1);
    for (const url of [
      customerUrl,
      invoiceUrl,
      customerUrl.replace(acme.id, globex.id),
      invoiceUrl.replace(acme.id, globex.id),
    ]) {
      const response = await other.page.goto(url);
      expect({ url, status: response?.status() }).toEqual({ url, status: 404 });
      expect(await other.page.content()).not.toContain('buyer@example.com');
    }
    await other.context.close();
    expect([...visited].sort()).toEqual(
      [
        'api-keys',
        'coupons',
        'customers',
        'events',
        'invoices',
        'overview',
        'payments',
        'refunds',
        'payment-links',
        'products',
        'settings',
        'subscriptions',
        'team',
        'test-clocks',
        'webhooks',
      ].sort(),
    );
    expect(receiver.received.some((body) => body.includes('checkout.completed'))).toBe(true);
  });

  it('speaks zh-TW once picked, on every section at 375 px, and passes the accessibility check', async () => {
    const { context, page } = await signIn('mei@acme.example');
    await page.getByRole('link', { name: '中文' }).click();
    await page.waitForLoadState();
    expect(await page.getAttribute('html', 'lang')).toBe('zh-TW');
    const sections = [
      '總覽',
      '商品',
      '折價券與優惠碼',
      '付款連結',
      '顧客',
      '付款',
      '訂閱',
      '電子發票',
      'Webhooks',
      '事件',
    ];
    const more = ['電子郵件', 'API 金鑰', '設定', '測試時鐘', '團隊'];
    // At a phone's width, where the header and the tables are tightest (the English walk above runs at 1200).
    await page.setViewportSize({ width: 375, height: 900 });
    for (const name of [...sections, ...more]) {
      await page.getByRole('navigation', { name: '功能' }).getByRole('link', { name, exact: true }).click();
      await page.waitForLoadState();
      expect({ name, lang: await page.getAttribute('html', 'lang') }).toEqual({ name, lang: 'zh-TW' });
      await expectAccessible(page);
      if (process.env.DASHBOARD_SCREENSHOTS)
        await page.screenshot({ path: `/tmp/dashboard-zh-375-${name}.png`, fullPage: true });
    }
    // The money lists beside Payments.
    await page.getByRole('navigation', { name: '功能' }).getByRole('link', { name: '付款', exact: true }).click();
    for (const name of ['帳單', '退款']) {
      await page.getByRole('navigation', { name: '金流' }).getByRole('link', { name, exact: true }).click();
      await page.waitForLoadState();
      await expectAccessible(page);
      expect(
        await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);
      if (process.env.DASHBOARD_SCREENSHOTS)
        await page.screenshot({ path: `/tmp/dashboard-zh-375-${name}.png`, fullPage: true });
    }
    // The search box, in the header of every page.
    await page.getByRole('searchbox', { name: '搜尋' }).fill('buyer@example.com');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/search\?q=/);
    await expectAccessible(page);
    expect(await page.getByRole('link', { name: 'buyer@example.com' }).count()).toBe(1);
    await context.close();
  });
});
