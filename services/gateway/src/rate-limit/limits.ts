import type { Environment } from '@billing/contracts';

/** Spec, Limits: the general rate limit per API key, in requests per minute. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

export const RATE_LIMITS: Readonly<Record<Environment, number>> = {
  SANDBOX: 120,
  PRODUCTION: 600,
};
export const SANDBOX_RATE_LIMIT = RATE_LIMITS.SANDBOX;
export const PRODUCTION_RATE_LIMIT = RATE_LIMITS.PRODUCTION;

/** Spec, Limits: promotion-code validation, which has limits of its own. */
export const PROMOTION_VALIDATION_LIMITS = {
  /** Publishable Key: per client IP. */
  publishablePerIp: { limit: 5, windowMs: 60_000 },
  /** Publishable Key: per customer. */
  publishablePerCustomer: { limit: 10, windowMs: 3_600_000 },
  /** Secret Key: per API key (not per IP). */
  secretPerKey: { limit: 60, windowMs: 60_000 },
} as const;

/**
 * Publishable-Key entitlement checks per client IP (beyond the spec): a page may ask for its
 * signed-in user, but not walk through external ids.
 */
export const PUBLISHABLE_ENTITLEMENT_LIMITS = { perIp: { limit: 30, windowMs: 60_000 } } as const;

/**
 * Failed authentication per client address (beyond the spec): past the limit, every attempt
 * from that address answers 429, with a right key or token too, until the window ends.
 */
export const FAILED_AUTHENTICATION_LIMITS = {
  apiKeyPerAddress: { limit: 30, windowMs: 60_000 },
  adminTokenPerAddress: { limit: 30, windowMs: 60_000 },
} as const;

/**
 * Hosted pages need no key, so they are limited per client IP (beyond the spec): a payment-link
 * visit opens a checkout session, and a pay attempt charges a card (card testing).
 */
export const HOSTED_PAGE_LIMITS = {
  paymentLinkVisitsPerIp: { limit: 30, windowMs: 60_000 },
  payAttemptsPerIp: { limit: 10, windowMs: 60_000 },
} as const;
