import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(240000);

/**
 * Issue 12, part 5: concurrent writes to one record. A version conflict is retried with jitter
 * a bounded number of times and then answers `409 conflict`; no write answers 5xx, and the
 * record ends as exactly the writes that answered 200 left it (docs/decisions/0005).
 */
describe('contended writes through the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;

  type Reply = { status: number; body: any };
  const send = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const response = await fetch(`${platform.gatewayUrl}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${sk}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    platform = await startPlatform({
      promotions: true,
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    expect((await client.createProduct(org.id, plan({ slug: 'pro' }))).status).toBe(201);
  });
  afterAll(() => platform?.stop());

  /** The stream's events of `type`, in order, read from the owning service's event store. */
  const eventsOf = async (service: 'billing' | 'promotions' | 'catalog', stream: string, type: string) => {
    const store = platform[service]!.service.context.store;
    return (await store.readStream(stream)).filter((event) => event.type === type);
  };

  /**
   * 3 rounds of 20 concurrent PATCHes, each setting a value of its own. Every answer is 200 or
   * 409 conflict, and the stream holds one change per 200 and none for a 409.
   */
  async function contend(write: (n: number) => Promise<Reply>) {
    const replies: { n: number; reply: Reply }[] = [];
    for (let round = 0; round < 3; round++) {
      const batch = Array.from({ length: 20 }, (_, i) => round * 20 + i);
      replies.push(...(await Promise.all(batch.map(async (n) => ({ n, reply: await write(n) })))));
    }
    // Any other answer named with its error, so that a failure says what the gateway answered.
    const others = replies
      .filter(({ reply }) => reply.status !== 200 && reply.status !== 409)
      .map(({ reply }) => `${reply.status} ${reply.body?.error?.code}: ${reply.body?.error?.message}`);
    expect(others).toEqual([]);
    for (const { reply } of replies.filter(({ reply }) => reply.status === 409)) {
      expect(reply.body).toMatchObject({ error: { code: 'conflict' } });
    }
    const won = replies.filter(({ reply }) => reply.status === 200).map(({ n }) => n);
    // Most of them get through: the retries are there to absorb contention, not to refuse it.
    expect(won.length).toBeGreaterThanOrEqual(30);
    return { won, lost: replies.filter(({ reply }) => reply.status === 409).map(({ n }) => n) };
  }

  it('60 concurrent PATCHes of one promotion code: 200 or 409, and the code is what the 200s wrote', async () => {
    const coupon = await clientOf(platform.gatewayUrl).admin('POST', `/organizations/${org.id}/coupons`, {
      environment: 'SANDBOX',
      name: 'Launch',
      discount_type: 'PERCENTAGE',
      discount_amount: 10,
      duration: 'once',
    });
    expect(coupon.status).toBe(201);
    const created = await send('POST', '/promotion-codes', { coupon_id: coupon.body.id, code: 'CONTENDED' });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;

    const { won, lost } = await contend((n) => send('PATCH', `/promotion-codes/${id}`, { max_redemptions: 1000 + n }));

    const updates = await eventsOf('promotions', `promotion_code-${id}`, 'PromotionCodeUpdated');
    const written = updates.map((event) => JSON.stringify(event.data)).join('\n');
    expect(updates).toHaveLength(won.length);
    for (const n of won) expect(written).toContain(`${1000 + n}`);
    for (const n of lost) expect(written).not.toContain(`${1000 + n}`);
    const final = await send('GET', `/promotion-codes/${id}`);
    expect(won).toContain(final.body.data.max_redemptions - 1000);
    expect(JSON.stringify(updates.at(-1)!.data)).toContain(`${final.body.data.max_redemptions}`);
  });

  it('60 concurrent PATCHes of one customer: 200 or 409, and the customer is what the 200s wrote', async () => {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cancel',
    });
    expect(session.status).toBe(201);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({
        email: 'contended@example.com',
        name: 'Buyer',
        card_number: '4242424242424242',
        exp: '12/34',
        cvc: '123',
      }),
    });
    expect(paid.status).toBe(303);
    const customer = await eventually(
      async () => {
        const list = await send('GET', '/customers?email=contended%40example.com');
        expect(list.body.data).toHaveLength(1);
        return list.body.data[0];
      },
      30000,
      200,
    );

    const { won, lost } = await contend((n) => send('PATCH', `/customers/${customer.id}`, { name: `Name ${n}.` }));

    const updates = await eventsOf('billing', `customer-${customer.id}`, 'CustomerUpdated');
    const names = updates.map((event) => JSON.stringify(event.data));
    expect(updates).toHaveLength(won.length);
    for (const n of won) expect(names.filter((data) => data.includes(`Name ${n}.`))).toHaveLength(1);
    for (const n of lost) expect(names.filter((data) => data.includes(`Name ${n}.`))).toHaveLength(0);
    const final = await send('GET', `/customers/${customer.id}`);
    expect(final.status).toBe(200);
    expect(won.map((n) => `Name ${n}.`)).toContain(final.body.name);
    expect(names.at(-1)).toContain(final.body.name);
  });

  it('60 concurrent admin PATCHes of one product: 200 or 409, and the product is what the 200s wrote', async () => {
    const client = clientOf(platform.gatewayUrl);
    const created = await client.createProduct(org.id, plan({ slug: 'contended' }));
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    const { won, lost } = await contend((n) =>
      client.admin('PATCH', `/organizations/${org.id}/products/${id}`, { name: `Plan ${n}.` }),
    );

    const updates = await eventsOf('catalog', `product-${id}`, 'ProductUpdated');
    const written = updates.map((event) => JSON.stringify(event.data));
    expect(updates).toHaveLength(won.length);
    for (const n of won) expect(written.filter((data) => data.includes(`Plan ${n}.`))).toHaveLength(1);
    for (const n of lost) expect(written.filter((data) => data.includes(`Plan ${n}.`))).toHaveLength(0);
    const final = await client.get(`/products/${id}`, sk);
    expect(won.map((n) => `Plan ${n}.`)).toContain(final.body.name);
    expect(written.at(-1)).toContain(final.body.name);
  });
});
