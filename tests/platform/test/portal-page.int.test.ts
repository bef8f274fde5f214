import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';
import { type Receiver, startReceiver } from '../src/lifecycle-helpers';

jest.setTimeout(180_000);

/**
 * The portal page through the gateway over plain HTTP, as a browser without JavaScript uses
 * it (issue 15, parts 3 and 4): what it shows, its forms' CSRF token, expiry, the receipts,
 * cancel and resume with the same webhooks as the API.
 */
describe('the customer portal page through the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;
  let client: ReturnType<typeof clientOf>;
  let receiver: Receiver;
  let clock = Date.parse('2026-11-23T05:00:00.000Z');
  const RETURN = 'https://shop.example/account';

  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );
  const slow = <T>(check: () => Promise<T>) => eventually(check, 30_000, 100);

  /** A paid monthly plan; returns the customer and subscription ids. */
  async function subscribe(email: string) {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cancel',
      customer_email: email,
    });
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    return slow(async () => {
      const read = await send('GET', `/checkout/sessions/${session.body.id}`);
      const found = await send('GET', `/subscriptions/${read.body.subscription_id}`);
      expect(found.status).toBe(200);
      const invoices = await send('GET', `/invoices?subscription_id=${found.body.id}`);
      expect(invoices.body.data).toHaveLength(1);
      return { customerId: found.body.customer_id as string, subscriptionId: found.body.id as string };
    });
  }

  const openSession = async (customerId: string, extra: Record<string, unknown> = {}) => {
    const created = await send('POST', '/portal/sessions', { customer_id: customerId, return_url: RETURN, ...extra });
    expect(created.status).toBe(201);
    return created.body as { id: string; url: string };
  };
  const page = async (url: string, headers: Record<string, string> = {}) => {
    const response = await fetch(url, { headers, redirect: 'manual' });
    return { status: response.status, headers: response.headers, html: await response.text() };
  };
  const submit = async (url: string, fields: Record<string, string>) => {
    const response = await fetch(url, { method: 'POST', body: new URLSearchParams(fields), redirect: 'manual' });
    return { status: response.status, location: response.headers.get('location'), html: await response.text() };
  };
  const csrfOf = (html: string) => /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      now: () => new Date(clock),
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    await client.createProduct(org.id, plan({ slug: 'pro', name: 'Pro', price: 299 }));
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: receiver.url,
      events: ['subscription.updated', 'subscription.canceled'],
    });
    expect(endpoint.status).toBe(201);
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  it('shows the subscription, the card and the invoices, and records the first access', async () => {
    const { customerId, subscriptionId } = await subscribe('page@example.com');
    const session = await openSession(customerId);
    clock += 5 * 60_000;
    const shown = await page(session.url);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('cache-control')).toBe('no-store');
    expect(shown.html).toContain('<html lang="en">');
    expect(shown.html).toContain('page@example.com');
    expect(shown.html).toContain(`id="subscription-${subscriptionId}"`);
    expect(shown.html).toContain('NT$299');
    expect(shown.html).toContain('per month');
    expect(shown.html).toMatch(/Next payment<\/dt><dd>NT\$299 on 23 Dec 2026/);
    expect(shown.html).toContain('Visa ending in 4242');
    expect(shown.html).toContain('INV-000001');
    expect(shown.html).toContain(`href="${RETURN}"`);
    expect(shown.html).not.toContain('<script');
    const read = await send('GET', `/portal/sessions/${session.id}`);
    expect(read.body.accessed_at).toBe('2026-11-23T05:05:00.000Z');
    // No configuration names the business: the header names the organization (billing's replica of it).
    await eventually(async () => expect((await page(session.url)).html).toContain('<strong>Acme</strong>'));
  });

  it('prints a receipt of a paid invoice, and nothing of another customer’s', async () => {
    const mine = await subscribe('receipt@example.com');
    const theirs = await subscribe('other@example.com');
    const session = await openSession(mine.customerId);
    const [invoice] = (await send('GET', `/invoices?customer_id=${mine.customerId}`)).body.data;
    const [other] = (await send('GET', `/invoices?customer_id=${theirs.customerId}`)).body.data;
    const receipt = await page(`${session.url}/invoices/${invoice.id}`);
    expect(receipt.status).toBe(200);
    expect(receipt.html).toContain(`Receipt ${invoice.number}`);
    expect(receipt.html).toMatch(/id="amount-paid">NT\$299/);
    expect((await page(`${session.url}/invoices/${other.id}`)).status).toBe(404);
  });

  it('cancels at period end and resumes, sending the same webhooks as the API', async () => {
    const { customerId, subscriptionId } = await subscribe('cancel@example.com');
    const session = await openSession(customerId);
    const confirm = await page(`${session.url}/subscriptions/${subscriptionId}/cancel`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('stays active until 23 Dec 2026');
    const csrf = csrfOf(confirm.html);

    const forged = await submit(`${session.url}/subscriptions/${subscriptionId}/cancel`, { csrf_token: 'forged' });
    expect(forged.status).toBe(403);
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.cancel_at_period_end).toBe(false);

    const canceled = await submit(`${session.url}/subscriptions/${subscriptionId}/cancel`, { csrf_token: csrf });
    expect(canceled.status).toBe(303);
    expect(canceled.location).toMatch(/\?notice=canceling$/);
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body).toMatchObject({
      status: 'ACTIVE',
      cancel_at_period_end: true,
    });
    const after = await page(`${platform.gatewayUrl}${canceled.location}`);
    expect(after.html).toContain('Your subscription will end on 23 Dec 2026.');
    expect(after.html).toContain(`id="resume-${subscriptionId}"`);

    // Webhook event ids hash the resource's updated_at: a change in the same instant would be a duplicate.
    clock += 60_000;
    const resumed = await submit(`${session.url}/subscriptions/${subscriptionId}/resume`, { csrf_token: csrf });
    expect(resumed.location).toMatch(/\?notice=resumed$/);
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.cancel_at_period_end).toBe(false);

    const updates = await slow(async () => {
      const found = receiver.deliveries.filter(
        (r) => r.body.type === 'subscription.updated' && r.body.data.object.id === subscriptionId,
      );
      expect(found).toHaveLength(2);
      return found.map((r) => r.body.data.object.cancel_at_period_end);
    });
    expect(updates.sort()).toEqual([false, true]);
  });

  it('cancels at once only when the configuration says so, with subscription.canceled', async () => {
    const config = await client.admin('POST', `/organizations/${org.id}/portal_configurations`, {
      environment: 'SANDBOX',
      is_default: false,
      business_profile: { name: 'Acme Cloud' },
      features: { cancel: { mode: 'immediately' }, invoice_history: { enabled: false } },
    });
    const { customerId, subscriptionId } = await subscribe('now@example.com');
    const session = await openSession(customerId, { configuration_id: config.body.id });
    const main = await page(session.url);
    expect(main.html).toContain('Acme Cloud');
    expect(main.html).not.toContain('id="invoices"');
    const confirm = await page(`${session.url}/subscriptions/${subscriptionId}/cancel`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('ends now');
    const done = await submit(`${session.url}/subscriptions/${subscriptionId}/cancel`, {
      csrf_token: csrfOf(confirm.html),
    });
    expect(done.location).toMatch(/\?notice=canceled$/);
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.status).toBe('CANCELED');
    await slow(async () =>
      expect(
        receiver.deliveries.some(
          (r) => r.body.type === 'subscription.canceled' && r.body.data.object.id === subscriptionId,
        ),
      ).toBe(true),
    );

    const noCancel = await client.admin('POST', `/organizations/${org.id}/portal_configurations`, {
      environment: 'SANDBOX',
      features: { cancel: { enabled: false } },
    });
    const other = await subscribe('keep@example.com');
    const locked = await openSession(other.customerId, { configuration_id: noCancel.body.id });
    const lockedPage = await page(locked.url);
    expect(lockedPage.html).not.toContain(`id="cancel-${other.subscriptionId}"`);
    expect((await page(`${locked.url}/subscriptions/${other.subscriptionId}/cancel`)).status).toBe(404);
    expect((await send('GET', `/subscriptions/${other.subscriptionId}`)).body.cancel_at_period_end).toBe(false);
  });

  it('speaks zh-TW from the session’s locale or the browser’s Accept-Language', async () => {
    const { customerId } = await subscribe('zh@example.com');
    const byLocale = await openSession(customerId, { locale: 'zh-TW' });
    const zh = await page(byLocale.url);
    expect(zh.html).toContain('<html lang="zh-TW">');
    expect(zh.html).toContain('管理您的訂閱');
    expect(zh.html).toContain('每月');
    expect(zh.html).toContain('2026年12月23日');
    const byBrowser = await openSession(customerId);
    expect((await page(byBrowser.url, { 'accept-language': 'zh-TW,zh;q=0.9,en;q=0.8' })).html).toContain(
      '管理您的訂閱',
    );
    expect((await page(byBrowser.url, { 'accept-language': 'en-US,zh;q=0.5' })).html).toContain(
      'Manage your subscription',
    );
  });

  it('answers hostile forms and paths without a server error and without a change', async () => {
    const { customerId, subscriptionId } = await subscribe('hostile@example.com');
    const session = await openSession(customerId);
    const csrf = csrfOf((await page(`${session.url}/subscriptions/${subscriptionId}/cancel`)).html);
    const post = (path: string, body: string) =>
      fetch(`${session.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
        redirect: 'manual',
      }).then((r) => r.status);
    const statuses = [
      await post(`/subscriptions/${subscriptionId}/cancel`, `csrf_token=${csrf}&csrf_token=${csrf}`),
      await post(`/subscriptions/${subscriptionId}/cancel`, `csrf_token=${'x'.repeat(20_000)}`),
      await post('/payment_method', `csrf_token=${csrf}&card_number=4242%00&exp=12%2F34&cvc=123`),
      await post('/payment_method', `csrf_token=${csrf}&card_number=%FF%FE&exp=&cvc=`),
      await post('/subscriptions/sub_other/cancel', `csrf_token=${csrf}`),
      await post(`/subscriptions/${subscriptionId}/switch/..%2F..%2Fx`, `csrf_token=${csrf}`),
      (await page(`${session.url}/invoices/%00`)).status,
      (await page(`${session.url}/nothing-here`)).status,
    ];
    for (const status of statuses) expect(status).toBeLessThan(500);
    expect(statuses.slice(0, 2)).toEqual([403, 413]);
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.cancel_at_period_end).toBe(false);
  });

  it('refuses a wrong token, and after an hour shows the expired page with the link back and refuses actions', async () => {
    const { customerId, subscriptionId } = await subscribe('expire@example.com');
    const session = await openSession(customerId);
    expect((await page(`${session.url}x`)).status).toBe(404);
    expect((await page(`${platform.gatewayUrl}/portal/${session.id}/${'A'.repeat(43)}`)).status).toBe(404);
    const csrf = csrfOf((await page(`${session.url}/subscriptions/${subscriptionId}/cancel`)).html);
    clock += 60 * 60_000;
    const expired = await page(session.url);
    expect(expired.status).toBe(410);
    expect(expired.html).toContain('This link has expired');
    expect(expired.html).toContain(`href="${RETURN}"`);
    const refused = await submit(`${session.url}/subscriptions/${subscriptionId}/cancel`, { csrf_token: csrf });
    expect(refused.status).toBe(410);
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.cancel_at_period_end).toBe(false);
  });
});
