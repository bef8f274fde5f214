import { Redis } from 'ioredis';
import { describeWithServer, uniqueName } from '@billing/testing';
import { RedisRateLimitStore } from '../src/rate-limit';
import {
  T0,
  fakeClock,
  itHitsUnlessTheGuardIsSpent,
  itLimitsOverHttp,
  limitedApp,
  listen,
  ping,
} from './rate-limit-helpers';

const MINUTE = 60_000;

describeWithServer('REDIS_URL', 'rateLimit with the Redis store', (url) => {
  let admin: Redis;
  const prefixes: string[] = [];
  /** A fresh key prefix per test, so tests (and parallel runs) never share counters. */
  const freshPrefix = (): string => {
    const prefix = `test:${uniqueName('ratelimit')}:`;
    prefixes.push(prefix);
    return prefix;
  };

  beforeAll(() => {
    admin = new Redis(url);
  });
  afterAll(async () => {
    for (const prefix of prefixes) {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
    }
    await admin.quit();
  });

  describe('over HTTP', () => {
    itLimitsOverHttp(() => new RedisRateLimitStore({ url, prefix: freshPrefix() }));
  });

  describe('hitUnlessSpent, in one round trip', () => {
    itHitsUnlessTheGuardIsSpent(() => new RedisRateLimitStore({ url, prefix: freshPrefix() }));
  });

  describe('the store', () => {
    let store: RedisRateLimitStore;
    beforeEach(() => {
      store = new RedisRateLimitStore({ url, prefix: freshPrefix() });
    });
    afterEach(() => store.close());

    it('counts per window from the caller clock, never below zero remaining', async () => {
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await store.hit('k', 2, MINUTE, T0 + i));
      expect(results).toEqual([
        { allowed: true, limit: 2, remaining: 1, resetAt: T0 / 1000 + 60 },
        { allowed: true, limit: 2, remaining: 0, resetAt: T0 / 1000 + 60 },
        { allowed: false, limit: 2, remaining: 0, resetAt: T0 / 1000 + 60 },
        { allowed: false, limit: 2, remaining: 0, resetAt: T0 / 1000 + 60 },
      ]);
      expect(await store.hit('k', 2, MINUTE, T0 + MINUTE)).toEqual({
        allowed: true,
        limit: 2,
        remaining: 1,
        resetAt: T0 / 1000 + 120,
      });
    });

    it('gives every key an expiry shortly after its window ends', async () => {
      await store.hit('k', 5, MINUTE, T0 + 20_000);
      const keys = await admin.keys(`${store.prefix}*`);
      expect(keys).toEqual([`${store.prefix}${MINUTE}:k:${T0 / MINUTE}`]);
      const ttl = await admin.pttl(keys[0]!);
      // 40 s left in the window plus the 5 s grace.
      expect(ttl).toBeGreaterThan(40_000);
      expect(ttl).toBeLessThanOrEqual(45_000);
    });

    it('stays exact under concurrent hits', async () => {
      const results = await Promise.all(Array.from({ length: 50 }, () => store.hit('burst', 20, MINUTE, T0)));
      expect(results.filter((r) => r.allowed)).toHaveLength(20);
      expect(results.map((r) => r.remaining).sort((a, b) => a - b)[0]).toBe(0);
    });

    it('works with a client it does not own', async () => {
      const shared = new RedisRateLimitStore({ redis: admin, prefix: freshPrefix() });
      expect((await shared.hit('k', 1, MINUTE, T0)).allowed).toBe(true);
      await shared.close();
      expect(admin.status).toBe('ready');
    });
  });

  it('shares one budget between two gateways on the same Redis', async () => {
    const prefix = freshPrefix();
    const clock = fakeClock(T0 + 5_000);
    const storeA = new RedisRateLimitStore({ url, prefix });
    const storeB = new RedisRateLimitStore({ url, prefix });
    const gatewayA = await listen(limitedApp(storeA, { limit: 5, clock }));
    const gatewayB = await listen(limitedApp(storeB, { limit: 5, clock }));
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await ping(gatewayA, 'shared')).status);
      for (let i = 0; i < 2; i++) statuses.push((await ping(gatewayB, 'shared')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);

      const onA = await ping(gatewayA, 'shared');
      const onB = await ping(gatewayB, 'shared');
      expect([onA.status, onB.status]).toEqual([429, 429]);
      expect(onB.headers.get('x-ratelimit-remaining')).toBe('0');

      // Both gateways see the next window together.
      clock.advance(MINUTE);
      expect((await ping(gatewayB, 'shared')).headers.get('x-ratelimit-remaining')).toBe('4');
      expect((await ping(gatewayA, 'shared')).headers.get('x-ratelimit-remaining')).toBe('3');
    } finally {
      await Promise.all([gatewayA.close(), gatewayB.close()]);
      await Promise.all([storeA.close(), storeB.close()]);
    }
  });
});
