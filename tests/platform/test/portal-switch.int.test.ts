import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';
import { type Receiver, startReceiver } from '../src/lifecycle-helpers';

jest.setTimeout(180_000);

/**
 * Switch plan in the portal (issue 15, part 3) over plain HTTP: the allowed plans, the live
 * preview before confirming, an upgrade charged at once, a downgrade scheduled and its
 * schedule canceled, all through plan switching's own functions.
 */
describe('switching plan in the customer portal', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;
  let pro: { id: string };
  let max: { id: string };
  let clock = Date.parse('2026-11-23T05:00:00.000Z');
  let receiver: Receiver;
  /** The types of the webhooks received about `id` (a subscription or a schedule), once `expected` are all there. */
  const webhooksAbout = (id: string, expected: string[]) =>
    eventually(async () => {
      const types = receiver.deliveries
        .filter((r) => r.body.data.object.id === id || r.body.data.object.subscription_id === id)
        .map((r) => r.body.type as string);
      expect(types).toEqual(expect.arrayContaining(expected));
      return types;
    });
  const DAY = 24 * 3600_000;

  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );
  const page = async (url: string) => {
    const response = await fetch(url, { redirect: 'manual' });
    return { status: response.status, html: await response.text() };
  };
  const submit = async (url: string, fields: Record<string, string>) => {
    const response = await fetch(url, { method: 'POST', body: new URLSearchParams(fields), redirect: 'manual' });
    return { status: response.status, location: response.headers.get('location'), html: await response.text() };
  };
  const csrfOf = (html: string) => /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;

  async function subscribe(email: string, slug: string, cardNumber = '4242424242424242') {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: slug,
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cancel',
      customer_email: email,
    });
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: cardNumber, exp: '12/34', cvc: '123' }),
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
  const portalFor = async (customerId: string) =>
    (await send('POST', '/portal/sessions', { customer_id: customerId, return_url: 'https://shop.example/account' }))
      .body as { id: string; url: string };

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      now: () => new Date(clock),
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    pro = (await client.createProduct(org.id, plan({ name: 'Pro plan', slug: 'pro', price: 299 }))).body;
    max = (await client.createProduct(org.id, plan({ name: 'Max plan', slug: 'max', price: 599 }))).body;
    const config = await client.admin('POST', `/organizations/${org.id}/portal_configurations`, {
      environment: 'SANDBOX',
      features: { subscription_update: { enabled: true, products: [pro.id, max.id] } },
    });
    expect(config.status).toBe(201);
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: receiver.url,
      events: ['subscription.updated', 'subscription_schedule.created', 'subscription_schedule.canceled'],
    });
    expect(endpoint.status).toBe(201);
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  it('shows the allowed plans, previews an upgrade (credit, charge, net, date) and charges it on confirming', async () => {
    const { customerId, subscriptionId } = await subscribe('up@example.com', 'pro');
    clock += 10 * DAY;
    const session = await portalFor(customerId);
    const main = await page(session.url);
    expect(main.html).toContain(`id="switch-${subscriptionId}"`);
    const choices = await page(`${session.url}/subscriptions/${subscriptionId}/switch`);
    expect(choices.html).toContain(`id="plan-${max.id}"`);
    expect(choices.html).not.toContain(`id="plan-${pro.id}"`);

    const preview = await page(`${session.url}/subscriptions/${subscriptionId}/switch/${max.id}`);
    expect(preview.status).toBe(200);
    const api = await send('GET', `/subscriptions/${subscriptionId}/switch-preview?target_product_id=${max.id}`);
    const { credit_amount, charge_amount, net_amount } = api.body.proration;
    expect(preview.html).toMatch(new RegExp(`id="preview-credit"><span>[^<]+</span><span>−NT\\$${credit_amount}<`));
    expect(preview.html).toMatch(new RegExp(`id="preview-charge"><span>[^<]+</span><span>NT\\$${charge_amount}<`));
    expect(preview.html).toMatch(new RegExp(`id="preview-net"><span>[^<]+</span><span>NT\\$${net_amount}<`));
    expect(preview.html).toContain('3 Dec 2026');

    const done = await submit(`${session.url}/subscriptions/${subscriptionId}/switch/${max.id}`, {
      csrf_token: csrfOf(preview.html),
    });
    expect(done.status).toBe(303);
    expect(done.location).toMatch(/notice=switched$/);
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.product.id).toBe(max.id);
    const invoices = (await send('GET', `/invoices?subscription_id=${subscriptionId}`)).body.data;
    expect(invoices[0]).toMatchObject({ status: 'paid', total: net_amount });
    await webhooksAbout(subscriptionId, ['subscription.updated']);
  });

  it('schedules a downgrade, shows it, and cancels the scheduled switch', async () => {
    const { customerId, subscriptionId } = await subscribe('down@example.com', 'max');
    const session = await portalFor(customerId);
    const preview = await page(`${session.url}/subscriptions/${subscriptionId}/switch/${pro.id}`);
    expect(preview.status).toBe(200);
    const done = await submit(`${session.url}/subscriptions/${subscriptionId}/switch/${pro.id}`, {
      csrf_token: csrfOf(preview.html),
    });
    expect(done.location).toMatch(/notice=scheduled$/);
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.product.id).toBe(max.id);
    const main = await page(`${platform.gatewayUrl}${done.location}`);
    expect(main.html).toContain('Switches to Pro plan on');
    expect(main.html).toContain(`id="cancel-schedule-${subscriptionId}"`);
    const canceled = await submit(`${session.url}/subscriptions/${subscriptionId}/schedule/cancel`, {
      csrf_token: csrfOf(main.html),
    });
    expect(canceled.location).toMatch(/notice=schedule_canceled$/);
    expect((await send('GET', `/subscriptions/${subscriptionId}/schedule`)).body.status).toBe('canceled');
    await webhooksAbout(subscriptionId, ['subscription_schedule.created', 'subscription_schedule.canceled']);
  });

  it('shows the preview again with the reason when the card declines the switch, and changes nothing', async () => {
    const { customerId, subscriptionId } = await subscribe('declined@example.com', 'pro', '4000000000000341');
    const session = await portalFor(customerId);
    const preview = await page(`${session.url}/subscriptions/${subscriptionId}/switch/${max.id}`);
    const refused = await submit(`${session.url}/subscriptions/${subscriptionId}/switch/${max.id}`, {
      csrf_token: csrfOf(preview.html),
    });
    expect(refused.status).toBe(402);
    expect(refused.html).toContain('Your card was declined');
    expect(refused.html).toContain('id="switch-preview"');
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.product.id).toBe(pro.id);
  });

  it('refuses a product the configuration does not allow, and a forged form', async () => {
    const other = await clientOf(platform.gatewayUrl).createProduct(
      org.id,
      plan({ name: 'Other', slug: 'other', price: 99 }),
    );
    const { customerId, subscriptionId } = await subscribe('refused@example.com', 'pro');
    const session = await portalFor(customerId);
    expect((await page(`${session.url}/subscriptions/${subscriptionId}/switch/${other.body.id}`)).status).toBe(404);
    const forged = await submit(`${session.url}/subscriptions/${subscriptionId}/switch/${max.id}`, { csrf_token: 'x' });
    expect(forged.status).toBe(403);
    expect((await send('GET', `/subscriptions/${subscriptionId}`)).body.product.id).toBe(pro.id);
  });
});
