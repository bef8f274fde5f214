import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

/**
 * Subscriptions created without a hosted page (issue 14, part 5; docs/plan-switching.md):
 * the saved card is charged at once; without one (or declined) the subscription is INCOMPLETE
 * with a hosted page, and `complete` finishes it once paid; the duplicate check is 409.
 */
describe('direct subscription creation through the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;
  const products: Record<string, string> = {};
  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );
  const urls = { success_url: 'https://shop.example/ok', cancel_url: 'https://shop.example/no' };

  /** A customer with a saved `card`, made by paying a checkout for the `basic` plan. */
  async function customerWithCard(email: string, card = '4242424242424242') {
    const session = await send('POST', '/checkout/sessions', { product_slug: 'basic', ...urls, customer_email: email });
    await payOnHostedPage(session.body.id, card);
    return eventually(async () => {
      const read = await send('GET', `/checkout/sessions/${session.body.id}`);
      const subscription = await send('GET', `/subscriptions/${read.body.subscription_id}`);
      expect(subscription.status).toBe(200);
      return subscription.body.customer_id as string;
    });
  }
  async function payOnHostedPage(sessionId: string, card = '4242424242424242') {
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: card, exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
  }
  async function chargeKeysOf(invoiceId: string) {
    const store = platform.checkout!.service.context.store;
    const { rows } = await store.database.query<{ idempotency_key: string; status: string }>(
      `SELECT idempotency_key, result->>'status' AS status FROM ${store.tables.schema}.sandbox_charges
       WHERE split_part(idempotency_key, ':', 1) = $1`,
      [invoiceId],
    );
    return rows;
  }

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    for (const [slug, fields] of [
      ['basic', { price: 199 }],
      ['pro', { price: 299 }],
      ['trial', { price: 500, trial_days: 14 }],
      ['ebook', { type: 'ONE_TIME', interval: null, price: 100 }],
    ] as const) {
      products[slug] = (await client.createProduct(org.id, plan({ slug, name: slug, ...fields }))).body.id;
    }
  });
  afterAll(() => platform.stop());

  it("charges the customer's saved card and answers the ACTIVE subscription; a second one is 409", async () => {
    const customerId = await customerWithCard('direct@example.com');
    const created = await send('POST', '/subscriptions', { customer_id: customerId, product_id: products.pro });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'subscription',
      status: 'ACTIVE',
      customer_id: customerId,
      product: { id: products.pro },
      price: 299,
      checkout_session_id: null,
    });
    const [invoice] = (await send('GET', `/invoices?subscription_id=${created.body.id}`)).body.data;
    expect(invoice).toMatchObject({ status: 'paid', total: 299, amount_paid: 299 });
    expect(await chargeKeysOf(invoice.id)).toEqual([{ idempotency_key: `${invoice.id}:1`, status: 'succeeded' }]);
    expect((await send('GET', `/customers/entitlements?customer_id=${customerId}`)).body.entitlements).toHaveLength(2);

    const again = await send('POST', '/subscriptions', {
      customer_email: 'direct@example.com',
      product_id: products.pro,
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      code: 'conflict',
      details: [{ existing_subscription_id: created.body.id, status: 'ACTIVE' }],
    });
  });

  it("starts the plan's trial charging nothing", async () => {
    const customerId = await customerWithCard('direct-trial@example.com');
    const created = await send('POST', '/subscriptions', { customer_id: customerId, product_id: products.trial });
    expect(created.body).toMatchObject({ status: 'TRIAL', price: 500 });
    expect(created.body.trial_end).toEqual(expect.any(String));
    const [invoice] = (await send('GET', `/invoices?subscription_id=${created.body.id}`)).body.data;
    expect(invoice).toMatchObject({ total: 0 });
    expect(await chargeKeysOf(invoice.id)).toEqual([]);
  });

  it('without a saved card answers INCOMPLETE with the hosted page; paid there, complete answers it ACTIVE, idempotently', async () => {
    const created = await send('POST', '/subscriptions', {
      customer_email: 'new-buyer@example.com',
      product_id: products.pro,
      ...urls,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'subscription',
      status: 'INCOMPLETE',
      customer_id: null,
      customer_email: 'new-buyer@example.com',
      product: { id: products.pro },
      price: 299,
      last_payment_error: null,
    });
    const { id, url, client_secret, checkout_session_id } = created.body;
    expect(id).toMatch(/^sub_/);
    expect(url).toContain(checkout_session_id);
    expect(client_secret).toEqual(expect.any(String));
    expect((await send('GET', `/subscriptions/${id}`)).status).toBe(404);

    const early = await send('POST', `/subscriptions/${id}/complete`);
    expect(early.status).toBe(402);
    expect(early.body.error).toMatchObject({ code: 'payment_required', details: [{ url }] });

    await payOnHostedPage(checkout_session_id);
    const done = await eventually(async () => {
      const answer = await send('POST', `/subscriptions/${id}/complete`);
      expect(answer.status).toBe(200);
      return answer.body;
    });
    expect(done).toMatchObject({ id, status: 'ACTIVE', product: { id: products.pro }, checkout_session_id });
    expect((await send('POST', `/subscriptions/${id}/complete`)).body).toEqual(done);
    expect((await send('GET', `/checkout/sessions/${checkout_session_id}`)).body.subscription_id).toBe(id);

    // The same Idempotency-Key replays the first answer.
    const keyed = (key: string) =>
      fetch(`${platform.gatewayUrl}/v1/subscriptions/${id}/complete`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sk}`, 'idempotency-key': key },
      });
    const first = await keyed('complete-once');
    const replay = await keyed('complete-once');
    expect([first.status, replay.status, replay.headers.get('idempotency-replay')]).toEqual([200, 200, 'true']);

    const duplicate = await send('POST', '/subscriptions', {
      customer_email: 'new-buyer@example.com',
      product_id: products.pro,
      ...urls,
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.details).toEqual([{ existing_subscription_id: id, status: 'ACTIVE' }]);
  });

  it('a declined saved card answers INCOMPLETE with the decline; a promotion code goes to the hosted page', async () => {
    const customerId = await customerWithCard('declines-later@example.com', '4000000000000341');
    const created = await send('POST', '/subscriptions', {
      customer_id: customerId,
      product_id: products.pro,
      ...urls,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'INCOMPLETE',
      customer_id: customerId,
      last_payment_error: { code: 'card_declined' },
    });
    const stillDeclined = await send('POST', `/subscriptions/${created.body.id}/complete`);
    expect(stillDeclined.status).toBe(402);
    expect((await send('GET', `/invoices?subscription_id=${created.body.id}`)).body.data).toEqual([]);

    const coupon = await send('POST', '/coupons', { name: 'Half', discount_type: 'PERCENTAGE', discount_amount: 50 });
    expect((await send('POST', '/promotion-codes', { coupon_id: coupon.body.id, code: 'HALF' })).status).toBe(201);
    const withCode = await customerWithCard('with-code@example.com');
    const promoted = await send('POST', '/subscriptions', {
      customer_id: withCode,
      product_id: products.pro,
      promotion_code: 'HALF',
      ...urls,
    });
    expect(promoted.body).toMatchObject({ status: 'INCOMPLETE', last_payment_error: null });
    const session = await send('GET', `/checkout/sessions/${promoted.body.checkout_session_id}`);
    expect(session.body).toMatchObject({ status: 'OPEN', amount_total: 150 });
  });

  it('refuses bad input: no customer named, absent customer or product (404), not a plan (400), no urls when the page is needed', async () => {
    expect((await send('POST', '/subscriptions', { product_id: products.pro })).status).toBe(422);
    expect((await send('POST', '/subscriptions', { customer_id: 'cus_absent', product_id: products.pro })).status).toBe(
      404,
    );
    expect(
      (await send('POST', '/subscriptions', { customer_email: 'x@example.com', product_id: 'prod_absent', ...urls }))
        .status,
    ).toBe(404);
    const notPlan = await send('POST', '/subscriptions', {
      customer_email: 'x@example.com',
      product_id: products.ebook,
    });
    expect([notPlan.status, notPlan.body.error.details[0].code]).toEqual([400, 'not_a_subscription_plan']);
    // An archived plan, a Production one, another organization's: no product to this key, as at checkout.
    const client = clientOf(platform.gatewayUrl);
    const make = async (organization: string, fields: Record<string, unknown>) =>
      (
        await client.createProduct(
          organization,
          plan({ slug: `p${Math.random().toString(36).slice(2, 8)}`, ...fields }),
        )
      ).body.id as string;
    const retired = await make(org.id, { price: 999 });
    await client.admin('PATCH', `/organizations/${org.id}/products/${retired}`, { active: false });
    const live = await make(org.id, { environment: 'PRODUCTION', price: 399 });
    const foreign = await make((await client.createOrganization('Other')).id, { price: 299 });
    for (const productId of [retired, live, foreign]) {
      const refused = await send('POST', '/subscriptions', { customer_email: 'x@example.com', product_id: productId });
      expect([productId, refused.status, refused.body.error]).toEqual([
        productId,
        404,
        { code: 'not_found', message: `No such product: ${productId}` },
      ]);
    }
    const noUrls = await send('POST', '/subscriptions', { customer_email: 'x@example.com', product_id: products.pro });
    expect(noUrls.status).toBe(400);
    expect((await send('POST', '/subscriptions/sub_absent/complete')).status).toBe(404);
  });
});
