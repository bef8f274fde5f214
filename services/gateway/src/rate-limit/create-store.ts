import { MemoryRateLimitStore } from './memory-store';
import { RedisRateLimitStore } from './redis-store';
import type { ClosableRateLimitStore } from './store';

export interface CreateRateLimitStoreOptions {
  /** Redis key prefix; see RedisRateLimitStore. */
  prefix?: string;
  /** Redis connection errors. */
  onError?: (error: Error) => void;
}

/**
 * Redis when `REDIS_URL` is set, so several gateways share one budget per key; otherwise an
 * in-memory store, correct for a single gateway.
 */
export function createRateLimitStore(
  env: { REDIS_URL?: string | undefined },
  options: CreateRateLimitStoreOptions = {},
): ClosableRateLimitStore {
  const url = env.REDIS_URL?.trim();
  if (url) return new RedisRateLimitStore({ url, prefix: options.prefix, onError: options.onError });
  return new MemoryRateLimitStore();
}
