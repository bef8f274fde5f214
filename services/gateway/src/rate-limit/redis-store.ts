import { Redis } from 'ioredis';
import {
  checkHitArguments,
  fixedWindow,
  resultOf,
  type ClosableRateLimitStore,
  type FixedWindow,
  type GuardedHit,
  type RateLimitGuard,
  type RateLimitResult,
} from './store';

/**
 * One round trip, atomic: count the hit, and give the key an expiry when it has none (a new
 * window's key). Checking PTTL rather than `count == 1` also repairs a key that somehow lost
 * its expiry, so no key can live forever.
 */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return count
`;

/**
 * `hitUnlessSpent` in one round trip, atomic: the guard's count (KEYS[1]) and, unless it has
 * reached ARGV[1], HIT_SCRIPT on KEYS[2] with the expiry ARGV[2]. Answers {guard count, hit
 * count}, the hit count -1 when the guard was spent. (Two keys: a Redis Cluster would need them
 * in one hash slot; the gateway uses one Redis.)
 */
const GUARDED_HIT_SCRIPT = `
local guard = tonumber(redis.call('GET', KEYS[1]) or '0')
if guard >= tonumber(ARGV[1]) then
  return {guard, -1}
end
local count = redis.call('INCR', KEYS[2])
if redis.call('PTTL', KEYS[2]) < 0 then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return {guard, count}
`;

const COMMAND = 'billingRateLimitHit';
const GUARDED_COMMAND = 'billingRateLimitGuardedHit';

/** Keys outlive their window by this much, so gateways with slightly skewed clocks still agree. */
const EXPIRY_GRACE_MS = 5_000;

const ttlOf = (window: FixedWindow, now: number) => Math.max(1, window.endMs - now) + EXPIRY_GRACE_MS;

type HitCommand = (key: string, ttlMs: number) => Promise<number>;
type GuardedHitCommand = (
  guardKey: string,
  key: string,
  guardLimit: number,
  ttlMs: number,
) => Promise<[number, number]>;

export interface RedisRateLimitStoreOptions {
  /** A client to use; the store does not close it. Give either `redis` or `url`. */
  redis?: Redis;
  /** A Redis URL; the store opens (and on `close`, quits) its own client. */
  url?: string;
  /** Prefix of every key; tests use a unique one for isolation. Default `billing:ratelimit:`. */
  prefix?: string;
  /**
   * For an owned client: a command without an answer within this time fails, so a slow or
   * unreachable Redis costs a request at most this long before the middleware fails open.
   * Default 250 ms.
   */
  commandTimeoutMs?: number;
  /** Connection errors of an owned client (ioredis reconnects by itself). */
  onError?: (error: Error) => void;
}

/**
 * Fixed-window counters shared by every gateway that uses the same Redis (and prefix). Window
 * ids come from the caller's `now`, not from Redis TIME, so tests can drive the clock; keys are
 * `<prefix><windowMs>:<bucket>:<windowId>` and expire shortly after their window ends.
 */
export class RedisRateLimitStore implements ClosableRateLimitStore {
  readonly prefix: string;
  private readonly redis: Redis;
  private readonly owned: boolean;
  private readonly hitCommand: HitCommand;
  private readonly guardedHitCommand: GuardedHitCommand;

  constructor(options: RedisRateLimitStoreOptions) {
    this.prefix = options.prefix ?? 'billing:ratelimit:';
    if (options.redis) {
      this.redis = options.redis;
      this.owned = false;
    } else if (options.url) {
      this.redis = new Redis(options.url, {
        commandTimeout: options.commandTimeoutMs ?? 250,
        // Fail fast instead of replaying a hit many times across reconnects.
        maxRetriesPerRequest: 1,
        connectionName: 'gateway-rate-limit',
        // A socket that never connected never closes cleanly; do not keep the process alive 2 s for it.
        disconnectTimeout: 200,
      });
      this.owned = true;
      // Without a listener ioredis prints every connection error; they are expected while Redis is down.
      this.redis.on('error', (error: Error) => options.onError?.(error));
    } else {
      throw new TypeError('RedisRateLimitStore needs a redis client or a url');
    }
    this.hitCommand = this.defineScript<HitCommand>(COMMAND, 1, HIT_SCRIPT);
    this.guardedHitCommand = this.defineScript<GuardedHitCommand>(GUARDED_COMMAND, 2, GUARDED_HIT_SCRIPT);
  }

  async hit(bucket: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult> {
    checkHitArguments(limit, windowMs, now);
    const window = fixedWindow(now, windowMs);
    const count = Number(await this.hitCommand(this.keyOf(bucket, windowMs, window.id), ttlOf(window, now)));
    return resultOf(count, limit, window);
  }

  async count(bucket: string, windowMs: number, now: number): Promise<number> {
    checkHitArguments(0, windowMs, now);
    const value = await this.redis.get(this.keyOf(bucket, windowMs, fixedWindow(now, windowMs).id));
    return value === null ? 0 : Number(value);
  }

  async hitUnlessSpent(
    guard: RateLimitGuard,
    bucket: string,
    limit: number,
    windowMs: number,
    now: number,
  ): Promise<GuardedHit> {
    checkHitArguments(guard.limit, guard.windowMs, now);
    checkHitArguments(limit, windowMs, now);
    const window = fixedWindow(now, windowMs);
    const [guardCount, count] = await this.guardedHitCommand(
      this.keyOf(guard.bucket, guard.windowMs, fixedWindow(now, guard.windowMs).id),
      this.keyOf(bucket, windowMs, window.id),
      guard.limit,
      ttlOf(window, now),
    );
    if (Number(count) < 0) return { guardCount: Number(guardCount) };
    return { guardCount: Number(guardCount), result: resultOf(Number(count), limit, window) };
  }

  private keyOf(bucket: string, windowMs: number, windowId: number): string {
    return `${this.prefix}${windowMs}:${bucket}:${windowId}`;
  }

  /** defineCommand sends EVALSHA and falls back to EVAL once per connection when the script is not cached. */
  private defineScript<Command extends (...args: never[]) => unknown>(
    name: string,
    numberOfKeys: number,
    lua: string,
  ): Command {
    this.redis.defineCommand(name, { numberOfKeys, lua });
    const command = (this.redis as unknown as Record<string, Command>)[name];
    if (!command) throw new Error(`ioredis did not define ${name}`);
    return command.bind(this.redis) as Command;
  }

  async close(): Promise<void> {
    if (!this.owned || this.redis.status === 'end') return;
    if (this.redis.status !== 'ready') {
      // Not connected (Redis down): QUIT would wait in the offline queue for a reconnect.
      this.redis.disconnect();
      return;
    }
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
