import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(60000);

/** Checkout sessions and the hosted page, through the gateway. */
describe('checkout through the gateway', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let clock = Date.parse('2026-11-21T08:00:00.000Z');

  const createSession = async (key: string, body: Record<string, unknown> = {}) => {
    const response = await fetch(`${platform.gatewayUrl}/v1/checkout/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        product_slug: 'pro',
        success_url: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
        cancel_url: 'https://shop.example/cancel',
        ...body,
      }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const submit = (url: string, form: Record<string, string>) =>
    fetch(url, { method: 'POST', redirect: 'manual', body: new URLSearchParams(form) });
  const card = (card_number: string) => ({
    email: 'buyer@example.com',
    name: 'Buyer',
    card_number,
    exp: '12/34',
    cvc: '123',
  });

  beforeAll(async () => {
    platform = await startPlatform({ checkout: true, now: () => new Date(clock) });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    await client.createProduct(org.id, plan({ slug: 'pro', price: 299 }));
  });
  afterAll(() => platform.stop());

  it('creates a session with either key and reads it back', async () => {
    const created = await createSession(org.api_keys.sandbox.publishable_key);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^cs_/),
      amount: 299,
      requires_payment_method: true,
      livemode: false,
    });
    expect(created.body.url).toBe(`${platform.gatewayUrl}/checkout/${created.body.id}`);
    const read = await client.get(`/checkout/sessions/${created.body.id}`, org.api_keys.sandbox.secret_key);
    expect(read.body).toMatchObject({ id: created.body.id, status: 'OPEN', mode: 'SUBSCRIPTION', amount_total: 299 });
    expect((await createSession(org.api_keys.sandbox.publishable_key, { metadata: { ref: 'x' } })).status).toBe(400);
    expect((await client.get(`/checkout/sessions/${created.body.id}`, org.api_keys.production.secret_key)).status).toBe(
      404,
    );
  });

  it('serves the hosted page without a key, pays once, and redirects to the success URL', async () => {
    const { body: session } = await createSession(org.api_keys.sandbox.secret_key);
    const page = await fetch(session.url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('autocomplete="cc-number"');
    expect(html).toContain('NT$299');

    const declined = await submit(session.url, card('4000000000000002'));
    const declinedPage = await declined.text();
    expect({ status: declined.status, page: declinedPage }).toMatchObject({
      status: 402,
      page: expect.stringMatching(/declined/i),
    });
    expect((await client.get(`/checkout/sessions/${session.id}`, org.api_keys.sandbox.secret_key)).body.status).toBe(
      'OPEN',
    );

    // Two tabs submit at once: one charge. The tab that started the payment goes to the success
    // URL; the other is told to wait (409), or, when it finds the first one's charge made already,
    // completes the session from that charge and goes there too (completeFromAttemptUnderWay).
    const answers = await Promise.all([
      submit(session.url, card('4242424242424242')),
      submit(session.url, card('4242424242424242')),
    ]);
    const thanks = `https://shop.example/thanks?session=${session.id}`;
    const shown = answers.map((answer) => ({ status: answer.status, location: answer.headers.get('location') }));
    expect(shown).toContainEqual({ status: 303, location: thanks });
    for (const answer of shown)
      expect([
        { status: 303, location: thanks },
        { status: 409, location: null },
      ]).toContainEqual(answer);

    const paid = await client.get(`/checkout/sessions/${session.id}`, org.api_keys.sandbox.secret_key);
    expect(paid.body).toMatchObject({
      status: 'COMPLETE',
      order_id: expect.stringMatching(/^ord_/),
      completed_at: expect.any(String),
    });
    const store = platform.checkout!.service.context.store;
    const charges = await store.database.query<{ status: string }>(
      `SELECT result->>'status' AS status FROM ${store.tables.schema}.sandbox_charges WHERE idempotency_key LIKE $1`,
      [`${paid.body.payment_intent_id}-%`],
    );
    expect(charges.rows.map((row) => row.status).sort()).toEqual(['declined', 'succeeded']);
    const again = await fetch(session.url);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('Already paid');
    expect((await submit(session.url, card('4242424242424242'))).status).toBe(409);
  });

  it('shows an expired session as expired and never takes its payment', async () => {
    const { body: session } = await createSession(org.api_keys.sandbox.secret_key);
    clock += 31 * 60_000;
    const page = await fetch(session.url);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('Checkout expired');
    expect((await submit(session.url, card('4242424242424242'))).status).toBe(410);
    expect((await client.get(`/checkout/sessions/${session.id}`, org.api_keys.sandbox.secret_key)).body.status).toBe(
      'EXPIRED',
    );
  });

  it('answers an unknown session with a not-found page', async () => {
    expect((await fetch(`${platform.gatewayUrl}/checkout/cs_absent`)).status).toBe(404);
  });
});
