import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(120000);

type Reply = { status: number; body: any };

/**
 * `GET /v1/orders` and `GET /v1/orders/{id}` (docs/orders.md): every paid checkout's order, latest
 * paid first, with what it paid, with what, and its refunds; a customer's, a time range, paged;
 * never another organization's or environment's.
 */
describe('orders through the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let other: CreatedOrganization;

  const send = async (path: string, key = org.api_keys.sandbox.secret_key): Promise<Reply> => {
    const response = await fetch(`${platform.gatewayUrl}/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: response.status, body: await response.json() };
  };
  const post = async (path: string, body: unknown): Promise<Reply> => {
    const response = await fetch(`${platform.gatewayUrl}/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.api_keys.sandbox.secret_key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };

  /** Pays `product_slug` on the hosted page; the session as the API shows it. */
  async function buy(productSlug: string, email: string) {
    const session = await post('/checkout/sessions', {
      product_slug: productSlug,
      customer_email: email,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      metadata: { ref: 'newsletter' },
    });
    expect(session.status).toBe(201);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    return (await send(`/checkout/sessions/${session.body.id}`)).body;
  }

  let ebook: any;
  let pro: any;
  let second: any;
  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    other = await client.createOrganization('Other');
    await client.createProduct(org.id, plan({ slug: 'pro', price: 299 }));
    await client.createProduct(org.id, plan({ slug: 'ebook', name: 'E-book', type: 'ONE_TIME', interval: null, price: 480 }));
    ebook = await buy('ebook', 'reader@example.com');
    pro = await buy('pro', 'subscriber@example.com');
    second = await buy('ebook', 'subscriber@example.com');
  });
  afterAll(() => platform.stop());

  it('shows an order with what it paid, with what, and its refunds', async () => {
    const refunded = await post('/refunds', { order_id: ebook.order_id, amount: 80 });
    expect(refunded.status).toBe(201);
    const read = await send(`/orders/${ebook.order_id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      object: 'order',
      id: ebook.order_id,
      checkout_session_id: ebook.id,
      mode: 'PAYMENT',
      customer_id: ebook.customer_id,
      customer_email: 'reader@example.com',
      product: { id: ebook.product.id, name: 'E-book', type: 'ONE_TIME' },
      subscription_id: null,
      status: 'partially_refunded',
      amount_subtotal: 480,
      amount_total: 480,
      amount_refunded: 80,
      currency: 'TWD',
      payment_method: { brand: 'visa', last4: '4242' },
      processor: 'sandbox',
      processor_reference: expect.any(String),
      refunds: [
        expect.objectContaining({ object: 'refund', amount: 80, status: 'succeeded', order_id: ebook.order_id }),
      ],
      metadata: { ref: 'newsletter' },
      paid_at: ebook.completed_at,
      created_at: ebook.created_at,
      livemode: false,
    });
    const subscription = (await send(`/orders/${pro.order_id}`)).body;
    expect(subscription).toMatchObject({ mode: 'SUBSCRIPTION', subscription_id: pro.subscription_id, status: 'paid' });
  });

  it('lists the latest paid first, by customer and by time, a page at a time', async () => {
    const ids = async (query: string) => {
      const page = await send(`/orders${query}`);
      expect(page.status).toBe(200);
      return page.body.data.map((o: { id: string }) => o.id);
    };
    expect(await ids('')).toEqual([second.order_id, pro.order_id, ebook.order_id]);
    expect(await ids(`?customer_id=${pro.customer_id}`)).toEqual([second.order_id, pro.order_id]);
    const firstPage = await send('/orders?limit=2');
    expect([firstPage.body.has_more, firstPage.body.livemode]).toEqual([true, false]);
    expect(await ids(`?limit=2&starting_after=${firstPage.body.data[1].id}`)).toEqual([ebook.order_id]);
    expect(await ids(`?paid_before=${encodeURIComponent(pro.completed_at)}`)).toEqual([ebook.order_id]);
    expect(
      await ids(
        `?paid_from=${encodeURIComponent(pro.completed_at)}&paid_before=${encodeURIComponent(second.completed_at)}`,
      ),
    ).toEqual([pro.order_id]);
    expect(await ids('?paid_from=2999-01-01T00:00:00%2B08:00')).toEqual([]);
  });

  it("never shows another organization's or environment's orders; a Publishable Key and bad input are refused", async () => {
    expect((await send(`/orders/${ebook.order_id}`, other.api_keys.sandbox.secret_key)).status).toBe(404);
    expect((await send('/orders', other.api_keys.sandbox.secret_key)).body.data).toEqual([]);
    expect((await send(`/orders/${ebook.order_id}`, org.api_keys.production.secret_key)).status).toBe(404);
    expect((await send(`/orders/${ebook.order_id}`, org.api_keys.sandbox.publishable_key)).status).toBe(401);
    expect((await send('/orders/ord_nothing')).body).toEqual({
      error: { code: 'not_found', message: 'No such order: ord_nothing' },
    });
    for (const bad of [
      '?limit=0',
      '?limit=101',
      '?paid_from=yesterday',
      `?starting_after=${ebook.order_id}x`,
      `?customer_id=${'c'.repeat(300)}`,
    ]) {
      const refused = await send(`/orders${bad}`);
      expect([bad, refused.status, refused.body.error.code]).toEqual([bad, 400, 'bad_request']);
    }
    const foreignCursor = await send(`/orders?starting_after=${ebook.order_id}`, other.api_keys.sandbox.secret_key);
    expect(foreignCursor.status).toBe(400);
  });
});
