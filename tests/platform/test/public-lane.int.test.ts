import { request } from 'node:http';
import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

/** The count of requests a service's lane took (the gateway's unless said), from its metrics. */
async function laneRequests(platform: Platform, url = platform.gatewayUrl): Promise<number> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  return Number(/^http_lane_requests_total(?:\{[^}]*\})? (\d+)/m.exec(metrics)?.[1] ?? NaN);
}

/** Everything an answer says but its date and its own request id. */
function answerOf(response: { status: number; headers: Headers; body: unknown }) {
  const headers = Object.fromEntries(
    [...response.headers].filter(([name]) => !['date', 'x-request-id'].includes(name)),
  );
  return { status: response.status, headers, body: response.body };
}

/** A POST of `body` with the Secret Key, its length given or (`chunked`) not: express's path. */
function postJson(url: string, key: string, body: unknown, { chunked = false } = {}) {
  const text = JSON.stringify(body);
  return new Promise<{ status: number; headers: Headers; body: any }>((resolve, reject) => {
    const sent = request(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          ...(chunked ? {} : { 'content-length': String(Buffer.byteLength(text)) }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) headers.set(name, String(value));
          resolve({ status: response.statusCode!, headers, body: JSON.parse(Buffer.concat(chunks).toString()) });
        });
      },
    );
    sent.on('error', reject);
    // Written in two pieces without a length, node sends it chunked.
    if (chunked) sent.write(text.slice(0, 5));
    sent.end(chunked ? text.slice(5) : text);
  });
}

describe("the gateway's read lane (docs/decisions/0026)", () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let productId: string;
  beforeAll(async () => {
    // Keys stay cached for the whole file (a second by default): whether a read takes the lane
    // must not depend on how quickly a busy machine makes the calls between two of them. The
    // gateway's clock stands still, so that the 121 reads of the rate-limit case fall in one
    // minute's window (a run whose reads crossed a minute got a 200 with 49 left).
    platform = await startPlatform({
      config: { GATEWAY_API_KEY_CACHE_MS: '600000' },
      now: () => new Date('2026-11-21T08:00:00.000Z'),
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    productId = (await client.createProduct(org.id, plan({ slug: 'pro' }))).body.id;
  });
  afterAll(() => platform.stop());

  it("answers a key's reads as express does: the first (key not yet cached) through express, the next through the lane", async () => {
    const key = org.api_keys.sandbox.secret_key;
    const before = await laneRequests(platform);
    const first = await client.get(`/products/${productId}`, key);
    const afterFirst = await laneRequests(platform);
    const second = await client.get(`/products/${productId}`, key);
    expect([afterFirst - before, (await laneRequests(platform)) - afterFirst]).toEqual([0, 1]);

    const { 'x-ratelimit-remaining': firstRemaining, ...firstRest } = answerOf(first).headers;
    const { 'x-ratelimit-remaining': secondRemaining, ...secondRest } = answerOf(second).headers;
    expect(secondRest).toEqual(firstRest);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body).toEqual(first.body);
    // One budget, counted on both ways.
    expect(Number(secondRemaining)).toBe(Number(firstRemaining) - 1);
  });

  it("keeps the client's request id, drops forged identity headers, and answers a browser route's Vary", async () => {
    const key = org.api_keys.sandbox.secret_key;
    await client.get('/products', key);
    const before = await laneRequests(platform);
    const other = await client.createOrganization('Other');
    await client.get('/products', other.api_keys.sandbox.secret_key);
    const forged = await client.api(`/products/${productId}`, {
      authorization: `Bearer ${other.api_keys.sandbox.secret_key}`,
      'x-request-id': 'req_client_1',
      'x-billing-organization': org.id,
      'x-billing-key-kind': 'secret',
    });
    expect([forged.status, forged.headers.get('x-request-id')]).toEqual([404, 'req_client_1']);
    const list = await client.get('/products', key);
    expect([list.status, list.headers.get('vary')]).toEqual([200, 'Origin']);
    expect((await laneRequests(platform)) - before).toBe(2);
  });

  it('leaves to express what it must check itself: a Publishable Key on a Secret-only read, a browser, a HEAD', async () => {
    const pk = org.api_keys.sandbox.publishable_key;
    await client.get('/products', pk);
    const before = await laneRequests(platform);
    const refused = await client.get(`/products/${productId}`, pk);
    expect([refused.status, refused.body.error.code]).toEqual([401, 'unauthorized']);
    const browser = await client.api('/products', { authorization: `Bearer ${pk}`, origin: 'https://shop.example' });
    expect([browser.status, browser.headers.get('access-control-allow-origin')]).toEqual([200, 'https://shop.example']);
    const head = await fetch(`${platform.gatewayUrl}/v1/products`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${pk}` },
    });
    expect(head.status).toBe(200);
    expect((await laneRequests(platform)) - before).toBe(0);
  });

  it('counts and writes the rate limit on the lane in the shape the caller reads', async () => {
    const shop = await client.createOrganization('Busy shop');
    const headers = { 'x-recur-publishable-key': shop.api_keys.sandbox.publishable_key };
    const answers = [];
    for (let i = 0; i <= 120; i += 1) answers.push(await client.api('/products', headers));
    expect(answers.slice(0, 120).every((answer) => answer.status === 200)).toBe(true);
    const limited = answers[120]!;
    expect([limited.status, limited.headers.get('x-ratelimit-remaining')]).toEqual([429, '0']);
    expect(limited.body).toMatchObject({ code: 'rate_limit_exceeded' });
  });
});

describe('the lanes for credit spends sent without an Idempotency-Key (docs/decisions/0035, 0036)', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let key: string;
  let customerId: string;
  beforeAll(async () => {
    platform = await startPlatform({ billing: true, checkout: true, config: { GATEWAY_API_KEY_CACHE_MS: '600000' } });
    client = clientOf(platform.gatewayUrl);
    const org = await client.createOrganization();
    key = org.api_keys.sandbox.secret_key;
    const product = await client.createProduct(org.id, plan({ slug: 'top-up', type: 'ONE_TIME', interval: null }));
    const session = await postJson(`${platform.gatewayUrl}/v1/checkout/sessions`, key, {
      product_id: product.body.id,
      mode: 'PAYMENT',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: 'lane@example.com',
    });
    const paid = await fetch(session.body.url, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    customerId = await eventually(async () => {
      const found = await client.get('/customers?email=lane%40example.com', key);
      expect(found.body.data).toHaveLength(1);
      return found.body.data[0].id as string;
    }, 30000);
    const grant = { amount: 100, reason: 'lane test' };
    expect(
      (await postJson(`${platform.gatewayUrl}/v1/customers/${customerId}/credits/grants`, key, grant)).status,
    ).toBe(201);
  });
  afterAll(() => platform?.stop());

  const spendUrl = () => `${platform.gatewayUrl}/v1/customers/${customerId}/credits/spend`;
  /** The headers two answers must share: all but those of the moment (date, ids, counters, the body's length and tag). */
  const lasting = (headers: Headers) =>
    Object.fromEntries(
      [...headers].filter(
        ([name]) =>
          !['date', 'x-request-id', 'idempotency-key', 'x-ratelimit-remaining', 'etag', 'content-length'].includes(
            name,
          ),
      ),
    );

  it('answers as express does, the body forwarded as it came and a generated Idempotency-Key on the answer', async () => {
    const billingLanes = () => laneRequests(platform, platform.billing!.service.url);
    const [before, billingBefore] = [await laneRequests(platform), await billingLanes()];
    const viaExpress = await postJson(spendUrl(), key, { amount: 10, idempotency_key: 'lane-1' }, { chunked: true });
    const afterExpress = await laneRequests(platform);
    const viaLane = await postJson(spendUrl(), key, { amount: 10, idempotency_key: 'lane-2' });
    expect([afterExpress - before, (await laneRequests(platform)) - afterExpress]).toEqual([0, 1]);
    // Billing takes both on its own lane (docs/decisions/0036): the gateway forwards each with its length.
    expect((await billingLanes()) - billingBefore).toBe(2);

    expect([viaExpress.status, viaLane.status]).toEqual([200, 200]);
    expect(lasting(viaLane.headers)).toEqual(lasting(viaExpress.headers));
    for (const answer of [viaExpress, viaLane]) {
      expect(answer.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect([viaExpress.body.balance, viaLane.body.balance]).toEqual([90, 80]);
    expect(viaLane.body).toEqual({
      ...viaExpress.body,
      id: expect.stringMatching(/^\w+_/),
      balance: 80,
      idempotency_key: 'lane-2',
      created_at: expect.any(String),
    });
    expect(Number(viaLane.headers.get('x-ratelimit-remaining'))).toBe(
      Number(viaExpress.headers.get('x-ratelimit-remaining')) - 1,
    );
  });

  it("passes on billing's answers: a repeated key spends once, too much is 402, a negative amount 422", async () => {
    const before = await laneRequests(platform);
    const again = await postJson(spendUrl(), key, { amount: 10, idempotency_key: 'lane-2' });
    expect([again.status, again.body.balance]).toEqual([200, 80]);
    const tooMuch = await postJson(spendUrl(), key, { amount: 81, idempotency_key: 'lane-3' });
    expect([tooMuch.status, tooMuch.body.error.code]).toEqual([402, 'insufficient_credits']);
    const bad = await postJson(spendUrl(), key, { amount: -1, idempotency_key: 'lane-4' });
    expect(bad.status).toBe(422);
    expect((await laneRequests(platform)) - before).toBe(3);
    expect((await client.get(`/customers/${customerId}/credits`, key)).body.balance).toBe(80);
  });
});
