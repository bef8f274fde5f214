import { randomUUID } from 'node:crypto';
import { describeWithServer } from '@billing/testing';
import { clientOf, type CreatedOrganization, type Platform, startGateway, startPlatform } from '../src/platform';

const limitHeaders = (headers: Headers) => ({
  limit: headers.get('x-ratelimit-limit'),
  remaining: headers.get('x-ratelimit-remaining'),
  reset: headers.get('x-ratelimit-reset'),
});

describe('rate limits per key, in memory', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  beforeAll(async () => {
    // A fixed clock: on the wall clock the 121 requests could straddle a minute and find a fresh window.
    const clock = new Date('2026-11-21T08:00:10Z');
    platform = await startPlatform({ now: () => clock });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
  });
  afterAll(() => platform.stop());

  it('puts X-RateLimit headers on every response: 120 a minute in Sandbox, 600 in Production', async () => {
    const sandbox = await client.get('/products', org.api_keys.sandbox.publishable_key);
    expect(limitHeaders(sandbox.headers)).toEqual({
      limit: '120',
      remaining: '119',
      reset: expect.stringMatching(/^\d{10}$/),
    });
    const production = await client.get('/products', org.api_keys.production.secret_key);
    expect(limitHeaders(production.headers)).toMatchObject({ limit: '600', remaining: '599' });
    const notFound = await client.get('/nothing', org.api_keys.production.secret_key);
    expect(limitHeaders(notFound.headers)).toMatchObject({ limit: '600', remaining: '598' });
  });

  it('answers 429 rate_limit_exceeded past the limit, per key', async () => {
    const key = org.api_keys.sandbox.secret_key;
    for (let i = 0; i < 120; i++) expect((await client.get('/products', key)).status).toBe(200);
    const limited = await client.get('/products', key);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limit_exceeded');
    expect(limitHeaders(limited.headers)).toMatchObject({ limit: '120', remaining: '0' });
    // Another key of the same organization has its own budget.
    expect((await client.get('/products', org.api_keys.production.secret_key)).status).toBe(200);
  });
});

describeWithServer('REDIS_URL', 'rate limits per key, shared in Redis', (redisUrl) => {
  let platform: Platform;
  let second: Awaited<ReturnType<typeof startGateway>>;
  beforeAll(async () => {
    const prefix = `rl-test-${randomUUID()}:`;
    // Both gateways on one fixed clock, so the 121 requests share one window.
    const clock = new Date('2026-11-21T08:00:10Z');
    const now = () => clock;
    platform = await startPlatform({ now, config: { REDIS_URL: redisUrl, RATE_LIMIT_PREFIX: prefix } });
    // A second gateway on the same database and Redis: the same keys, one shared budget.
    second = await startGateway(
      platform.infrastructure,
      { CATALOG_SERVICE_URL: platform.catalog.service.url, REDIS_URL: redisUrl, RATE_LIMIT_PREFIX: prefix },
      platform.gateway.service.context.store.tables.schema.replaceAll('"', ''),
      now,
    );
  });
  afterAll(async () => {
    await second.service.shutdown();
    await platform.stop();
  });

  it('lets two gateways share one budget per key', async () => {
    const first = clientOf(platform.gatewayUrl);
    const other = clientOf(second.service.url);
    const org = await first.createOrganization();
    const key = org.api_keys.sandbox.secret_key;
    for (let i = 0; i < 60; i++) expect((await first.get('/products', key)).status).toBe(200);
    const halfway = await other.get('/products', key);
    expect(limitHeaders(halfway.headers)).toMatchObject({ limit: '120', remaining: '59' });
    for (let i = 0; i < 59; i++) expect((await other.get('/products', key)).status).toBe(200);
    expect((await first.get('/products', key)).status).toBe(429);
    expect((await other.get('/products', key)).status).toBe(429);
  });
});

describe('rate-limit override for benchmarks', () => {
  let platform: Platform;
  beforeAll(async () => (platform = await startPlatform({ config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '3' } })));
  afterAll(() => platform.stop());

  it('replaces both per-key limits when configured', async () => {
    const client = clientOf(platform.gatewayUrl);
    const org = await client.createOrganization();
    const first = await client.get('/products', org.api_keys.production.secret_key);
    expect(limitHeaders(first.headers)).toMatchObject({ limit: '3', remaining: '2' });
  });
});
