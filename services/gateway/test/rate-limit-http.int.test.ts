import {
  MemoryRateLimitStore,
  RedisRateLimitStore,
  createRateLimitStore,
  type RateLimitStore,
} from '../src/rate-limit';
import { T0, fakeClock, itLimitsOverHttp, limitHeaders, limitedApp, listen, ping } from './rate-limit-helpers';

describe('rateLimit middleware with the memory store', () => {
  itLimitsOverHttp(() => new MemoryRateLimitStore());

  it('takes the window from the rule when the rule has one', async () => {
    const clock = fakeClock(T0);
    const store = new MemoryRateLimitStore();
    const server = await listen(
      limitedApp(store, { limit: 1, clock, limitFor: () => ({ bucket: 'customer:1', limit: 1, windowMs: 3_600_000 }) }),
    );
    try {
      expect((await ping(server)).status).toBe(200);
      clock.advance(30 * 60_000);
      const refused = await ping(server);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('x-ratelimit-reset')).toBe(String(T0 / 1000 + 3600));
      expect(refused.headers.get('retry-after')).toBe('1800');
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('per hour');
    } finally {
      await server.close();
    }
  });
});

describe('rateLimit middleware when the store fails', () => {
  it('lets the request through without headers and reports the error', async () => {
    const failing: RateLimitStore = { hit: () => Promise.reject(new Error('store down')) };
    const errors: unknown[] = [];
    const server = await listen(
      limitedApp(failing, { limit: 1, clock: fakeClock(), onError: (error) => void errors.push(error) }),
    );
    try {
      for (let i = 0; i < 3; i++) {
        const response = await ping(server, 'k1');
        expect(response.status).toBe(200);
        expect(limitHeaders(response)).toEqual({ limit: null, remaining: null, reset: null });
      }
      expect(errors).toHaveLength(3);
      expect((errors[0] as Error).message).toBe('store down');
    } finally {
      await server.close();
    }
  });

  it('fails open quickly when Redis cannot be reached', async () => {
    // Port 1 refuses connections; the store must not hold the request hostage.
    const store = new RedisRateLimitStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 200, onError: () => {} });
    const errors: unknown[] = [];
    const server = await listen(
      limitedApp(store, { limit: 1, clock: fakeClock(), onError: (error) => void errors.push(error) }),
    );
    try {
      const started = Date.now();
      const response = await ping(server, 'k1');
      expect(response.status).toBe(200);
      // Answered by the 200 ms command timeout, not held until Redis comes back (which is never
      // here): the bound only tells the two apart, with room for CI's two suites a core (1.1 s seen).
      expect(Date.now() - started).toBeLessThan(3000);
      expect(errors).toHaveLength(1);
    } finally {
      await server.close();
      await store.close();
    }
  });
});

describe('createRateLimitStore', () => {
  it('uses memory without REDIS_URL and Redis with it', async () => {
    const memory = createRateLimitStore({});
    expect(memory).toBeInstanceOf(MemoryRateLimitStore);
    expect(createRateLimitStore({ REDIS_URL: '  ' })).toBeInstanceOf(MemoryRateLimitStore);
    const redis = createRateLimitStore({ REDIS_URL: 'redis://127.0.0.1:1' }, { onError: () => {} });
    expect(redis).toBeInstanceOf(RedisRateLimitStore);
    await Promise.all([memory.close(), redis.close()]);
  });
});
