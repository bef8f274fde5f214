import { randomUUID } from 'node:crypto';
import { describeWithServer } from '@billing/testing';
import { clientAddress } from '@billing/gateway';
import {
  ADMIN_TOKEN,
  type CreatedOrganization,
  type Platform,
  clientOf,
  startGateway,
  startPlatform,
} from '../src/platform';

/**
 * Issue 12, item 8: repeated failed authentication from one address is limited, for API keys
 * and the admin token: 30 failures a minute per address, then 429 for every attempt from it,
 * with the right key too, until the window ends. All on the injected clock.
 */

const WRONG_KEY = `sk_test_${'x'.repeat(32)}`;

interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

async function call(url: string, headers: Record<string, string>): Promise<Reply> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

const limitHeaders = (reply: Reply) => ({
  limit: reply.headers.get('x-ratelimit-limit'),
  remaining: reply.headers.get('x-ratelimit-remaining'),
  reset: reply.headers.get('x-ratelimit-reset'),
  retryAfter: reply.headers.get('retry-after'),
});

/** 2030-01-01T00:00:10Z: 50 s left in its minute. */
const START = Date.UTC(2030, 0, 1, 0, 0, 10);

describe('failed authentication, in memory', () => {
  let platform: Platform;
  let clock = new Date(START);
  let org: CreatedOrganization;

  beforeAll(async () => {
    // Addresses from X-Forwarded-For (the test client is on loopback, as a load balancer would be).
    platform = await startPlatform({ now: () => clock, config: { TRUST_PROXY: 'loopback' } });
    org = await clientOf(platform.gatewayUrl).createOrganization();
  });
  afterAll(() => platform.stop());
  beforeEach(() => {
    // A fresh minute for every test.
    clock = new Date(clock.getTime() + 60_000);
  });

  const products = (from: string, key: string) =>
    call(`${platform.gatewayUrl}/v1/products`, { authorization: `Bearer ${key}`, 'x-forwarded-for': from });

  it('answers 429 after 30 wrong keys from one address, even to the right key, until the window passes', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 600; i++) statuses.push((await products('203.0.113.1', WRONG_KEY)).status);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(401));
    expect(statuses.slice(30)).toEqual(Array(570).fill(429));

    const right = await products('203.0.113.1', org.api_keys.sandbox.secret_key);
    expect(right.status).toBe(429);
    expect(right.body).toEqual({ error: { code: 'rate_limit_exceeded', message: expect.any(String) } });
    const windowEnd = Math.ceil(clock.getTime() / 60_000) * 60;
    expect(limitHeaders(right)).toEqual({
      limit: '30',
      remaining: '0',
      reset: String(windowEnd),
      retryAfter: String(windowEnd - Math.floor(clock.getTime() / 1000)),
    });

    // Another address is not affected.
    expect((await products('203.0.113.2', org.api_keys.sandbox.secret_key)).status).toBe(200);
    expect((await products('203.0.113.2', WRONG_KEY)).status).toBe(401);

    // The window passes: the address may try again.
    clock = new Date(windowEnd * 1000);
    expect((await products('203.0.113.1', org.api_keys.sandbox.secret_key)).status).toBe(200);
    expect((await products('203.0.113.1', WRONG_KEY)).status).toBe(401);
  });

  it('shows the failure budget on each 401, and a success does not reset it', async () => {
    for (let i = 0; i < 29; i++) {
      const refused = await products('203.0.113.3', WRONG_KEY);
      expect(refused.status).toBe(401);
      expect(limitHeaders(refused)).toMatchObject({ limit: '30', remaining: String(29 - i) });
    }
    expect((await products('203.0.113.3', org.api_keys.sandbox.secret_key)).status).toBe(200);
    expect((await products('203.0.113.3', WRONG_KEY)).status).toBe(401);
    expect((await products('203.0.113.3', org.api_keys.sandbox.secret_key)).status).toBe(429);
  });

  it('counts every wrong form of key (malformed, unknown, in the wrong header), but not a missing key', async () => {
    const url = `${platform.gatewayUrl}/v1/products`;
    const from = { 'x-forwarded-for': '203.0.113.4' };
    for (let i = 0; i < 50; i++) expect((await call(url, from)).status).toBe(401);
    const wrong: Record<string, string>[] = [
      { authorization: 'Bearer sk_test_short' },
      { authorization: 'Basic abc' },
      { 'x-service-secret-key': org.api_keys.sandbox.publishable_key },
      { 'x-service-publishable-key': WRONG_KEY.replace('sk_', 'pk_') },
    ];
    for (let i = 0; i < 30; i++) expect((await call(url, { ...from, ...wrong[i % wrong.length]! })).status).toBe(401);
    expect((await call(url, { ...from, authorization: `Bearer ${org.api_keys.sandbox.secret_key}` })).status).toBe(429);
  });

  it('does not count a right key refused by the access table (a Publishable Key on a Secret-only route)', async () => {
    const from = '203.0.113.5';
    const pk = org.api_keys.sandbox.publishable_key;
    for (let i = 0; i < 40; i++) {
      const reply = await call(`${platform.gatewayUrl}/v1/products/prod_x`, {
        authorization: `Bearer ${pk}`,
        'x-forwarded-for': from,
      });
      expect(reply.status).toBe(401);
    }
    expect((await products(from, pk)).status).toBe(200);
  });

  it('limits wrong admin tokens the same way, per address', async () => {
    const admin = (from: string, token: string) =>
      call(`${platform.gatewayUrl}/admin/v1/organizations/${org.id}`, {
        authorization: `Bearer ${token}`,
        'x-forwarded-for': from,
      });
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await admin('198.51.100.1', `wrong-${i}`)).status);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(401));
    expect(statuses.slice(30)).toEqual(Array(70).fill(429));
    const right = await admin('198.51.100.1', ADMIN_TOKEN);
    expect(right.status).toBe(429);
    expect(right.body.error.code).toBe('rate_limit_exceeded');
    expect(right.headers.get('retry-after')).toMatch(/^\d+$/);

    expect((await admin('198.51.100.2', ADMIN_TOKEN)).status).toBe(200);
    // API keys have their own budget: the address is not blocked from the public API.
    expect((await products('198.51.100.1', org.api_keys.sandbox.secret_key)).status).toBe(200);

    clock = new Date(clock.getTime() + 60_000);
    expect((await admin('198.51.100.1', ADMIN_TOKEN)).status).toBe(200);
  });
});

describe('clientAddress', () => {
  const of = (ip: string) => clientAddress({ ip, socket: {} as never });

  it('counts IPv4 as is, IPv4-mapped IPv6 as IPv4, and IPv6 per /64', () => {
    expect(of('203.0.113.9')).toBe('203.0.113.9');
    expect(of('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(of('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(of('2001:db8:1:2::ffff')).toBe('2001:db8:1:2::/64');
    expect(of('2001:0DB8:0001:0002:abcd::1')).toBe('2001:db8:1:2::/64');
    expect(of('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(of('::1')).toBe('0:0:0:0::/64');
    expect(of('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(of('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/64');
  });
});

describeWithServer('REDIS_URL', 'failed authentication, shared in Redis', (redisUrl) => {
  let platform: Platform;
  let second: Awaited<ReturnType<typeof startGateway>>;
  const clock = new Date(START);
  let org: CreatedOrganization;

  beforeAll(async () => {
    const config = { REDIS_URL: redisUrl, RATE_LIMIT_PREFIX: `auth-test-${randomUUID()}:`, TRUST_PROXY: 'loopback' };
    platform = await startPlatform({ now: () => clock, config });
    second = await startGateway(
      platform.infrastructure,
      { CATALOG_SERVICE_URL: platform.catalog.service.url, ...config },
      platform.gateway.service.context.store.tables.schema.replaceAll('"', ''),
      () => clock,
    );
    org = await clientOf(platform.gatewayUrl).createOrganization();
  });
  afterAll(async () => {
    await second.service.shutdown();
    await platform.stop();
  });

  it('lets two gateways share one budget of failures per address', async () => {
    const products = (gateway: string, key: string) =>
      call(`${gateway}/v1/products`, { authorization: `Bearer ${key}`, 'x-forwarded-for': '192.0.2.7' });
    for (let i = 0; i < 15; i++) {
      expect((await products(platform.gatewayUrl, WRONG_KEY)).status).toBe(401);
      expect((await products(second.service.url, WRONG_KEY)).status).toBe(401);
    }
    expect((await products(platform.gatewayUrl, org.api_keys.sandbox.secret_key)).status).toBe(429);
    expect((await products(second.service.url, org.api_keys.sandbox.secret_key)).status).toBe(429);
    const admin = await call(`${second.service.url}/admin/v1/organizations/${org.id}`, {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      'x-forwarded-for': '192.0.2.7',
    });
    expect(admin.status).toBe(200);
  });
});
