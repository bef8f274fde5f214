import { Redis } from 'ioredis';
import { checkHitArguments, fixedWindow, resultOf, type ClosableRateLimitStore, type RateLimitResult } from './store';

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

const COMMAND = 'billingRateLimitHit';

/** Keys outlive their window by this much, so gateways with slightly skewed clocks still agree. */
const EXPIRY_GRACE_MS = 5_000;

type HitCommand = (key: string, ttlMs: number) => Promise<number>;

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
    // defineCommand sends EVALSHA and falls back to EVAL once per connection when the script is not cached.
    this.redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: HIT_SCRIPT });
    const command = (this.redis as unknown as Record<string, HitCommand>)[COMMAND];
    if (!command) throw new Error(`ioredis did not define ${COMMAND}`);
    this.hitCommand = command.bind(this.redis);
  }

  async hit(bucket: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult> {
    checkHitArguments(limit, windowMs, now);
    const window = fixedWindow(now, windowMs);
    const key = `${this.prefix}${windowMs}:${bucket}:${window.id}`;
    const ttlMs = Math.max(1, window.endMs - now) + EXPIRY_GRACE_MS;
    const count = Number(await this.hitCommand(key, ttlMs));
    return resultOf(count, limit, window);
  }

  async count(bucket: string, windowMs: number, now: number): Promise<number> {
    checkHitArguments(0, windowMs, now);
    const value = await this.redis.get(`${this.prefix}${windowMs}:${bucket}:${fixedWindow(now, windowMs).id}`);
    return value === null ? 0 : Number(value);
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
