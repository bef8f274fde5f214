import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@billing/testing';
import type { Browser, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium, merchantSite } from '../src/browser';
import { type CreatedOrganization, type Platform, clientOf, jsonApi, plan, startPlatform } from '../src/platform';

jest.setTimeout(180_000);

/** Screenshots for a person to look at (PORTAL_SCREENSHOTS, default a temporary folder); never committed. */
const SHOTS = process.env.PORTAL_SCREENSHOTS ?? join(tmpdir(), 'portal-screenshots');

/**
 * The customer portal in a real headless Chromium (issue 15, part 5): a merchant's server opens
 * a session, the customer follows its URL and manages the subscription with forms only.
 */
describeWithBrowser('a customer in the portal in a real browser', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;
  let browser: Browser;
  let merchant: Awaited<ReturnType<typeof merchantSite>>;
  let clock = Date.parse('2026-11-23T05:00:00.000Z');
  let max: { id: string };

  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  /** A paid monthly plan bought through checkout (optionally on a test clock with `card`). */
  async function subscribe(email: string, options: { card?: string; testClock?: string } = {}) {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cancel',
      customer_email: email,
      ...(options.testClock ? { test_clock: options.testClock } : {}),
    });
    expect({ status: session.status, body: session.body }).toMatchObject({ status: 201 });
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: options.card ?? '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    return eventually(
      async () => {
        const read = await send('GET', `/checkout/sessions/${session.body.id}`);
        const found = await send('GET', `/subscriptions/${read.body.subscription_id}`);
        expect(found.status).toBe(200);
        return { customerId: found.body.customer_id as string, subscriptionId: found.body.id as string };
      },
      30_000,
      100,
    );
  }

  /** What the merchant's server does: a session (camelCase, as SDKs send it) for the customer. */
  async function portalFor(customerId: string, fields: Record<string, unknown> = {}) {
    const created = await send('POST', '/portal/sessions', {
      customerId,
      returnUrl: `${merchant.url}/account`,
      ...fields,
    });
    expect(created.status).toBe(201);
    return created.body as { id: string; url: string };
  }

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    [platform, browser, merchant] = await Promise.all([
      startPlatform({
        checkout: true,
        billing: true,
        now: () => new Date(clock),
        config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
      }),
      launchChromium(),
      merchantSite(),
    ]);
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    const pro = (await client.createProduct(org.id, plan({ name: 'Pro plan', slug: 'pro', price: 299 }))).body;
    max = (await client.createProduct(org.id, plan({ name: 'Max plan', slug: 'max', price: 599 }))).body;
    await client.admin('POST', `/organizations/${org.id}/portal_configurations`, {
      environment: 'SANDBOX',
      business_profile: { name: 'Acme Cloud', privacy_policy_url: `${merchant.url}/privacy` },
      features: { subscription_update: { enabled: true, products: [pro.id, max.id] } },
    });
  });
  afterAll(async () => {
    await browser?.close();
    merchant?.server.close();
    await platform?.stop();
  });

  it('opens the session’s URL, cancels at period end and resumes', async () => {
    const { customerId, subscriptionId } = await subscribe('mei@example.com');
    const session = await portalFor(customerId);
    const page = await browser.newPage();
    await page.goto(session.url);
    await shot(page, 'portal-main');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, 'portal-main-phone');
    await page.setViewportSize({ width: 1280, height: 720 });
    const card = page.locator(`#subscription-${subscriptionId}`);
    expect(await card.locator('h3').textContent()).toBe('Pro plan');
    expect(await card.textContent()).toContain('NT$299');
    expect(await card.locator('.badge').textContent()).toBe('Active');
    expect(await page.locator('#card-on-file').textContent()).toBe('Visa ending in 4242, expires 12/34');
    expect(await page.locator('#invoices tbody tr').count()).toBe(1);

    await page.getByRole('link', { name: 'Cancel subscription' }).click();
    await shot(page, 'portal-cancel-confirm');
    expect(await page.locator('main').textContent()).toContain('stays active until 23 Dec 2026');
    await page.getByRole('button', { name: 'Cancel subscription' }).click();
    await page.waitForURL(/notice=canceling/);
    expect(await page.locator('#notice').textContent()).toBe('Your subscription will end on 23 Dec 2026.');
    await shot(page, 'portal-canceling');
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.cancel_at_period_end).toBe(true);

    await page.getByRole('button', { name: 'Keep subscription' }).click();
    await page.waitForURL(/notice=resumed/);
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.cancel_at_period_end).toBe(false);
    expect(await card.locator('.badge').textContent()).toBe('Active');
    expect((await send('GET', `/portal/sessions/${session.id}`)).body.accessed_at).toBe('2026-11-23T05:00:00.000Z');

    await page.locator('#invoices a', { hasText: 'Receipt' }).click();
    expect(await page.locator('#amount-paid').textContent()).toBe('NT$299');
    await shot(page, 'portal-receipt');
    await page.goBack();
    await page.locator('#return-link').click();
    await page.waitForURL(`${merchant.url}/account`);
    await page.close();
  });

  it('shows the page in zh-TW', async () => {
    const { customerId } = await subscribe('lin@example.com');
    const session = await portalFor(customerId, { locale: 'zh-TW' });
    const page = await browser.newPage();
    await page.goto(session.url);
    await shot(page, 'portal-zh-TW');
    expect(await page.locator('html').getAttribute('lang')).toBe('zh-TW');
    expect(await page.locator('h1').textContent()).toBe('管理您的訂閱');
    expect(await page.locator('.subscription .badge').textContent()).toBe('使用中');
    expect(await page.locator('main').textContent()).toContain('2026年12月23日 扣款 NT$299');
    await page.getByRole('link', { name: '取消訂閱' }).click();
    expect(await page.locator('h1').textContent()).toBe('確定要取消訂閱嗎？');
    await page.close();

    const byBrowser = await browser.newContext({ locale: 'zh-TW' });
    const other = await byBrowser.newPage();
    await other.goto((await portalFor(customerId)).url);
    expect(await other.locator('h1').textContent()).toBe('管理您的訂閱');
    await byBrowser.close();
  });

  it('switches plan after the preview (credit, charge, net, effective date) is shown', async () => {
    const { customerId, subscriptionId } = await subscribe('upgrade@example.com');
    clock += 10 * 24 * 3600_000;
    const page = await browser.newPage();
    await page.goto((await portalFor(customerId)).url);
    await page.getByRole('link', { name: 'Change plan' }).click();
    await shot(page, 'portal-switch-plans');
    await page.locator(`#choose-${max.id}`).click();
    const preview = (await send('GET', `/subscriptions/${subscriptionId}/switch-preview?target_product_id=${max.id}`))
      .body;
    expect(preview.proration).toMatchObject({ credit_amount: 199, charge_amount: 599, net_amount: 400 });
    expect(await page.locator('#preview-credit span').last().textContent()).toBe('−NT$199');
    expect(await page.locator('#preview-charge span').last().textContent()).toBe('NT$599');
    expect(await page.locator('#preview-net span').last().textContent()).toBe('NT$400');
    expect(await page.locator('#preview-effective span').last().textContent()).toBe('3 Dec 2026');
    await shot(page, 'portal-switch-preview');
    await page.getByRole('button', { name: 'Confirm change' }).click();
    await page.waitForURL(/notice=switched/);
    expect(await page.locator(`#subscription-${subscriptionId} h3`).textContent()).toBe('Max plan');
    await shot(page, 'portal-switched');
    const after = (await send('GET', `/subscriptions/${subscriptionId}`)).body;
    expect(after.product.id).toBe(max.id);
    await page.close();
  });

  it('updates the card, which pays a PAST_DUE subscription’s invoice at once', async () => {
    const testClock = (await send('POST', '/test_clocks', { frozen_time: '2026-01-31T10:00:00Z' })).body.id;
    const { customerId, subscriptionId } = await subscribe('dunning@example.com', {
      card: '4000000000000341',
      testClock,
    });
    expect(
      (await send('POST', `/test_clocks/${testClock}/advance`, { frozen_time: '2026-03-01T00:00:00Z' })).status,
    ).toBe(200);
    await eventually(async () => expect((await send('GET', `/test_clocks/${testClock}`)).body.status).toBe('ready'));
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.status).toBe('PAST_DUE');

    const page = await browser.newPage();
    await page.goto((await portalFor(customerId)).url);
    expect(await page.locator(`#subscription-${subscriptionId} .badge`).textContent()).toBe('Past due');
    await shot(page, 'portal-past-due');
    await page.locator(`#fix-card-${subscriptionId}`).click();
    await page.getByLabel('Card number').fill('4242 4242 4242 4242');
    await page.getByLabel('Expiry (MM/YY)').fill('12/34');
    await page.getByLabel('CVC').fill('123');
    await shot(page, 'portal-card-form');
    await page.getByRole('button', { name: 'Save card' }).click();
    await page.waitForURL(/notice=card_paid/);
    expect(await page.locator('#notice').textContent()).toBe(
      'Your card has been updated and the overdue invoice is paid.',
    );
    expect(await page.locator(`#subscription-${subscriptionId} .badge`).textContent()).toBe('Active');
    expect(await page.locator('#card-on-file').textContent()).toBe('Visa ending in 4242, expires 12/34');
    await shot(page, 'portal-card-paid');
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.status).toBe('ACTIVE');
    await page.close();
  });

  it('shows an expired session’s page with the link back, and refuses its forms', async () => {
    const { customerId, subscriptionId } = await subscribe('late@example.com');
    const session = await portalFor(customerId);
    const page = await browser.newPage();
    await page.goto(`${session.url}/subscriptions/${subscriptionId}/cancel`);
    clock += 60 * 60_000;
    await page.getByRole('button', { name: 'Cancel subscription' }).click();
    expect(await page.locator('h1').textContent()).toBe('This link has expired');
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.cancel_at_period_end).toBe(false);
    await page.goto(session.url);
    await shot(page, 'portal-expired');
    await page.locator('#return-button').click();
    await page.waitForURL(`${merchant.url}/account`);
    await page.close();
  });
});
