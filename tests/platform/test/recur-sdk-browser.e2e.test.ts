import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { eventually } from '@billing/testing';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../src/browser';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

// What page.evaluate's functions use, in the browser (this project compiles without the DOM library).
declare const window: any;
declare const document: any;
declare const location: any;

/** The published browser files of the recur-tw SDK, as installed from npm (a test dependency). */
const SDK_DIST = join(dirname(createRequire(__filename).resolve('recur-tw/package.json')), 'dist');
/** The SDK loads its payment provider's card form from here; in Sandbox the platform's own stands in. */
const PROVIDER_SCRIPT = 'https://sandbox-vendor.payuni.com.tw/sdk/uni-payment.js';
/** The merchant's own site, on another origin than the platform (Chromium resolves it to loopback). */
const SHOP_HOST = 'shop.example';

/** A merchant's React paywall on the SDK's useCustomer hook, bundled as a site would ship it. */
async function paywallBundle(): Promise<string> {
  const built = await build({
    entryPoints: [join(__dirname, '..', 'src', 'fixtures', 'recur-paywall.js')],
    bundle: true,
    format: 'iife',
    write: false,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  return built.outputFiles[0]!.text;
}

/** The merchant's site: its pages, the SDK's files from node_modules, unchanged, and its paywall. */
async function merchantShop(): Promise<{ origin: string; server: Server }> {
  const paywall = await paywallBundle();
  const server = createServer((req, res) => {
    const file = /^\/vendor\/(recur\.umd|checkout|widget|paywall)\.js$/.exec(req.url ?? '')?.[1];
    if (file) {
      res.writeHead(200, { 'content-type': 'application/javascript' });
      res.end(file === 'paywall' ? paywall : readFileSync(join(SDK_DIST, `${file}.js`)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    // The border-box reset nearly every site has (Tailwind's preflight, normalize): the SDK's
    // coupon input counts on it. Without it the input is 46 px wider than its box and covers
    // the apply button, and whether a click on the button lands depended on the run.
    res.end(
      '<!doctype html><html><head><title>Leaf & Co shop</title>' +
        '<style>*, *::before, *::after { box-sizing: border-box; }</style></head>' +
        '<body><h1>Leaf &amp; Co</h1><div id="out"></div></body></html>',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://${SHOP_HOST}:${(server.address() as AddressInfo).port}`, server };
}

/**
 * Done-when of issue 16: the recur-tw SDK's browser code, unchanged but for its base URL, on a
 * merchant page of another origin, lists products, checks an entitlement by external id and
 * completes an embedded checkout with 4242 against the gateway; and its checkout.js button
 * completes one in its dialog.
 */
describeWithBrowser("the recur-tw SDK in a real browser, from the merchant's origin", () => {
  let platform: Platform;
  let browser: Browser;
  let shop: Awaited<ReturnType<typeof merchantShop>>;
  let org: CreatedOrganization;
  let api: string;
  let pro: { id: string };
  const sk = () => org.api_keys.sandbox.secret_key;
  const pk = () => org.api_keys.sandbox.publishable_key;
  const server = (path: string) =>
    fetch(`${platform.gatewayUrl}${path}`, { headers: { authorization: `Bearer ${sk()}` } }).then(
      (r) => r.json() as Promise<any>,
    );

  /** A page of the merchant's site whose requests to the payment provider get the sandbox card form. */
  async function shopPage(locale = 'en-US'): Promise<Page> {
    const page = await browser.newPage({ locale });
    const cardForm = await fetch(`${platform.gatewayUrl}/sandbox/card-form.js`).then((r) => r.text());
    await page.route(PROVIDER_SCRIPT, (route) =>
      route.fulfill({ status: 200, contentType: 'application/javascript', body: cardForm }),
    );
    page.on('pageerror', (error) => console.warn('page error:', error.message));
    await page.goto(`${shop.origin}/`);
    return page;
  }

  beforeAll(async () => {
    [platform, browser, shop] = await Promise.all([
      startPlatform({ checkout: true, billing: true, config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' } }),
      launchChromium([`--host-resolver-rules=MAP ${SHOP_HOST} 127.0.0.1`]),
      merchantShop(),
    ]);
    // The platform answers on localhost too: the SDK's dialogs accept messages from recur.tw or localhost.
    api = platform.gatewayUrl.replace('127.0.0.1', 'localhost');
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Leaf & Co');
    pro = (await client.createProduct(org.id, plan({ name: 'Pro plan', slug: 'pro', price: 299 }))).body;
    await client.createProduct(
      org.id,
      plan({ name: 'Tea box', slug: 'tea-box', type: 'ONE_TIME', interval: null, price: 480 }),
    );
    const coupon = await fetch(`${platform.gatewayUrl}/v1/coupons`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sk()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Launch 10%', discount_type: 'PERCENTAGE', discount_amount: 10, duration: 'once' }),
    }).then((r) => r.json() as Promise<any>);
    const code = await fetch(`${platform.gatewayUrl}/v1/promotion-codes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sk()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ coupon_id: coupon.id, code: 'LAUNCH10' }),
    });
    expect(code.status).toBe(201);
    // Only the merchant's site may use the Publishable Key from a browser.
    expect((await client.admin('PATCH', `/organizations/${org.id}`, { allowed_origins: [shop.origin] })).status).toBe(
      200,
    );
  });
  afterAll(async () => {
    await browser?.close();
    shop?.server.close();
    await platform?.stop();
  });

  /** Types a card into the provider's card form (the sandbox one) in `frame`, the page or a dialog's iframe. */
  async function enterCard(frame: Pick<Page, 'locator'>, number: string) {
    await frame.locator('[data-sandbox-card-field="card_number"]').fill(number);
    await frame.locator('[data-sandbox-card-field="exp"]').fill('12/34');
    await frame.locator('[data-sandbox-card-field="cvc"]').fill('123');
  }
  /** The `recur:success` event the SDK's button scripts dispatch, once the dialog reports a payment. */
  const recurSuccess = (page: Page) =>
    eventually(
      async () => {
        const events = await page.evaluate(() => (window as any).events as Array<{ name: string; detail: any }>);
        const found = events.find((e) => e.name === 'recur:success');
        expect(found).toBeTruthy();
        return found!;
      },
      20000,
      200,
    );
  /** The browser bundle's modal checkout, as a merchant's page starts it; its outcome lands in `window.outcome`. */
  const startBundleCheckout = (page: Page, productId: string, buyer: Record<string, string>) =>
    page.evaluate(
      ({ config, productId, buyer }) => {
        const w = window as any;
        w.outcome = null;
        void w.RecurCheckout.init(config)
          .checkout({
            productId,
            ...buyer,
            mode: 'modal',
            onPaymentComplete: (result: unknown) => (w.outcome = { paid: result }),
            onError: (error: unknown) => (w.outcome = { error }),
          })
          .catch((error: Error) => (w.outcome = { thrown: error.message }));
      },
      { config: { publishableKey: pk(), baseUrl: api }, productId, buyer },
    );
  const outcomeOf = (page: Page) =>
    eventually(
      async () => {
        const found = await page.evaluate(() => (window as any).outcome);
        expect(found).toBeTruthy();
        return found;
      },
      20000,
      200,
    );
  const teaBoxId = async () => (await server('/v1/products')).data.find((p: any) => p.slug === 'tea-box').id;

  it('lists products, checks an entitlement by external id, and completes an embedded checkout with 4242', async () => {
    const page = await shopPage();
    await page.addScriptTag({ url: '/vendor/recur.umd.js' });
    const setup = { publishableKey: pk(), baseUrl: api };

    const products = await page.evaluate(async (config) => {
      const recur = (window as any).RecurCheckout.init(config);
      return (await recur.fetchProducts()).products.map((p: any) => ({ name: p.name, price: p.price, type: p.type }));
    }, setup);
    expect(products).toEqual(
      expect.arrayContaining([
        { name: 'Pro plan', price: 299, type: 'SUBSCRIPTION' },
        { name: 'Tea box', price: 480, type: 'ONE_TIME' },
      ]),
    );

    // The SDK's entitlement check: its React hook useCustomer, in the merchant's paywall.
    await page.addScriptTag({ url: '/vendor/paywall.js' });
    const paywallOf = async (externalId: string) => {
      const fetched = page.waitForResponse(
        (r) => r.url().includes('/v1/customers/entitlements') && r.request().method() === 'GET',
      );
      await page.evaluate(
        ({ config, id }) => (window as any).mountPaywall({ ...config, externalId: id, product: 'pro' }),
        {
          config: setup,
          id: externalId,
        },
      );
      const response = await fetched;
      return {
        status: response.status(),
        body: await response.json(),
        hook: async () => JSON.parse(await page.locator('#paywall[data-loading="false"]').innerText()),
      };
    };
    const before = await paywallOf('user-mei');
    expect(before).toMatchObject({ status: 200, body: { entitlements: [], customer: null, subscription: null } });
    expect((await before.hook()).check).toEqual({ allowed: false, reason: 'no_customer' });

    // The SDK's embedded checkout in its modal: card typed into the provider's card form.
    await startBundleCheckout(page, pro.id, {
      customerEmail: 'mei@example.com',
      customerName: 'Mei Lin',
      externalCustomerId: 'user-mei',
    });
    const cardNumber = page.locator('[data-sandbox-card-field="card_number"]');
    await cardNumber.waitFor();
    await cardNumber.fill('4242 4242 4242 4242');
    await page.locator('[data-sandbox-card-field="exp"]').fill('12/34');
    await page.locator('[data-sandbox-card-field="cvc"]').fill('123');
    await page.screenshot({ path: '/tmp/sdk-modal.png' });
    await page.locator('recur-payment-form button.recur-submit-button').click();
    const outcome = await outcomeOf(page);
    expect(outcome).toEqual({
      paid: expect.objectContaining({
        id: expect.stringMatching(/^sub_/),
        status: 'ACTIVE',
        productId: pro.id,
        amount: 299,
      }),
    });

    const subscriptions = await eventually(
      async () => {
        const customer = await server('/v1/customers/external/user-mei');
        expect(customer.subscriptions).toHaveLength(1);
        return customer.subscriptions;
      },
      30000,
      200,
    );
    expect(subscriptions[0]).toMatchObject({ id: outcome.paid.id, status: 'ACTIVE' });
    const after = await paywallOf('user-mei');
    expect(after).toMatchObject({
      status: 200,
      body: {
        entitlements: [{ product: 'pro', product_id: pro.id, status: 'active' }],
        customer: { id: expect.stringMatching(/^cus_/), external_id: 'user-mei' },
        subscription: null,
      },
    });
    const allowed = await eventually(
      async () => {
        const hook = await after.hook();
        expect(hook.check).toEqual({ allowed: true });
        return hook;
      },
      10000,
      100,
    );
    expect(allowed.entitlements).toEqual([{ product: 'pro', productId: pro.id, status: 'active' }]);
    await page.close();
  });

  it("completes a checkout in checkout.js's dialog, from the button a merchant pastes in", async () => {
    const page = await shopPage();
    await page.evaluate(
      ({ key, productId }) => {
        const w = window as any;
        w.events = [];
        for (const name of ['recur:success', 'recur:error', 'recur:close']) {
          window.addEventListener(name, (event: any) => w.events.push({ name, detail: event.detail }));
        }
        const button = document.createElement('a');
        button.className = 'recur-button';
        button.href = `${location.origin}/buy/${productId}`;
        button.dataset.key = key;
        button.dataset.email = 'lin@example.com';
        button.dataset.name = 'Lin Yu';
        button.textContent = 'Buy the tea box';
        document.body.appendChild(button);
      },
      { key: pk(), productId: (await server('/v1/products')).data.find((p: any) => p.slug === 'tea-box').id },
    );
    await page.addScriptTag({ url: '/vendor/checkout.js' });
    await page.evaluate((base) => (window as any).Recur.config({ apiUrl: base, embedUrl: `${base}/embed` }), api);
    await page.getByText('Buy the tea box').click();
    const frame = page.frameLocator('iframe.recur-checkout-dialog__iframe');
    await enterCard(frame, '4000 0000 0000 0002');
    await frame.getByRole('button', { name: /Pay/ }).click();
    await expect(frame.getByRole('alert')).toBeTruthy();
    await eventually(async () => expect(await frame.getByRole('alert').textContent()).toMatch(/declined/i), 10000, 200);
    await page.screenshot({ path: '/tmp/sdk-checkoutjs-declined.png' });

    await frame.locator('[data-sandbox-card-field="card_number"]').fill('4242 4242 4242 4242');
    await frame.getByRole('button', { name: /Pay/ }).click();
    const success = await recurSuccess(page);
    expect(success.detail).toMatchObject({ status: 'SUCCEEDED', amount: 480, orderId: expect.stringMatching(/^ord_/) });
    const errors = await page.evaluate(() => (window as any).events.filter((e: any) => e.name === 'recur:error'));
    expect(errors).toEqual([{ name: 'recur:error', detail: { message: expect.stringMatching(/declined/i) } }]);
    const checkout = await server(`/v1/checkouts/${success.detail.checkoutId}`);
    expect(checkout.checkout).toMatchObject({ status: 'SUCCEEDED', customer_email: 'lin@example.com', amount: 480 });
    await page.close();
  });
  it("shows a decline in the React checkout's card form in the buyer's language, then takes a coupon in its box and pays", async () => {
    const page = await shopPage('zh-TW');
    await page.addScriptTag({ url: '/vendor/paywall.js' });
    await page.evaluate((config) => (window as any).mountReactCheckout(config), { publishableKey: pk(), baseUrl: api });
    await page.waitForFunction(() => typeof (window as any).startReactCheckout === 'function');
    await page.evaluate(
      ({ productId }) => {
        const w = window as any;
        w.outcome = null;
        w.errors = [];
        void w.startReactCheckout({
          productId,
          customerEmail: 'hua@example.com',
          customerName: 'Hua Chen',
          onPaymentComplete: (result: unknown) => (w.outcome = { paid: result }),
          onError: (error: unknown) => w.errors.push(error),
          onPaymentFailed: (error: unknown) => void w.errors.push(error),
        });
      },
      { productId: await teaBoxId() },
    );
    await enterCard(page, '4000 0000 0000 0002');
    const submit = page.locator('recur-payment-form button.recur-submit-button');
    await submit.click();
    const shown = page.locator('recur-payment-form recur-error-display');
    await shown.waitFor({ state: 'attached' });
    // What its form would show (0.11 puts it where its shadow root has no slot), and what the page is told.
    expect(await shown.getAttribute('error')).toBe('您的卡片遭到拒絕。');
    expect(await page.evaluate(() => (window as any).errors)).toEqual([
      {
        code: 'PAYMENT_FAILED',
        message: '您的卡片遭到拒絕。',
        details: { failure_code: 'CARD_DECLINED', failure_message: '您的卡片遭到拒絕。', can_retry: true },
      },
    ]);
    expect(await page.evaluate(() => (window as any).outcome)).toBeNull();

    await page.locator('.recur-coupon__trigger').click();
    await page.locator('.recur-coupon__input').fill('NOPE99');
    await page.locator('.recur-coupon__btn--apply').click();
    await page.locator('.recur-coupon__error').waitFor();
    expect(await page.locator('.recur-coupon__error').textContent()).toMatch(/優惠碼|無法/);
    await page.locator('.recur-coupon__input').fill('launch10');
    await page.locator('.recur-coupon__input').press('Enter');
    await page.locator('.recur-coupon__applied-name').waitFor();
    expect(await page.locator('.recur-coupon__applied-name').textContent()).toBe('Launch 10%');
    expect(await page.locator('.recur-coupon__applied-code').textContent()).toBe('(LAUNCH10)');
    expect(await page.locator('.recur-order-summary__total').textContent()).toContain('NT$ 432');
    await page.screenshot({ path: '/tmp/sdk-react-coupon.png' });

    await enterCard(page, '4242 4242 4242 4242');
    const paying = page.waitForResponse((r) => r.url().endsWith('/pay'));
    await submit.click();
    // What was charged: the price less the code (the SDK reports the amount it was created with).
    expect((await (await paying).json()).charge).toMatchObject({ status: 'SUCCEEDED', amount: 432 });
    const outcome = await outcomeOf(page);
    expect(outcome).toEqual({ paid: expect.objectContaining({ status: 'SUCCEEDED' }) });
    const customer = await eventually(
      async () => {
        const found = await server('/v1/customers?email=hua%40example.com');
        expect(found.data).toHaveLength(1);
        return found.data[0];
      },
      20000,
      200,
    );
    expect(customer.email).toBe('hua@example.com');
    await page.close();
  });

  it("reports a decline to the browser bundle's onError with its reason (never as paid), then pays", async () => {
    const page = await shopPage();
    await page.addScriptTag({ url: '/vendor/recur.umd.js' });
    await startBundleCheckout(page, pro.id, { customerEmail: 'wen@example.com', customerName: 'Wen Lee' });
    await enterCard(page, '4000 0000 0000 0002');
    const submit = page.locator('recur-payment-form button.recur-submit-button');
    await submit.click();
    expect(await outcomeOf(page)).toEqual({ error: { code: 'PAYMENT_FAILED', message: 'Your card was declined.' } });

    await page.evaluate(() => ((window as any).outcome = null));
    await enterCard(page, '4242 4242 4242 4242');
    await submit.click();
    expect(await outcomeOf(page)).toEqual({
      paid: expect.objectContaining({ id: expect.stringMatching(/^sub_/), status: 'ACTIVE', amount: 299 }),
    });
    await page.close();
  });

  it("declines then pays in widget.js's dialog, from the script tag a merchant pastes in", async () => {
    const page = await shopPage('zh-TW');
    await page.evaluate(
      ({ key, productId, base }) => {
        const w = window as any;
        w.events = [];
        for (const name of ['recur:success', 'recur:error', 'recur:close']) {
          window.addEventListener(name, (event: any) => w.events.push({ name, detail: event.detail }));
        }
        const script = document.createElement('script');
        Object.assign(script.dataset, {
          key,
          product: productId,
          apiUrl: base,
          embedUrl: `${base}/embed`,
          text: '訂閱',
        });
        script.src = '/vendor/widget.js';
        document.body.appendChild(script);
      },
      { key: pk(), productId: await teaBoxId(), base: api },
    );
    await page.getByText('訂閱').click();
    const frame = page.frameLocator('iframe.recur-widget-dialog__iframe');
    await enterCard(frame, '4000 0000 0000 0002');
    // The widget names no buyer: the buyer types their own.
    await frame.getByLabel('電子郵件').fill('yu@example.com');
    await frame.getByLabel('姓名').fill('Yu Lin');
    await frame.getByRole('button', { name: /付款|Pay/ }).click();
    await eventually(async () => expect(await frame.getByRole('alert').textContent()).toMatch(/拒絕/), 10000, 200);
    await page.screenshot({ path: '/tmp/sdk-widget-declined.png' });
    await enterCard(frame, '4242 4242 4242 4242');
    await frame.getByRole('button', { name: /付款|Pay/ }).click();
    const success = await recurSuccess(page);
    expect(success.detail).toMatchObject({ status: 'SUCCEEDED', amount: 480 });
    await page.close();
  });
});
