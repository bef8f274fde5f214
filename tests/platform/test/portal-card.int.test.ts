import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';
import { type Receiver, startReceiver } from '../src/lifecycle-helpers';

jest.setTimeout(180_000);

/**
 * Update the card in the portal (issue 15, part 3) over plain HTTP: a PAST_DUE subscription's
 * open invoice is paid at once with the new card (one charge, `invoice.paid` and
 * `subscription.renewed` as for a dunning retry), a refused card changes nothing.
 */
describe('updating the card in the customer portal', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;
  let receiver: Receiver;

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
  const card = (number: string) => ({ card_number: number, exp: '12/34', cvc: '123' });

  /** A monthly plan bought on a test clock at 31 January with `cardNumber`. */
  async function subscribeOnClock(email: string, cardNumber: string) {
    const clock = (await send('POST', '/test_clocks', { frozen_time: '2026-01-31T10:00:00Z' })).body;
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: email,
      test_clock: clock.id,
    });
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams(card(cardNumber)),
    });
    expect(paid.status).toBe(303);
    const subscription = await eventually(async () => {
      const read = await send('GET', `/checkout/sessions/${session.body.id}`);
      const found = await send('GET', `/subscriptions/${read.body.subscription_id}`);
      expect(found.status).toBe(200);
      return found.body;
    });
    return { clock: clock.id as string, subscription };
  }

  async function advance(clock: string, to: string) {
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
    await eventually(async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'));
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
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    await client.createProduct(org.id, plan({ name: 'Pro plan', slug: 'pro', price: 299 }));
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: receiver.url,
      events: ['invoice.paid', 'subscription.renewed'],
    });
    expect(endpoint.status).toBe(201);
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  it('pays a PAST_DUE subscription’s open invoice at once with the new card', async () => {
    const { clock, subscription } = await subscribeOnClock('pastdue@example.com', '4000000000000341');
    await advance(clock, '2026-03-01T00:00:00Z');
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('PAST_DUE');
    const [open] = (await send('GET', `/invoices?subscription_id=${subscription.id}&status=open`)).body.data;

    const session = await portalFor(subscription.customer_id);
    const main = await page(session.url);
    expect(main.html).toContain('Your last payment failed');
    expect(main.html).toContain(`id="fix-card-${subscription.id}"`);
    const formPage = await page(`${session.url}/payment_method`);
    expect(formPage.status).toBe(200);
    expect(formPage.html).toContain('The overdue payment of NT$299 is charged to it at once.');
    const csrf = csrfOf(formPage.html);

    expect(
      (await submit(`${session.url}/payment_method`, { ...card('4242424242424242'), csrf_token: 'x' })).status,
    ).toBe(403);
    const invalid = await submit(`${session.url}/payment_method`, { ...card('4242'), exp: '13/99', csrf_token: csrf });
    expect(invalid.status).toBe(422);
    expect(invalid.html).toContain('Please check: card_number, exp');
    const declined = await submit(`${session.url}/payment_method`, { ...card('4000000000000002'), csrf_token: csrf });
    expect(declined.status).toBe(402);
    expect(declined.html).toContain('Your card was declined');
    // A card that asks for 3-D Secure is not called declined: the bank wants its own page.
    const challenged = await submit(`${session.url}/payment_method`, { ...card('4000000000003220'), csrf_token: csrf });
    expect(challenged.status).toBe(402);
    expect(challenged.html).toContain('Your bank asks to confirm this card on its own page');
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('PAST_DUE');

    const fixed = await submit(`${session.url}/payment_method`, { ...card('4242 4242 4242 4242'), csrf_token: csrf });
    expect(fixed.status).toBe(303);
    expect(fixed.location).toMatch(/notice=card_paid$/);
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE');
    expect((await send('GET', `/invoices/${open.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 299 });
    const after = await page(`${platform.gatewayUrl}${fixed.location}`);
    expect(after.html).toContain('Your card has been updated and the overdue invoice is paid.');
    expect(after.html).toContain('Visa ending in 4242');
    expect(after.html).not.toContain('Your last payment failed');

    await eventually(async () => {
      const types = receiver.deliveries
        .filter((r) => r.body.data.object.id === open.id || r.body.data.object.id === subscription.id)
        .map((r) => r.body.type);
      expect(types).toEqual(expect.arrayContaining(['invoice.paid', 'subscription.renewed']));
    });
  });

  it('replaces the card of an ACTIVE subscription, whose next renewal is then paid', async () => {
    const { clock, subscription } = await subscribeOnClock('active@example.com', '4242424242424242');
    const session = await portalFor(subscription.customer_id);
    const csrf = csrfOf((await page(`${session.url}/payment_method`)).html);
    const updated = await submit(`${session.url}/payment_method`, { ...card('5555555555554444'), csrf_token: csrf });
    expect(updated.location).toMatch(/notice=card_updated$/);
    expect((await page(session.url)).html).toContain('Mastercard ending in 4444, expires 12/34');
    await advance(clock, '2026-03-01T00:00:00Z');
    const invoices = (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data;
    expect(invoices[0]).toMatchObject({ status: 'paid', period_start: '2026-02-28T10:00:00.000Z' });
  });
});
