import type { ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { ApiError } from '@billing/contracts';
import type { RateLimitResult, RateLimitStore } from './store';
import { sendRefusal } from '../refusals';

export const RATE_LIMIT_HEADERS = {
  limit: 'X-RateLimit-Limit',
  remaining: 'X-RateLimit-Remaining',
  reset: 'X-RateLimit-Reset',
  retryAfter: 'Retry-After',
} as const;

export interface RateLimitRule {
  /** Who shares the budget, e.g. `key:<key id>` or `promo-ip:<ip>`. */
  bucket: string;
  limit: number;
  /** Overrides the middleware's window for this rule (e.g. 10 per hour per customer). */
  windowMs?: number;
}

export interface RateLimitOptions {
  store: RateLimitStore;
  /** The rule for this request, or undefined to leave the request alone (no headers, no count). */
  limitFor: (req: Request, res: Response) => RateLimitRule | undefined;
  /** Window length in ms; default one minute. */
  windowMs?: number;
  /** Injected clock, ms since the epoch. */
  now?: () => number;
  /** Called when the store fails and the request is let through. */
  onError?: (error: unknown, req: Request, res: Response) => void;
  /** Writes the 429; default: the error envelope as JSON (the recur-tw SDK's shape for its calls). */
  refuse?: (req: Request, res: Response, error: ApiError) => void;
}

const refuseWithJson = (_req: Request, res: Response, error: ApiError) => sendRefusal(res, error);

/**
 * Counts the request against its bucket, sets `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
 * `X-RateLimit-Reset` (Unix seconds) on the response, and past the limit answers 429
 * `rate_limit_exceeded` with `Retry-After`.
 *
 * When the store fails (Redis down or slow), the request goes through without headers: the rate
 * limit protects the platform from abuse, it is not what makes a request correct, so a Redis
 * outage must not turn into a full API outage. The failure is reported through `onError`.
 *
 * Mounting two limiters on one route counts both; the headers show the one that ran last.
 */
export function rateLimit(options: RateLimitOptions): RequestHandler {
  const { store, limitFor, onError } = options;
  const defaultWindowMs = options.windowMs ?? 60_000;
  const clock = options.now ?? Date.now;

  return async (req, res, next) => {
    const rule = limitFor(req, res);
    if (!rule) return next();

    const now = clock();
    const windowMs = rule.windowMs ?? defaultWindowMs;
    let result;
    try {
      result = await store.hit(rule.bucket, rule.limit, windowMs, now);
    } catch (error) {
      onError?.(error, req, res);
      return next();
    }

    const error = showLimit(res, result, windowMs, now);
    if (!error) return next();
    (options.refuse ?? refuseWithJson)(req, res, error);
  };
}

/**
 * Sets the `X-RateLimit-*` headers of a counted hit; past the limit also `Retry-After`, and
 * returns the 429 to answer.
 */
export function showLimit(
  res: ServerResponse,
  result: RateLimitResult,
  windowMs: number,
  now: number,
): ApiError | undefined {
  res.setHeader(RATE_LIMIT_HEADERS.limit, String(result.limit));
  res.setHeader(RATE_LIMIT_HEADERS.remaining, String(result.remaining));
  res.setHeader(RATE_LIMIT_HEADERS.reset, String(result.resetAt));
  if (result.allowed) return undefined;
  const retryAfter = Math.max(1, result.resetAt - Math.floor(now / 1000));
  res.setHeader(RATE_LIMIT_HEADERS.retryAfter, String(retryAfter));
  return ApiError.of(
    'rate_limit_exceeded',
    `Rate limit of ${result.limit} requests per ${describeWindow(windowMs)} exceeded; retry in ${retryAfter} s`,
  );
}

function describeWindow(windowMs: number): string {
  if (windowMs === 60_000) return 'minute';
  if (windowMs === 3_600_000) return 'hour';
  if (windowMs % 1000 === 0) return `${windowMs / 1000} s`;
  return `${windowMs} ms`;
}
