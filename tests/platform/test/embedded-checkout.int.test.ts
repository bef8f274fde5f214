import { eventually } from '@billing/testing';
import { type Receiver, startReceiver } from '../src/lifecycle-helpers';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(240000);

type Reply = { status: number; body: any };

/**
 * Embedded checkouts through the gateway, as the recur-tw SDK drives them (docs/embedded-checkout.md):
 * created with either key from the SDK's camelCase body, read and paid with the checkout's
 * client_secret, the card entered in the sandbox card form (never sent to the API), and paid
 * into the same order, subscription, redemption and `checkout.completed` as a hosted checkout.
 */
describe('embedded checkouts', () => {
  let platform: Platform;
  let receiver: Receiver;
  let org: CreatedOrganization;
  let client: ReturnType<typeof clientOf>;
  let couponId: string;
  let emails = 0;
  const slow = <T>(check: () => Promise<T>) => eventually(check, 30000, 200);
  const pk = () => org.api_keys.sandbox.publishable_key;
  const sk = () => org.api_keys.sandbox.secret_key;
  const email = () => `embedded${++emails}@example.com`;

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${platform.gatewayUrl}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined } as Reply;
  };
  const asPage = () => ({ 'x-service-publishable-key': pk(), origin: 'https://shop.example' });
  /** The recur-tw SDK's own headers: its React hook names itself; its browser bundle does not. */
  const asSdk = (type?: string) => ({
    'x-recur-publishable-key': pk(),
    origin: 'https://shop.example',
    'accept-language': 'zh-TW,zh;q=0.9,en;q=0.8',
    ...(type && { 'x-recur-sdk-type': type }),
  });
  const asServer = () => ({ authorization: `Bearer ${sk()}` });
  const create = (body: Record<string, unknown>, headers: Record<string, string> = asPage()) =>
    call('POST', '/v1/checkouts', body, headers);
  const read = (id: string, query = '', headers: Record<string, string> = asPage()) =>
    call('GET', `/v1/checkouts/${id}${query}`, undefined, headers);
  const pay = (id: string, body: Record<string, unknown> = {}, headers: Record<string, string> = asPage()) =>
    call('POST', `/v1/checkouts/${id}/pay`, body, headers);
  /** What the sandbox card form sends from the buyer's page: the card, to the provider, for its token. */
  const enterCard = async (sdkToken: string, number: string, exp = '12/34', cvc = '123') => {
    const response = await fetch(`${platform.gatewayUrl}/sandbox/card-form/${sdkToken}`, {
      method: 'POST',
      headers: { origin: 'https://shop.example' },
      body: new URLSearchParams({ card_number: number, exp, cvc }),
    });
    return { status: response.status, body: (await response.json()) as any, headers: response.headers };
  };
  /** The SDK's modal flow: create with the SDK's body, enter the card, pay with the credit_token (subscriptions). */
  const buyEmbedded = async (productId: string, buyer: string, card = '4242424242424242') => {
    const created = await create({ productId, customerEmail: buyer, customerName: 'Mei Lin' });
    expect(created.status).toBe(201);
    expect((await enterCard(created.body.sdk_token, card)).status).toBe(200);
    const paid = await pay(created.body.checkout.id, { creditToken: created.body.credit_token, timestamp: '1' });
    return { created, paid };
  };
  let pro: { id: string };
  let ebook: { id: string };

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Leaf & Co');
    pro = (await client.createProduct(org.id, plan({ slug: 'pro', name: 'Pro', price: 299 }))).body;
    ebook = (
      await client.createProduct(
        org.id,
        plan({ slug: 'ebook', name: 'E-book', type: 'ONE_TIME', interval: null, interval_count: 1, price: 200 }),
      )
    ).body;
    const coupon = await call(
      'POST',
      '/v1/coupons',
      { name: 'Ten', discount_type: 'PERCENTAGE', discount_amount: 10, duration: 'once' },
      asServer(),
    );
    couponId = coupon.body.id;
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: receiver.url,
      events: ['checkout.completed'],
    });
    expect(endpoint.status).toBe(201);
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  it('is created from the SDK body with a Publishable Key, and with a Secret Key, with what the SDK reads', async () => {
    const created = await create({ productId: pro.id, customerEmail: email(), customerName: 'Mei Lin' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'checkout',
      checkout: {
        object: 'checkout',
        id: expect.stringMatching(/^cs_/),
        ui_mode: 'embedded',
        status: 'PENDING',
        session_status: 'OPEN',
        mode: 'SUBSCRIPTION',
        product_id: pro.id,
        product_type: 'SUBSCRIPTION',
        amount: 299,
        currency: 'TWD',
        client_secret: created.body.client_secret,
        livemode: false,
      },
      product: { id: pro.id, name: 'Pro', interval: 'month', price: 299 },
      client_secret: expect.stringMatching(/_secret_/),
      sdk_token: expect.stringMatching(/^cft_cs_/),
      sdk_timestamp: expect.stringMatching(/^[0-9]+$/),
      credit_token: created.body.client_secret,
      card_form_script: expect.stringMatching(/\/sandbox\/card-form\.js$/),
      livemode: false,
    });

    const byServer = await create(
      {
        product_slug: 'ebook',
        success_url: 'https://shop.example/thanks/{CHECKOUT_SESSION_ID}',
        metadata: { order: '7' },
      },
      asServer(),
    );
    expect(byServer.status).toBe(201);
    expect(byServer.body.checkout).toMatchObject({ mode: 'PAYMENT', amount: 200, product_type: 'ONE_TIME' });

    expect((await create({ productId: pro.id, metadata: { a: 'b' } })).status).toBe(400);
    expect((await create({ productId: 'prod_missing' })).status).toBe(404);
    expect((await create({ productId: pro.id, successUrl: 'http://shop.example/x' })).status).toBe(422);
  });

  it("is read with its client_secret; another checkout's secret is 404, as is the hosted page", async () => {
    const a = (await create({ productId: pro.id })).body;
    const b = (await create({ productId: ebook.id })).body;
    const mine = await read(a.checkout.id, `?client_secret=${encodeURIComponent(a.client_secret)}`);
    expect(mine.status).toBe(200);
    expect(mine.body.checkout).toMatchObject({ id: a.checkout.id, status: 'PENDING' });
    const status = await read(`${a.checkout.id}/status`, `?client_secret=${encodeURIComponent(a.client_secret)}`);
    expect(status.body.checkout.status).toBe('PENDING');

    expect((await read(a.checkout.id)).status).toBe(400);
    expect((await read(b.checkout.id, `?client_secret=${encodeURIComponent(a.client_secret)}`)).status).toBe(404);
    expect(
      (await read(`${b.checkout.id}/status`, `?client_secret=${encodeURIComponent(a.client_secret)}`)).status,
    ).toBe(404);
    expect((await pay(b.checkout.id, { client_secret: a.client_secret })).status).toBe(404);
    // The server reads without a secret; another organization does not see it at all.
    expect((await read(a.checkout.id, '', asServer())).status).toBe(200);
    const other = await client.createOrganization('Other');
    expect(
      (await read(a.checkout.id, '', { authorization: `Bearer ${other.api_keys.sandbox.secret_key}` })).status,
    ).toBe(404);
    // An embedded checkout has no hosted page, and a hosted session is no embedded checkout.
    expect((await fetch(`${platform.gatewayUrl}/checkout/${a.checkout.id}`)).status).toBe(404);
    const hosted = await call(
      'POST',
      '/v1/checkout/sessions',
      { product_id: pro.id, success_url: 'https://shop.example/ok', cancel_url: 'https://shop.example/no' },
      asServer(),
    );
    expect((await read(hosted.body.id, '', asServer())).status).toBe(404);
  });

  it('is paid with the card from its card form: a decline keeps it open, 4242 pays it once', async () => {
    const buyer = email();
    const created = (await create({ productId: pro.id, customerEmail: buyer, customerName: 'Mei Lin' })).body;
    const id = created.checkout.id;
    const secret = { client_secret: created.client_secret };

    expect((await pay(id, secret)).status).toBe(422);
    expect((await pay(id, {})).status).toBe(400);

    const badNumber = await enterCard(created.sdk_token, '4242424242424241');
    expect(badNumber).toMatchObject({ status: 402, body: { Status: 'FAIL', Code: 'incorrect_number' } });
    expect(badNumber.headers.get('access-control-allow-origin')).toBe('*');
    expect((await enterCard('cft_cs_nothing_' + 'x'.repeat(32), '4242424242424242')).status).toBe(404);

    expect((await enterCard(created.sdk_token, '4000000000000002')).body).toMatchObject({
      Status: 'SUCCESS',
      Card: { last4: '0002' },
    });
    const declined = await pay(id, secret);
    expect(declined.status).toBe(402);
    expect(declined.body.error.details[0]).toMatchObject({ code: 'card_declined' });
    expect((await read(id, `?client_secret=${encodeURIComponent(created.client_secret)}`)).body.checkout.status).toBe(
      'PENDING',
    );

    expect((await enterCard(created.sdk_token, '4242 4242 4242 4242')).status).toBe(200);
    // The SDK's pay body: the credit_token of the answer (the client_secret), camelCase.
    const paid = await pay(id, { creditToken: created.credit_token, timestamp: created.sdk_timestamp });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({
      success: true,
      checkout: {
        id,
        status: 'SUCCEEDED',
        session_status: 'COMPLETE',
        subscription_id: expect.stringMatching(/^sub_/),
      },
      subscription: { id: paid.body.checkout.subscription_id, status: 'ACTIVE', billing_period: 'MONTHLY' },
      charge: { status: 'SUCCEEDED', amount: 299 },
      redirect_url: null,
    });
    expect((await pay(id, secret)).status).toBe(409);
    expect((await enterCard(created.sdk_token, '4242424242424242')).status).toBe(409);
    const status = await read(`${id}/status`, `?client_secret=${encodeURIComponent(created.client_secret)}`);
    expect(status.body.checkout).toMatchObject({ status: 'SUCCEEDED', order_id: paid.body.checkout.order_id });

    const subscription = await slow(async () => {
      const customers = await call('GET', `/v1/customers?email=${encodeURIComponent(buyer)}`, undefined, asServer());
      expect(customers.body.data).toHaveLength(1);
      const list = await call(
        'GET',
        `/v1/subscriptions?customer_id=${customers.body.data[0].id}`,
        undefined,
        asServer(),
      );
      expect(list.body.subscriptions).toHaveLength(1);
      return list.body.subscriptions[0];
    });
    expect(subscription).toMatchObject({ id: paid.body.checkout.subscription_id, status: 'ACTIVE' });
  });

  it("answers the recur-tw SDK's calls in the shapes it reads: a decline reaches its React form and its bundle as a decline, in the buyer's language", async () => {
    const created = (await create({ productId: pro.id, customerEmail: email() }, asSdk('react'))).body;
    const id = created.checkout.id;
    await enterCard(created.sdk_token, '4000000000000002');
    const body = { creditToken: created.credit_token, timestamp: created.sdk_timestamp };

    // React: a 200 whose success is false, with the reason its card form shows.
    const react = await pay(id, body, asSdk('react'));
    expect(react).toEqual({
      status: 200,
      body: { success: false, failure: { code: 'CARD_DECLINED', message: '您的卡片遭到拒絕。', can_retry: true } },
    });
    // The browser bundle takes any 2xx as paid and reads `error` as text.
    const bundle = await pay(id, body, { ...asSdk(), 'accept-language': 'en-US,en;q=0.9' });
    expect(bundle.status).toBe(402);
    expect(bundle.body).toMatchObject({
      error: 'Your card was declined.',
      details: 'Your card was declined.',
      code: 'payment_required',
      failure: { code: 'CARD_DECLINED', can_retry: true },
    });
    // Every other client keeps the error envelope.
    const envelope = await pay(id, body, asPage());
    expect(envelope.status).toBe(402);
    expect(envelope.body.error).toMatchObject({ code: 'payment_required', details: [{ code: 'card_declined' }] });
    expect((await read(id, `?client_secret=${encodeURIComponent(created.client_secret)}`)).body.checkout.status).toBe(
      'PENDING',
    );

    await enterCard(created.sdk_token, '4242424242424242');
    const paid = await pay(id, body, asSdk('react'));
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ success: true, subscription: { status: 'ACTIVE' } });
    // Refusals other than a decline are errors to both, as text.
    const again = await pay(id, body, asSdk('react'));
    expect(again.status).toBe(409);
    expect(typeof again.body.error).toBe('string');

    // Creation refusals: the SDK reads `details || error`; checkout.js sends nothing for a link by slug.
    const noProduct = await create({ customerEmail: email() }, asSdk('react'));
    expect(noProduct.status).toBe(422);
    expect(noProduct.body.details).toEqual(noProduct.body.error);
    expect(noProduct.body.error_details[0]).toMatchObject({ path: 'product_id' });
    const slugLink = await create({ customerEmail: email() }, asSdk('checkout.js'));
    expect(slugLink.status).toBe(422);
    expect(slugLink.body.error).toMatch(/by slug.*\/buy\/<the product's id>/);
  });

  it("takes the SDK coupon box's calls without a key, from the page that created the checkout only", async () => {
    const code = await call('POST', '/v1/promotion-codes', { coupon_id: couponId, code: 'BOX10' }, asServer());
    expect(code.status).toBe(201);
    const created = (await create({ productId: ebook.id, customerEmail: email() }, asSdk())).body;
    const id = created.checkout.id;
    /** What the coupon box sends: the code, no key, no secret; the browser adds its origin. */
    const box = (method: 'POST' | 'DELETE', headers: Record<string, string>, body?: unknown) =>
      call(method, `/v1/checkouts/${id}/coupon`, body, headers);
    const shop = { origin: 'https://shop.example', 'accept-language': 'zh-TW' };

    const evil = await box('POST', { origin: 'https://evil.example' }, { code: 'BOX10' });
    expect(evil).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect((await box('POST', {}, { code: 'BOX10' })).status).toBe(404);
    const wrong = await box('POST', shop, { code: 'NOPE99' });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.message).toMatch(/優惠碼|無法/);
    expect((await box('POST', shop, { code: 'BOX10', extra: 'x'.repeat(10) })).status).toBe(422);

    const applied = await box('POST', shop, { code: 'box10' });
    expect(applied.status).toBe(200);
    expect(applied.body.checkout).toMatchObject({ amount: 180, discount_amount: 20 });
    expect(applied.body.discount).toEqual({
      code: 'BOX10',
      couponName: 'Ten',
      discountType: 'PERCENTAGE',
      discountAmount: 20,
      duration: 'ONCE',
      durationMonths: null,
      bonusTrialDays: 0,
      bonusMonths: 0,
      productInterval: null,
      productIntervalCount: 1,
      productPrice: 200,
    });
    const removed = await box('DELETE', shop);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ discount: null, checkout: { amount: 200 } });

    // A checkout a server created (no page origin) takes no key-less call.
    const fromServer = (await create({ productId: ebook.id, customerEmail: email() }, asServer())).body;
    const keyless = await call('POST', `/v1/checkouts/${fromServer.checkout.id}/coupon`, { code: 'BOX10' }, shop);
    expect(keyless.status).toBe(404);
  });

  it('refuses a second subscription to the same product at creation (409), by customerEmail or externalCustomerId', async () => {
    const buyer = email();
    const first = await create({ productId: pro.id, customerEmail: buyer, externalCustomerId: 'user-409' });
    await enterCard(first.body.sdk_token, '4242424242424242');
    expect((await pay(first.body.checkout.id, { client_secret: first.body.client_secret })).status).toBe(200);
    await slow(async () => {
      for (const body of [{ customerEmail: buyer }, { externalCustomerId: 'user-409' }]) {
        const again = await create({ productId: pro.id, ...body });
        expect(again.status).toBe(409);
        expect(again.body.error).toMatchObject({
          code: 'conflict',
          details: [
            expect.objectContaining({ existing_subscription_id: expect.stringMatching(/^sub_/), status: 'ACTIVE' }),
          ],
        });
      }
    });
    // A one-time product is not a subscription: no 409.
    expect((await create({ productId: ebook.id, customerEmail: buyer })).status).toBe(201);
  });

  it('applies and removes a promotion code, and a paid code is the same redemption as on a hosted checkout', async () => {
    const code = await call('POST', '/v1/promotion-codes', { coupon_id: couponId, code: 'EMBED10' }, asServer());
    expect(code.status).toBe(201);
    const buyer = email();
    const created = (await create({ productId: ebook.id, customerEmail: buyer })).body;
    const id = created.checkout.id;
    const coupon = (body: Record<string, unknown>) => call('POST', `/v1/checkouts/${id}/coupon`, body, asPage());

    const wrong = await coupon({ code: 'NOPE99', client_secret: created.client_secret });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.details[0].code).toBe('PROMO_CODE_INVALID');
    expect((await coupon({ code: 'EMBED10' })).status).toBe(400);

    const applied = await coupon({ code: 'embed10', clientSecret: created.client_secret });
    expect(applied.status).toBe(200);
    expect(applied.body.checkout).toMatchObject({ amount: 180, amount_subtotal: 200, discount_amount: 20 });
    expect(applied.body.checkout.discount).toBeTruthy();

    const removed = await call(
      'DELETE',
      `/v1/checkouts/${id}/coupon?client_secret=${encodeURIComponent(created.client_secret)}`,
      undefined,
      asPage(),
    );
    expect(removed.status).toBe(200);
    expect(removed.body.checkout).toMatchObject({
      amount: 200,
      discount_amount: 0,
      discount: null,
      promotion_code: null,
    });

    expect((await coupon({ code: 'EMBED10', client_secret: created.client_secret })).body.checkout.amount).toBe(180);
    await enterCard(created.sdk_token, '4242424242424242');
    const paid = await pay(id, { client_secret: created.client_secret });
    expect(paid.status).toBe(200);
    expect(paid.body.charge).toMatchObject({ amount: 180 });
    expect(paid.body.subscription).toBeNull();
    await slow(async () => {
      const redemptions = await call(
        'GET',
        `/v1/promotion-codes/${code.body.data.id}/redemptions`,
        undefined,
        asServer(),
      );
      expect(redemptions.body.data.redemptions).toEqual([
        expect.objectContaining({ status: 'ACTIVE', customer_id: paid.body.checkout.customer_id }),
      ]);
    });
    // Paid: the code can no longer change.
    expect((await coupon({ code: 'EMBED10', client_secret: created.client_secret })).status).toBe(409);
  });

  it('completes with the same checkout.completed as a hosted checkout', async () => {
    const embedded = await buyEmbedded(ebook.id, email());
    expect(embedded.paid.status).toBe(200);
    const hosted = await call(
      'POST',
      '/v1/checkout/sessions',
      { product_id: ebook.id, success_url: 'https://shop.example/ok', cancel_url: 'https://shop.example/no' },
      asServer(),
    );
    const page = await fetch(`${platform.gatewayUrl}/checkout/${hosted.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({
        email: email(),
        name: 'Mei Lin',
        card_number: '4242424242424242',
        exp: '12/34',
        cvc: '123',
      }),
    });
    expect(page.status).toBe(303);
    const [fromEmbedded, fromHosted] = await slow(async () => {
      type Event = (typeof receiver.events)[number];
      const of = (id: string) =>
        receiver.events.find((e) => e.type === 'checkout.completed' && e.data.object.id === id);
      const both = [of(embedded.created.body.checkout.id), of(hosted.body.id)];
      expect(both.every(Boolean)).toBe(true);
      return both as [Event, Event];
    });
    const shape = (value: unknown): unknown =>
      value && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(
            Object.entries(value)
              .map(([k, v]) => [k, shape(v)])
              .sort(),
          )
        : value === null
          ? 'null'
          : typeof value;
    expect(shape(fromEmbedded.data)).toEqual(shape(fromHosted.data));
    expect(fromEmbedded.data.object).toMatchObject({
      object: 'checkout.session',
      status: 'COMPLETE',
      amount_total: 200,
    });
  });
});
