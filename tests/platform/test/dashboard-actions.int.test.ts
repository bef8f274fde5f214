import { eventually } from '@billing/testing';
import { type DashboardAgent, createUser, signedIn } from '../src/dashboard-helpers';
import { type Receiver, lifecycleOrganization, startLifecyclePlatform, startReceiver } from '../src/lifecycle-helpers';
import { type Platform, plan } from '../src/platform';

jest.setTimeout(90000);

/**
 * Issue 19, item 4: what the dashboard's pages do, each checked through the public or admin API
 * afterwards: products, codes, links, subscriptions (switch with preview, cancel, resume,
 * refund), webhook endpoints (roll, edit, delete), settings, test clocks.
 */
describe('merchant dashboard actions', () => {
  let platform: Platform;
  let receiver: Receiver;
  let shop: Awaited<ReturnType<typeof lifecycleOrganization>>;
  let owner: DashboardAgent;
  let base: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startLifecyclePlatform();
    shop = await lifecycleOrganization(platform, receiver);
    await shop.client.createProduct(shop.org.id, plan({ name: 'Max', slug: 'max', price: 599 }));
    await createUser(platform.gatewayUrl, shop.org.id, 'owner@shop.example', 'owner', 'correct horse battery');
    owner = await signedIn(platform.gatewayUrl, 'owner@shop.example', 'correct horse battery');
    base = `/dashboard/${shop.org.id}/sandbox`;
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  const noticeOf = async (reply: { status: number; location: string | null }) => {
    expect(reply.status).toBe(303);
    return (await owner.get(reply.location!)).html;
  };

  it('cancels a metered plan now and bills its usage on a final invoice at once (invoice_now)', async () => {
    expect((await shop.send('POST', '/meters', { key: 'calls', name: 'API calls', aggregation: 'sum' })).status).toBe(
      201,
    );
    const metered = plan({
      name: 'Metered',
      slug: 'metered',
      price: 99,
      metered_prices: [{ meter: 'calls', unit_amount: 2 }],
    });
    expect((await shop.client.createProduct(shop.org.id, metered)).status).toBe(201);
    const { subscription } = await shop.subscribe('metered@shop.example', '4242424242424242', {
      product_slug: 'metered',
    });
    const reported = await shop.send('POST', '/usage_events', {
      events: [{ id: 'd-1', customer_id: subscription.customer_id, meter: 'calls', quantity: 21 }],
    });
    expect(reported.body.stored).toBe(1);
    const path = `${base}/subscriptions/${subscription.id}`;
    expect((await owner.get(path)).html).toContain('Cancel now and bill usage');
    expect(
      (
        await owner.get(
          `${base}/subscriptions/${(await shop.subscribe('flat@shop.example', '4242424242424242')).subscription.id}`,
        )
      ).html,
    ).not.toContain('Cancel now and bill usage');

    await owner.submit(path, { _action: 'cancel', at_period_end: 'false', invoice_now: 'true' });
    expect((await shop.send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('CANCELED');
    const usage = (await shop.invoicesOf(subscription.id)).filter((i: { lines: { kind: string }[] }) =>
      i.lines.some((line) => line.kind === 'usage'),
    );
    expect(usage).toEqual([expect.objectContaining({ amount_due: 42 })]);
  });

  it('previews and performs a plan switch, cancels, resumes and refunds', async () => {
    const { subscription } = await shop.subscribe('buyer@shop.example', '4242424242424242');
    const max = (await shop.send('GET', '/products/by-slug/max')).body;
    const path = `${base}/subscriptions/${subscription.id}`;
    const preview = await owner.get(`${path}?target_product_id=${max.id}`);
    expect(preview.html).toContain('Switch preview');
    expect(preview.html).toContain('Switch to Max');
    expect(await noticeOf(await owner.submit(path, { _action: 'switch', target_product_id: max.id }))).toContain(
      'Plan switched',
    );
    expect((await shop.send('GET', `/subscriptions/${subscription.id}`)).body.product.id).toBe(max.id);

    await owner.submit(path, { _action: 'cancel', at_period_end: 'true' });
    expect((await shop.send('GET', `/subscriptions/${subscription.id}`)).body.cancel_at_period_end).toBe(true);
    await owner.submit(path, { _action: 'resume' });
    expect((await shop.send('GET', `/subscriptions/${subscription.id}`)).body.cancel_at_period_end).toBe(false);

    expect((await owner.get(`${base}/subscriptions?status=ACTIVE`)).html).toContain(subscription.id);
    expect((await owner.get(`${base}/subscriptions?status=CANCELED`)).html).not.toContain(subscription.id);
    // The first invoice's unused time paid for the switch (its amount_credited): refund the switch's invoice.
    const [first, invoice] = await shop.invoicesOf(subscription.id);
    expect(first.amount_credited).toBeGreaterThan(0);
    const refunded = await owner.submit(`${base}/invoices/${invoice.id}`, { _action: 'refund', amount: '100' });
    expect(await noticeOf(refunded)).toContain('Refund issued');
    // Checkout issues the refund; billing's invoice learns of it from checkout's event, a moment later.
    await eventually(async () =>
      expect((await shop.send('GET', `/invoices/${invoice.id}`)).body.amount_refunded).toBe(100),
    );
    const tooMuch = await owner.submit(`${base}/invoices/${invoice.id}`, { _action: 'refund', amount: '100000' });
    expect(tooMuch.status).toBeGreaterThanOrEqual(400);
    expect(tooMuch.html).toMatch(/<p class="error" role="alert" id="error-refund">/);
  });

  it("sets a credits product's grant, and grants and takes back a customer's credits", async () => {
    const created = await owner.submit(`${base}/products`, {
      _action: 'create',
      name: 'Credit pack',
      type: 'CREDITS',
      price: '300',
      credit_amount: '500',
      credit_expires_after_days: '30',
    });
    const product = (await shop.send('GET', `/products/${created.location!.split('/').pop()}`)).body;
    expect(product.credits).toEqual({ amount: 500, expires_after_days: 30 });
    expect((await owner.get(`${base}/products/${product.id}`)).html).toContain('500 credits, for 30 days');

    const { subscription } = await shop.subscribe('credits@shop.example', '4242424242424242');
    const path = `${base}/customers/${subscription.customer_id}`;
    const granted = await owner.submit(path, { _action: 'grant_credits', amount: '120', reason: 'Outage' });
    expect(await noticeOf(granted)).toContain('120 credits granted.');
    const tooMuch = await owner.submit(path, { _action: 'take_back_credits', amount: '121', reason: 'Oops' });
    expect(tooMuch.status).toBeGreaterThanOrEqual(400);
    expect(tooMuch.html).toContain('The balance is 120 credits; 121 cannot be taken</p>');
    expect(
      await noticeOf(await owner.submit(path, { _action: 'take_back_credits', amount: '20', reason: 'Oops' })),
    ).toContain('20 credits taken back.');
    const credits = (await shop.send('GET', `/customers/${subscription.customer_id}/credits`)).body;
    expect(credits.balance).toBe(100);
    const page = (await owner.get(path)).html;
    expect(page).toContain('Balance: 100 credits');
    expect(page).toContain('Outage');
    const invalid = await owner.submit(path, { _action: 'grant_credits', amount: '0', reason: 'Zero' });
    expect(invalid.html).toMatch(/<p class="error" role="alert" id="error-grant_credits">/);
  });

  it('edits, archives and restores a product; deactivates a link, a code and a coupon', async () => {
    const pro = (await shop.send('GET', '/products/by-slug/pro')).body;
    await owner.submit(`${base}/products/${pro.id}`, {
      _action: 'update',
      name: 'Pro plan',
      price: '349',
      description: 'Everything',
    });
    expect((await shop.send('GET', `/products/${pro.id}`)).body).toMatchObject({ name: 'Pro plan', price: 349 });
    await owner.submit(`${base}/products`, { _action: 'archive', product_id: pro.id });
    expect((await owner.get(`${base}/products?status=archived`)).html).toContain('Pro plan');
    await owner.submit(`${base}/products`, { _action: 'restore', product_id: pro.id });
    expect((await shop.send('GET', `/products/${pro.id}`)).body.active).toBe(true);

    await owner.submit(`${base}/coupons`, {
      _action: 'create-coupon',
      name: 'Half',
      discount_type: 'PERCENTAGE',
      discount_amount: '50',
      duration: 'once',
    });
    const coupon = (await shop.send('GET', '/coupons')).body.data.find((c: { name: string }) => c.name === 'Half');
    await owner.submit(`${base}/coupons`, { _action: 'create-code', coupon_id: coupon.id, code: 'half50' });
    const code = (await shop.send('GET', '/promotion-codes')).body.data.promotion_codes[0];
    expect(code).toMatchObject({ code: 'HALF50', active: true });
    await owner.submit(`${base}/coupons`, { _action: 'deactivate-code', code_id: code.id });
    await owner.submit(`${base}/coupons`, { _action: 'deactivate-coupon', coupon_id: coupon.id });
    expect((await shop.send('GET', `/promotion-codes/${code.id}`)).body.data.active).toBe(false);
    expect((await shop.send('GET', `/coupons/${coupon.id}`)).body.active).toBe(false);

    await owner.submit(`${base}/payment-links`, { _action: 'create', product_id: pro.id });
    const link = (await shop.send('GET', '/payment-links')).body.data[0];
    expect((await owner.get(`${base}/payment-links`)).html).toContain(link.url);
    await owner.submit(`${base}/payment-links`, { _action: 'deactivate', link_id: link.id });
    expect((await shop.send('GET', `/payment-links/${link.id}`)).body.active).toBe(false);
  });

  it('rolls a webhook secret once visibly, edits and deletes the endpoint', async () => {
    const endpoints = await shop.client.admin(
      'GET',
      `/organizations/${shop.org.id}/webhook_endpoints?environment=SANDBOX`,
    );
    const endpoint = endpoints.body.data[0];
    const before = (await shop.client.admin('GET', `/organizations/${shop.org.id}/webhook_endpoints/${endpoint.id}`))
      .body.secret;
    const path = `${base}/webhooks/${endpoint.id}`;
    const rolled = await owner.submit(path, { _action: 'roll' });
    const secret = /<code>(whsec_[^<]+)<\/code>/.exec(rolled.html)![1];
    expect(secret).not.toBe(before);
    expect(
      (await shop.client.admin('GET', `/organizations/${shop.org.id}/webhook_endpoints/${endpoint.id}`)).body.secret,
    ).toBe(secret);
    expect((await owner.get(path)).html).not.toContain(secret);

    await owner.submit(path, { _action: 'update', url: endpoint.url, 'event:invoice.paid': 'on' });
    const changed = (await shop.client.admin('GET', `/organizations/${shop.org.id}/webhook_endpoints/${endpoint.id}`))
      .body;
    expect(changed).toMatchObject({ events: ['invoice.paid'], is_active: false });
    expect((await owner.submit(path, { _action: 'delete' })).location).toBe(`${base}/webhooks`);
    expect((await owner.get(path)).status).toBe(404);
  });

  it('saves billing settings, branding and the portal, refusing bad input in place', async () => {
    const path = `${base}/settings`;
    await owner.submit(path, {
      _action: 'billing',
      retry_days: '2, 4',
      after_final_failure: 'past_due',
      upgrade: 'prorate_now',
      downgrade: 'now_with_credit',
    });
    const settings = await shop.client.admin(
      'GET',
      `/organizations/${shop.org.id}/billing_settings?environment=sandbox`,
    );
    expect(settings.body).toMatchObject({
      dunning: { retry_days: [2, 4], after_final_failure: 'past_due' },
      proration: { downgrade: 'now_with_credit' },
    });
    const bad = await owner.submit(path, {
      _action: 'billing',
      retry_days: '5, 3',
      after_final_failure: 'cancel',
      upgrade: 'prorate_now',
      downgrade: 'at_period_end',
    });
    expect(bad.status).toBe(422);
    expect(bad.html).toMatch(/id="error-billing">[^<]*retry_days/);
    expect(
      (await shop.client.admin('GET', `/organizations/${shop.org.id}/billing_settings?environment=sandbox`)).body
        .dunning.retry_days,
    ).toEqual([2, 4]);

    await owner.submit(path, {
      _action: 'branding',
      name: 'Shop',
      brand_color: '#0A7D5A',
      logo_url: '',
      website_url: 'https://shop.example',
      allowed_origins: 'https://shop.example',
    });
    expect((await shop.client.admin('GET', `/organizations/${shop.org.id}`)).body).toMatchObject({
      brand_color: '#0a7d5a',
      allowed_origins: ['https://shop.example'],
    });

    await owner.submit(path, {
      _action: 'portal',
      default_return_url: 'https://shop.example/account',
      business_name: 'Shop',
      invoice_history: 'on',
      cancel: 'on',
      cancel_mode: 'immediately',
    });
    const portals = await shop.client.admin(
      'GET',
      `/organizations/${shop.org.id}/portal_configurations?environment=SANDBOX`,
    );
    expect(portals.body.data[0]).toMatchObject({
      default_return_url: 'https://shop.example/account',
      features: { cancel: { enabled: true, mode: 'immediately' }, payment_method_update: { enabled: false } },
    });
  });

  it('sets the payment processor per environment: ECPay keys never shown again, bad input refused in place, members refused', async () => {
    const production = `/dashboard/${shop.org.id}/production/settings`;
    const processorOf = async (environment: string) =>
      (await shop.client.admin('GET', `/organizations/${shop.org.id}/payment_processor?environment=${environment}`))
        .body;
    expect((await owner.get(production)).html).toContain('Production refuses every payment until a processor is set');
    const keys = { hash_key: 'pwFHCqoQZGmho4w6', hash_iv: 'EkRm7iFT261dpevs' };
    const saved = await owner.submit(production, {
      _action: 'payments',
      processor: 'ecpay',
      merchant_id: '3002607',
      ...keys,
      method_card: 'on',
      method_atm: 'on',
    });
    const page = await noticeOf(saved);
    expect(page).toContain('ECPay settings saved');
    expect(page).toContain('ECPay, merchant 3002607');
    expect(page).not.toContain(keys.hash_key);
    expect(await processorOf('production')).toMatchObject({
      processor: 'ecpay',
      methods: ['card', 'atm'],
      credentials_set: true,
    });

    const bad = await owner.submit(production, {
      _action: 'payments',
      processor: 'ecpay',
      merchant_id: '3002607',
      hash_key: 'short',
      hash_iv: keys.hash_iv,
      method_card: 'on',
    });
    expect(bad.status).toBe(422);
    expect(bad.html).toMatch(/id="error-payments">[^<]*hash_key/);
    expect(bad.html).not.toContain(keys.hash_iv);
    expect(await processorOf('production')).toMatchObject({ methods: ['card', 'atm'] });

    await createUser(platform.gatewayUrl, shop.org.id, 'member@shop.example', 'member', 'correct horse battery');
    const member = await signedIn(platform.gatewayUrl, 'member@shop.example', 'correct horse battery');
    expect((await member.get(production)).html).toContain('Only an owner can change the payment processor');
    const refused = await member.submit(production, { _action: 'removePayments' });
    expect(refused.status).toBe(403);
    expect(await processorOf('production')).toMatchObject({ processor: 'ecpay' });
    // Dunning and proration too: read, not changed, by a member.
    const billingOf = async () =>
      (await shop.client.admin('GET', `/organizations/${shop.org.id}/billing_settings?environment=production`)).body;
    const settings = (await member.get(production)).html;
    expect(settings).toContain('Only an owner can change the dunning and proration settings.');
    expect(settings).toMatch(/<dt>When the last retry fails<\/dt>\s*<dd>Cancel the subscription<\/dd>/);
    expect(settings).not.toContain('name="retry_days"');
    const billing = {
      retry_days: '1',
      after_final_failure: 'past_due',
      upgrade: 'prorate_now',
      downgrade: 'at_period_end',
    };
    expect((await member.submit(production, { _action: 'billing', ...billing })).status).toBe(403);
    expect((await billingOf()).dunning).toEqual({ retry_days: [3, 5, 7], after_final_failure: 'cancel' });
    // The branding (the Publishable Key's origins among it) and the portal too: their fields
    // shown disabled, no save button, and the actions refused.
    expect(settings).toContain('Only an owner can change the branding.');
    expect(settings).toContain('Only an owner can change the customer portal.');
    expect(settings.match(/<fieldset class="bare" disabled>/g)).toHaveLength(2);
    expect(settings).not.toContain('Save branding');
    const organizationBefore = (await shop.client.admin('GET', `/organizations/${shop.org.id}`)).body;
    const widened = await member.submit(production, { _action: 'branding', name: 'Mine', allowed_origins: '' });
    expect(widened.status).toBe(403);
    expect((await shop.client.admin('GET', `/organizations/${shop.org.id}`)).body).toMatchObject({
      name: organizationBefore.name,
      allowed_origins: organizationBefore.allowed_origins,
    });
    expect(
      (await member.submit(production, { _action: 'portal', cancel: 'on', cancel_mode: 'immediately' })).status,
    ).toBe(403);
    expect((await owner.get(production)).html).not.toMatch(/<fieldset class="bare" disabled>/);

    const payuniKeys = { hash_key: '12345678901234567890123456789012', hash_iv: '1234567890123456' };
    const payuni = await noticeOf(
      await owner.submit(production, {
        _action: 'payments',
        processor: 'payuni',
        merchant_id: 'S01234567',
        ...payuniKeys,
        method_atm: 'on',
      }),
    );
    expect(payuni).toContain('PAYUNi settings saved');
    expect(payuni).toContain('PAYUNi, merchant S01234567');
    expect(payuni).not.toContain(payuniKeys.hash_key);
    expect(await processorOf('production')).toMatchObject({ processor: 'payuni', methods: ['card', 'atm'] });

    await noticeOf(await owner.submit(production, { _action: 'removePayments' }));
    expect(await processorOf('production')).toMatchObject({ processor: 'none' });
    expect((await owner.get(`${base}/settings`)).html).toContain('The sandbox simulator (test cards).');
  });

  it('creates and advances a test clock and shows what ran on it; Production has no clocks', async () => {
    const created = await owner.submit(`${base}/test-clocks`, {
      _action: 'create',
      name: 'January',
      frozen_time: '2026-01-31T10:00',
    });
    const clockPath = created.location!;
    const clockId = clockPath.split('/').pop()!;
    await shop.subscribe('clocked@shop.example', '4242424242424242', { test_clock: clockId });
    await owner.submit(clockPath, { _action: 'advance', frozen_time: '2026-03-01T10:00' });
    await eventually(
      async () => expect((await shop.send('GET', `/test_clocks/${clockId}`)).body.status).toBe('ready'),
      60000,
    );
    const page = await owner.get(clockPath);
    expect(page.html).toContain('2026-03-01 18:00 (GMT+8)');
    expect(page.html.match(/INV-\d+/g)?.length).toBeGreaterThanOrEqual(2);
    const list = await owner.get(`${base}/test-clocks`);
    expect(list.html).toContain(`<a href="${base}/test-clocks/${clockId}">January</a>`);
    expect((await owner.get(`/dashboard/${shop.org.id}/production/test-clocks`)).status).toBe(404);
  });
});
