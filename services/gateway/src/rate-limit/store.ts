/**
 * The rate-limit port. Algorithm: **fixed window**. Time is cut into windows of `windowMs`
 * aligned on the Unix epoch (for 60 s windows: whole minutes); each bucket counts its hits per
 * window, and a hit is allowed while the count is at most `limit`. We chose it over a sliding
 * window because it is one atomic INCR in Redis, it gives exact `X-RateLimit-Remaining` and
 * `X-RateLimit-Reset` values (the reset is simply the end of the window, as the spec's headers
 * expect), and every gateway agrees on the window boundaries without coordination. The known
 * cost is a burst of up to 2 x limit across a window boundary, acceptable for abuse protection.
 *
 * `now` always comes from the caller (an injected clock), never from the store's own clock, so
 * tests can drive windows and several gateways compute the same window ids.
 */
export interface RateLimitResult {
  /** Whether this hit fits in the budget. */
  allowed: boolean;
  limit: number;
  /** Hits left in the current window after this one; never negative. */
  remaining: number;
  /** End of the current window, as Unix time in seconds. */
  resetAt: number;
}

export interface RateLimitStore {
  /** Counts one hit on `bucket` in the window containing `now` (ms since the epoch). */
  hit(bucket: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult>;
  /** Releases what the store holds (a Redis connection); optional for stores that hold nothing. */
  close?(): Promise<void>;
}

/** A budget that another hit needs unspent: e.g. an address's failed authentications. */
export interface RateLimitGuard {
  bucket: string;
  /** Spent when its count has reached this. */
  limit: number;
  windowMs: number;
}

/** What `hitUnlessSpent` found: the guard's count, and the hit's result unless the guard was spent. */
export interface GuardedHit {
  guardCount: number;
  /** Absent when the guard was spent: nothing was counted. */
  result?: RateLimitResult;
}

/** A store that can also read a bucket without counting (for limits on failures, counted apart). */
export interface CountingRateLimitStore extends RateLimitStore {
  /** The hits counted on `bucket` in the window containing `now`, without counting one. */
  count(bucket: string, windowMs: number, now: number): Promise<number>;
  /**
   * `count` of the guard and, unless it has reached its limit, `hit` on `bucket`: in one round
   * trip (and atomically) where the store is remote, so that a request pays one, not two.
   */
  hitUnlessSpent(
    guard: RateLimitGuard,
    bucket: string,
    limit: number,
    windowMs: number,
    now: number,
  ): Promise<GuardedHit>;
}

/** A store that holds resources (a Redis connection); the gateway closes it on shutdown. */
export interface ClosableRateLimitStore extends CountingRateLimitStore {
  close(): Promise<void>;
}

export interface FixedWindow {
  /** floor(now / windowMs): the same on every gateway for the same instant. */
  id: number;
  /** Exclusive end of the window, in ms since the epoch. */
  endMs: number;
  /** End of the window in Unix seconds (rounded up for windows not aligned on seconds). */
  resetAt: number;
}

export function fixedWindow(now: number, windowMs: number): FixedWindow {
  const id = Math.floor(now / windowMs);
  const endMs = (id + 1) * windowMs;
  return { id, endMs, resetAt: Math.ceil(endMs / 1000) };
}

export function checkHitArguments(limit: number, windowMs: number, now: number): void {
  if (!Number.isInteger(limit) || limit < 0) throw new RangeError(`limit must be a non-negative integer, got ${limit}`);
  if (!Number.isInteger(windowMs) || windowMs <= 0) {
    throw new RangeError(`windowMs must be a positive integer, got ${windowMs}`);
  }
  if (!Number.isFinite(now)) throw new RangeError(`now must be a finite number, got ${now}`);
}

/** The result of the `count`-th hit in a window. */
export function resultOf(count: number, limit: number, window: FixedWindow): RateLimitResult {
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetAt: window.resetAt };
}
