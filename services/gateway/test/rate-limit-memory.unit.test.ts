import { MemoryRateLimitStore, RATE_LIMITS, fixedWindow } from '../src/rate-limit';
import { T0, itHitsUnlessTheGuardIsSpent } from './rate-limit-helpers';

const MINUTE = 60_000;

describe('fixedWindow', () => {
  it('aligns windows on the epoch and reports the end in Unix seconds', () => {
    expect(fixedWindow(T0, MINUTE)).toEqual({ id: T0 / MINUTE, endMs: T0 + MINUTE, resetAt: T0 / 1000 + 60 });
    expect(fixedWindow(T0 + MINUTE - 1, MINUTE).id).toBe(T0 / MINUTE);
    expect(fixedWindow(T0 + MINUTE, MINUTE).id).toBe(T0 / MINUTE + 1);
    // A window that does not end on a whole second resets at the next whole second.
    expect(fixedWindow(0, 1500).resetAt).toBe(2);
  });
});

describe('MemoryRateLimitStore', () => {
  describe('hitUnlessSpent', () => {
    itHitsUnlessTheGuardIsSpent(() => new MemoryRateLimitStore());
  });

  it('allows up to the limit in one window, then refuses', async () => {
    const store = new MemoryRateLimitStore();
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await store.hit('k', 3, MINUTE, T0 + i * 1000));
    expect(results.map((r) => [r.allowed, r.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(results.every((r) => r.limit === 3 && r.resetAt === T0 / 1000 + 60)).toBe(true);
  });

  it('starts over exactly at the window boundary', async () => {
    const store = new MemoryRateLimitStore();
    await store.hit('k', 1, MINUTE, T0);
    expect((await store.hit('k', 1, MINUTE, T0 + MINUTE - 1)).allowed).toBe(false);
    const next = await store.hit('k', 1, MINUTE, T0 + MINUTE);
    expect(next).toEqual({ allowed: true, limit: 1, remaining: 0, resetAt: T0 / 1000 + 120 });
  });

  it('never reports a negative remaining count, however far past the limit', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < 50; i++) {
      const result = await store.hit('k', 5, MINUTE, T0);
      expect(result.remaining).toBeGreaterThanOrEqual(0);
      expect(result.allowed).toBe(i < 5);
    }
    expect((await store.hit('zero', 0, MINUTE, T0)).allowed).toBe(false);
    expect((await store.hit('zero', 0, MINUTE, T0)).remaining).toBe(0);
  });

  it('keeps buckets and window lengths apart', async () => {
    const store = new MemoryRateLimitStore();
    await store.hit('a', 1, MINUTE, T0);
    expect((await store.hit('b', 1, MINUTE, T0)).allowed).toBe(true);
    expect((await store.hit('a', 1, 3_600_000, T0)).allowed).toBe(true);
    expect((await store.hit('a', 1, MINUTE, T0)).allowed).toBe(false);
  });

  it('evicts buckets whose window has ended, driven by the caller clock', async () => {
    const store = new MemoryRateLimitStore({ sweepIntervalMs: MINUTE });
    for (let i = 0; i < 100; i++) await store.hit(`key-${i}`, 10, MINUTE, T0 + 1000);
    expect(store.size).toBe(100);
    // Within the sweep interval and the window, nothing goes.
    await store.hit('key-0', 10, MINUTE, T0 + 30_000);
    expect(store.size).toBe(100);
    // A minute later every old window has ended: only the bucket just hit remains.
    await store.hit('fresh', 10, MINUTE, T0 + 61_000);
    expect(store.size).toBe(1);
  });

  it('sweeps when the clock goes backwards, and forgets the oldest bucket when full', async () => {
    const store = new MemoryRateLimitStore({ sweepIntervalMs: 10 * MINUTE, maxBuckets: 3 });
    for (const key of ['a', 'b', 'c']) await store.hit(key, 1, MINUTE, T0);
    await store.hit('d', 1, MINUTE, T0 + 1);
    expect(store.size).toBe(3);
    // 'a' was forgotten to make room, so it has a fresh budget; 'b' still counts.
    expect((await store.hit('a', 1, MINUTE, T0 + 2)).allowed).toBe(true);
    expect((await store.hit('c', 1, MINUTE, T0 + 2)).allowed).toBe(false);
    expect(store.size).toBe(3);
  });

  it('rejects nonsense arguments', async () => {
    const store = new MemoryRateLimitStore();
    await expect(store.hit('k', -1, MINUTE, T0)).rejects.toThrow(RangeError);
    await expect(store.hit('k', 1, 0, T0)).rejects.toThrow(RangeError);
    await expect(store.hit('k', 1, MINUTE, Number.NaN)).rejects.toThrow(RangeError);
  });

  it('counts the hits of the current window without counting one', async () => {
    const store = new MemoryRateLimitStore();
    expect(await store.count('ip:1', 60_000, T0)).toBe(0);
    for (let i = 0; i < 3; i++) await store.hit('ip:1', 10, 60_000, T0 + i);
    expect(await store.count('ip:1', 60_000, T0 + 59_999)).toBe(3);
    expect(await store.count('ip:1', 60_000, T0 + 59_999)).toBe(3);
    expect(await store.count('ip:1', 3_600_000, T0)).toBe(0);
    expect(await store.count('ip:1', 60_000, T0 + 60_000)).toBe(0);
  });

  it('knows the spec limits', () => {
    expect(RATE_LIMITS).toEqual({ SANDBOX: 120, PRODUCTION: 600 });
  });
});
