import {
  checkHitArguments,
  fixedWindow,
  resultOf,
  type ClosableRateLimitStore,
  type GuardedHit,
  type RateLimitGuard,
  type RateLimitResult,
} from './store';

export interface MemoryRateLimitStoreOptions {
  /** How often (by the injected clock) expired buckets are swept out. Default 60 s. */
  sweepIntervalMs?: number;
  /**
   * Hard cap on the number of buckets. When reached, expired buckets are swept at once; if
   * the map is still full, the oldest bucket is forgotten (that caller gets a fresh budget,
   * which errs on the lenient side rather than letting memory grow). Default 100 000.
   */
  maxBuckets?: number;
}

interface Entry {
  windowId: number;
  /** End of the window; the entry is useless from then on. */
  expiresAt: number;
  count: number;
}

/**
 * Fixed-window counters in a Map, for a single gateway. Eviction needs no timer: expired
 * buckets are swept during `hit`, driven by the caller's clock, so memory stays bounded by the
 * buckets active in one sweep interval plus one window.
 */
export class MemoryRateLimitStore implements ClosableRateLimitStore {
  private readonly buckets = new Map<string, Entry>();
  private readonly sweepIntervalMs: number;
  private readonly maxBuckets: number;
  private lastSweepAt = Number.NEGATIVE_INFINITY;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    this.sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    this.maxBuckets = options.maxBuckets ?? 100_000;
  }

  /** Number of buckets held, expired or not (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  async hit(bucket: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult> {
    checkHitArguments(limit, windowMs, now);
    // A clock that went backwards (tests, NTP steps) also triggers a sweep.
    if (now - this.lastSweepAt >= this.sweepIntervalMs || now < this.lastSweepAt) this.sweep(now);

    const window = fixedWindow(now, windowMs);
    // The window length is part of the key: the same bucket name may be limited per minute and per hour.
    const key = `${windowMs}:${bucket}`;
    let entry = this.buckets.get(key);
    if (!entry || entry.windowId !== window.id) {
      if (!entry && this.buckets.size >= this.maxBuckets) this.makeRoom(now);
      entry = { windowId: window.id, expiresAt: window.endMs, count: 0 };
      this.buckets.set(key, entry);
    }
    // Capped at limit + 1: enough to say "over", and the number cannot grow without bound.
    entry.count = Math.min(entry.count + 1, limit + 1);
    return resultOf(entry.count, limit, window);
  }

  async count(bucket: string, windowMs: number, now: number): Promise<number> {
    checkHitArguments(0, windowMs, now);
    const entry = this.buckets.get(`${windowMs}:${bucket}`);
    return entry && entry.windowId === fixedWindow(now, windowMs).id ? entry.count : 0;
  }

  async hitUnlessSpent(
    guard: RateLimitGuard,
    bucket: string,
    limit: number,
    windowMs: number,
    now: number,
  ): Promise<GuardedHit> {
    const guardCount = await this.count(guard.bucket, guard.windowMs, now);
    if (guardCount >= guard.limit) return { guardCount };
    return { guardCount, result: await this.hit(bucket, limit, windowMs, now) };
  }

  /** Drops every bucket whose window has ended by `now`. */
  sweep(now: number): void {
    this.lastSweepAt = now;
    for (const [key, entry] of this.buckets) {
      if (entry.expiresAt <= now) this.buckets.delete(key);
    }
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }

  private makeRoom(now: number): void {
    this.sweep(now);
    // Still full of live buckets: forget the oldest one (Map keeps insertion order).
    while (this.buckets.size >= this.maxBuckets) {
      const oldest = this.buckets.keys().next();
      if (oldest.done) break;
      this.buckets.delete(oldest.value);
    }
  }
}
