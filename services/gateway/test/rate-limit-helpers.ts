import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { type CountingRateLimitStore, rateLimit, type RateLimitOptions, type RateLimitStore } from '../src/rate-limit';

/** 2030-01-01T00:00:00Z: on a minute boundary, so windows of 60 s start here. */
export const T0 = Date.UTC(2030, 0, 1, 0, 0, 0);

export interface Clock {
  now: () => number;
  set(ms: number): void;
  advance(ms: number): void;
}

export function fakeClock(start = T0): Clock {
  let current = start;
  return {
    now: () => current,
    set: (ms) => void (current = ms),
    advance: (ms) => void (current += ms),
  };
}

export interface TestServer {
  url: string;
  close(): Promise<void>;
}

export async function listen(app: Express): Promise<TestServer> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A tiny "gateway": the caller's key is the `x-api-key` header; no header, no limit.
 * GET /ping answers 200 `{ ok: true }`.
 */
export function limitedApp(
  store: RateLimitStore,
  options: { limit: number; clock: Clock } & Partial<RateLimitOptions>,
): Express {
  const app = express();
  app.use(
    rateLimit({
      store,
      now: options.clock.now,
      windowMs: options.windowMs,
      onError: options.onError,
      limitFor:
        options.limitFor ??
        ((req) => {
          const key = req.get('x-api-key');
          return key ? { bucket: `key:${key}`, limit: options.limit } : undefined;
        }),
    }),
  );
  app.get('/ping', (_req, res) => void res.json({ ok: true }));
  return app;
}

export async function ping(server: TestServer, key?: string): Promise<Response> {
  return fetch(`${server.url}/ping`, { headers: key ? { 'x-api-key': key } : {} });
}

export function limitHeaders(response: Response): {
  limit: string | null;
  remaining: string | null;
  reset: string | null;
} {
  return {
    limit: response.headers.get('x-ratelimit-limit'),
    remaining: response.headers.get('x-ratelimit-remaining'),
    reset: response.headers.get('x-ratelimit-reset'),
  };
}

/**
 * The HTTP behaviour every store must give behind the middleware; run against the memory store
 * and against Redis. `makeStore` is called once per test.
 */
export function itLimitsOverHttp(makeStore: () => RateLimitStore & { close?(): Promise<void> }): void {
  let store: RateLimitStore & { close?(): Promise<void> };
  let server: TestServer;
  let clock: Clock;

  beforeEach(async () => {
    store = makeStore();
    clock = fakeClock(T0 + 1_500);
    server = await listen(limitedApp(store, { limit: 3, clock }));
  });
  afterEach(async () => {
    await server.close();
    await store.close?.();
  });

  const resetAt = String(T0 / 1000 + 60);

  it('sets the X-RateLimit headers on every limited response', async () => {
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const response = await ping(server, 'k1');
      expect(response.status).toBe(200);
      seen.push(limitHeaders(response));
    }
    expect(seen).toEqual([
      { limit: '3', remaining: '2', reset: resetAt },
      { limit: '3', remaining: '1', reset: resetAt },
      { limit: '3', remaining: '0', reset: resetAt },
    ]);
  });

  it('answers 429 rate_limit_exceeded with the headers and Retry-After past the limit', async () => {
    for (let i = 0; i < 3; i++) expect((await ping(server, 'k1')).status).toBe(200);
    clock.advance(10_000); // T0 + 11.5 s: 48.5 s left in the window, 49 whole seconds to the reset
    for (let i = 0; i < 2; i++) {
      const response = await ping(server, 'k1');
      expect(response.status).toBe(429);
      expect(limitHeaders(response)).toEqual({ limit: '3', remaining: '0', reset: resetAt });
      expect(response.headers.get('retry-after')).toBe('49');
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body).toEqual({ error: { code: 'rate_limit_exceeded', message: expect.any(String) } });
      expect(body.error.message).toContain('3 requests per minute');
    }
  });

  it('keeps a separate budget per bucket and leaves unlimited requests alone', async () => {
    for (let i = 0; i < 4; i++) await ping(server, 'k1');
    expect((await ping(server, 'k1')).status).toBe(429);
    const other = await ping(server, 'k2');
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2');
    const anonymous = await ping(server);
    expect(anonymous.status).toBe(200);
    expect(limitHeaders(anonymous)).toEqual({ limit: null, remaining: null, reset: null });
  });

  it('starts a fresh budget when the clock enters the next window', async () => {
    for (let i = 0; i < 3; i++) await ping(server, 'k1');
    clock.set(T0 + 59_999);
    expect((await ping(server, 'k1')).status).toBe(429);
    clock.set(T0 + 60_000);
    const response = await ping(server, 'k1');
    expect(response.status).toBe(200);
    expect(limitHeaders(response)).toEqual({ limit: '3', remaining: '2', reset: String(T0 / 1000 + 120) });
  });
}

/**
 * `hitUnlessSpent`, the one round trip of a request whose key is known: the guard (an address's
 * failures) is read, not counted; while it is under its limit the hit counts as `hit` would,
 * once it is spent nothing is counted. Run against the memory store and against Redis.
 */
export function itHitsUnlessTheGuardIsSpent(
  makeStore: () => CountingRateLimitStore & { close(): Promise<void> },
): void {
  const MINUTE = 60_000;
  const guard = { bucket: 'failures', limit: 2, windowMs: MINUTE };
  let store: CountingRateLimitStore & { close(): Promise<void> };
  beforeEach(() => {
    store = makeStore();
  });
  afterEach(() => store.close());

  it('counts the hit while the guard is under its limit, and nothing once it is spent', async () => {
    expect(await store.hitUnlessSpent(guard, 'key', 5, MINUTE, T0)).toEqual({
      guardCount: 0,
      result: { allowed: true, limit: 5, remaining: 4, resetAt: T0 / 1000 + 60 },
    });
    await store.hit('failures', 2, MINUTE, T0);
    expect((await store.hitUnlessSpent(guard, 'key', 5, MINUTE, T0)).result?.remaining).toBe(3);
    await store.hit('failures', 2, MINUTE, T0);
    expect(await store.hitUnlessSpent(guard, 'key', 5, MINUTE, T0 + 1)).toEqual({ guardCount: 2 });
    expect(await store.count('failures', MINUTE, T0 + 2)).toBe(2);
    // Refused by the guard: the key's budget was not touched.
    expect(await store.count('key', MINUTE, T0 + 2)).toBe(2);
    // The guard's window passes: the hit counts again, in its own new window.
    expect(await store.hitUnlessSpent(guard, 'key', 5, MINUTE, T0 + MINUTE)).toEqual({
      guardCount: 0,
      result: { allowed: true, limit: 5, remaining: 4, resetAt: T0 / 1000 + 120 },
    });
  });

  it('refuses the hit past its own limit, as hit does', async () => {
    const results = [];
    for (let i = 0; i < 3; i++) results.push((await store.hitUnlessSpent(guard, 'key', 2, MINUTE, T0)).result);
    expect(results.map((r) => [r?.allowed, r?.remaining])).toEqual([
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
  });
}
