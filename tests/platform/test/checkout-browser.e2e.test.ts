import { type Shop, describeWithBrowser, fillAndPay, openShop } from '../src/browser';

jest.setTimeout(90000);

describeWithBrowser('a buyer in a real browser', () => {
  let shop: Shop;
  let platform: Shop['platform'];
  let org: Shop['org'];
  let browser: Shop['browser'];
  let merchant: Shop['merchant'];

  beforeAll(async () => {
    shop = await openShop();
    ({ platform, org, browser, merchant } = shop);
  });
  afterAll(() => shop?.close());

  async function newSession() {
    const response = await fetch(`${platform.gatewayUrl}/v1/checkout/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.api_keys.sandbox.publishable_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        product_slug: 'pro',
        success_url: `${merchant.url}/thanks?session_id={CHECKOUT_SESSION_ID}`,
        cancel_url: `${merchant.url}/cancel`,
      }),
    });
    const body = (await response.json()) as { id: string; url: string };
    expect({ status: response.status, body }).toMatchObject({ status: 201 });
    return body;
  }

  async function payWith(cardNumber: string, sessionUrl: string) {
    const page = await browser.newPage();
    await page.goto(sessionUrl);
    await fillAndPay(page, cardNumber);
    await page.waitForLoadState('load');
    return page;
  }

  it('pays with the success card and lands on the success URL with the session id', async () => {
    const session = await newSession();
    const page = await payWith('4242 4242 4242 4242', session.url);
    await page.waitForURL(`${merchant.url}/thanks?session_id=${session.id}`);
    expect(await page.locator('#landed').textContent()).toBe('Thanks');
    const read = await fetch(`${platform.gatewayUrl}/v1/checkout/sessions/${session.id}`, {
      headers: { authorization: `Bearer ${org.api_keys.sandbox.secret_key}` },
    });
    expect(await read.json()).toMatchObject({ status: 'COMPLETE', customer_email: 'buyer@example.com' });
    await page.close();
  });

  it('shows the reason of a declined card and keeps the session open', async () => {
    const session = await newSession();
    const page = await payWith('4000000000000002', session.url);
    expect(await page.getByRole('alert').textContent()).toMatch(/declined/i);
    expect(page.url()).toBe(session.url);
    const read = await fetch(`${platform.gatewayUrl}/v1/checkout/sessions/${session.id}`, {
      headers: { authorization: `Bearer ${org.api_keys.sandbox.secret_key}` },
    });
    expect(((await read.json()) as { status: string }).status).toBe('OPEN');
    await page.close();
  });
});
