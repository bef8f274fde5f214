import { type Shop, describeWithBrowser, fillAndPay, openShop } from '../src/browser';

jest.setTimeout(90000);

describeWithBrowser('a buyer from a payment link', () => {
  let shop: Shop;
  let platform: Shop['platform'];
  let org: Shop['org'];
  let browser: Shop['browser'];
  let merchant: Shop['merchant'];
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${platform.gatewayUrl}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${org.api_keys.sandbox.secret_key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));

  beforeAll(async () => {
    shop = await openShop();
    ({ platform, org, browser, merchant } = shop);
  });
  afterAll(() => shop?.close());

  it('opens the link, pays with the success card and lands on the success URL with the session id', async () => {
    const link = await api('POST', '/payment-links', {
      productSlug: 'pro',
      successUrl: `${merchant.url}/thanks?session_id={CHECKOUT_SESSION_ID}`,
    });
    expect(link.status).toBe(201);

    const page = await browser.newPage();
    await page.goto(`${link.body.url}?email=buyer%40example.com&ref=newsletter&utm_source=mail`);
    expect(page.url()).toMatch(new RegExp(`^${platform.gatewayUrl}/checkout/cs_`));
    const sessionId = page.url().split('/').pop()!;
    expect(await page.getByLabel('Email').inputValue()).toBe('buyer@example.com');
    await fillAndPay(page, '4242 4242 4242 4242');
    await page.waitForURL(`${merchant.url}/thanks?session_id=${sessionId}`);
    expect(await page.locator('#landed').textContent()).toBe('Thanks');
    await page.close();

    const after = await api('GET', `/payment-links/${link.body.id}`);
    expect(after.body).toMatchObject({ view_count: 1, session_count: 1, completed_count: 1 });
    expect((await api('GET', `/checkout/sessions/${sessionId}`)).body).toMatchObject({ status: 'COMPLETE' });
  });

  it('shows an error page for a link that is no longer active', async () => {
    const link = await api('POST', '/payment-links', { productSlug: 'pro' });
    expect((await api('DELETE', `/payment-links/${link.body.id}`)).body).toEqual({ id: link.body.id, deleted: true });
    const page = await browser.newPage();
    const response = await page.goto(link.body.url);
    expect(response?.status()).toBe(410);
    await page.close();
  });
});
