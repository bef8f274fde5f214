export {
  checkHitArguments,
  fixedWindow,
  type ClosableRateLimitStore,
  type CountingRateLimitStore,
  type GuardedHit,
  type RateLimitGuard,
  type FixedWindow,
  type RateLimitResult,
  type RateLimitStore,
} from './store';
export { MemoryRateLimitStore, type MemoryRateLimitStoreOptions } from './memory-store';
export { RedisRateLimitStore, type RedisRateLimitStoreOptions } from './redis-store';
export { createRateLimitStore, type CreateRateLimitStoreOptions } from './create-store';
export { rateLimit, showLimit, RATE_LIMIT_HEADERS, type RateLimitOptions, type RateLimitRule } from './middleware';
export {
  FAILED_AUTHENTICATION_LIMITS,
  HOSTED_PAGE_LIMITS,
  PRODUCTION_RATE_LIMIT,
  PROMOTION_VALIDATION_LIMITS,
  PUBLISHABLE_ENTITLEMENT_LIMITS,
  RATE_LIMIT_WINDOW_MS,
  RATE_LIMITS,
  SANDBOX_RATE_LIMIT,
} from './limits';
export { promotionValidationLimits } from './validation-limits';
export { hostedPageLimits } from './hosted-page-limits';
