import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

/** The gateway's count of requests its lane took, from its metrics. */
async function laneRequests(platform: Platform): Promise<number> {
  const metrics = await (await fetch(`${platform.gatewayUrl}/metrics`)).text();
  return Number(/^http_lane_requests_total(?:\{[^}]*\})? (\d+)/m.exec(metrics)?.[1] ?? NaN);
}

/** Everything an answer says but its date and its own request id. */
function answerOf(response: { status: number; headers: Headers; body: unknown }) {
  const headers = Object.fromEntries(
    [...response.headers].filter(([name]) => !['date', 'x-request-id'].includes(name)),
  );
  return { status: response.status, headers, body: response.body };
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
