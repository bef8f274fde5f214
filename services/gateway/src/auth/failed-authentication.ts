import type { ServerResponse } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import { ApiError } from '@billing/contracts';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { RATE_LIMIT_HEADERS } from '../rate-limit/middleware';
import { type CountingRateLimitStore, type RateLimitGuard, fixedWindow } from '../rate-limit/store';
import { sendRefusal } from '../refusals';

export interface FailedAuthenticationRule {
  /** What is authenticated, in the bucket's name: `api-key`, `admin-token`, `sign-in`. */
  name: string;
  /** Failures allowed per address and window; past them every attempt answers 429. */
  limit: number;
  windowMs: number;
}

export interface FailedAuthenticationLimiterOptions {
  /** The rate-limit store: in memory, or Redis shared by every gateway. */
  store: CountingRateLimitStore;
  rule: FailedAuthenticationRule;
  /** Injected clock, ms since the epoch. */
  now: () => number;
  /**
   * Whether the request presented a credential at all: a request without one is refused, but
   * guesses nothing, so it is not counted. Default: an `Authorization` header.
   */
  presented?: (req: Request) => boolean;
  /** The store failed: the request goes on unlimited (as the other limits do). */
  onError?: (error: unknown) => void;
}

/**
 * Limits repeated failed authentication from one client address (issue 12): after
 * `rule.limit` failures in a window, every attempt from that address answers
 * `429 rate_limit_exceeded` with `Retry-After` and the `X-RateLimit-*` headers, **even with the
 * right credential**, until the window ends (otherwise the limit would still tell a guesser
 * which guess was right). A success does not reset the count. The count lives in the rate-limit
 * store, so gateways sharing Redis share it.
 *
 * The address is `clientAddress(req)`: `req.ip` (the socket's, or the client's from
 * `X-Forwarded-For` when `TRUST_PROXY` names the load balancer; behind a balancer without it,
 * every client shares the balancer's address and budget), IPv6 counted per /64.
 *
 * Reusable: `protect(middleware)` wraps an authenticating middleware whose 401s count (API
 * keys, the admin token); a sign-in handler (the dashboard's, issue 19) calls `admit` before
 * checking a password and `failed` when it is wrong.
 */
export class FailedAuthenticationLimiter {
  constructor(private readonly options: FailedAuthenticationLimiterOptions) {}

  /** `authenticate` guarded: 429 when the address is over its budget; its 401s are counted. */
  protect(authenticate: RequestHandler): RequestHandler {
    const presented = this.options.presented ?? ((req: Request) => req.get('authorization') !== undefined);
    return async (req: Request, res: Response, next: NextFunction) => {
      if (!(await this.admit(req, res))) return;
      let done = false;
      const after = (error?: unknown): void => {
        if (done) return;
        done = true;
        if (error instanceof ApiError && error.status === 401 && presented(req)) {
          void this.failed(req, res).then(() => next(error));
          return;
        }
        next(error);
      };
      try {
        await authenticate(req, res, after);
      } catch (error) {
        after(error);
      }
    };
  }

  /**
   * Whether the address may try to authenticate now. When not, the 429 has been written (with
   * `Retry-After` and the `X-RateLimit-*` headers of the failure budget) and this returns false.
   */
  async admit(req: Request, res: Response): Promise<boolean> {
    const { store, rule } = this.options;
    const now = this.options.now();
    let failures: number;
    try {
      failures = await store.count(this.bucketOf(req), rule.windowMs, now);
    } catch (error) {
      this.options.onError?.(error);
      return true;
    }
    if (failures < rule.limit) return true;
    this.refuse(res, now);
    return false;
  }

  /** The address's budget, as a guard for `hitUnlessSpent`: its failures, spent at the limit. */
  guardOf(req: AddressedRequest): RateLimitGuard {
    return { bucket: this.bucketOf(req), limit: this.options.rule.limit, windowMs: this.options.rule.windowMs };
  }

  /** Writes the 429 of an address whose budget is spent, with `Retry-After` and the budget's headers. */
  refuse(res: ServerResponse, now: number): void {
    const resetAt = fixedWindow(now, this.options.rule.windowMs).resetAt;
    const retryAfter = Math.max(1, resetAt - Math.floor(now / 1000));
    this.setHeaders(res, 0, resetAt);
    res.setHeader(RATE_LIMIT_HEADERS.retryAfter, String(retryAfter));
    const refused = ApiError.of(
      'rate_limit_exceeded',
      `Too many failed authentication attempts from this address; retry in ${retryAfter} s`,
    );
    sendRefusal(res, refused);
  }

  /** Counts one failed authentication of the address, and shows what is left of its budget. */
  async failed(req: Request, res: Response): Promise<void> {
    const { store, rule } = this.options;
    try {
      const result = await store.hit(this.bucketOf(req), rule.limit, rule.windowMs, this.options.now());
      if (!res.headersSent) this.setHeaders(res, result.remaining, result.resetAt);
    } catch (error) {
      this.options.onError?.(error);
    }
  }

  private bucketOf(req: AddressedRequest): string {
    return `auth-failures:${this.options.rule.name}:${clientAddress(req)}`;
  }

  private setHeaders(res: ServerResponse, remaining: number, resetAt: number): void {
    res.setHeader(RATE_LIMIT_HEADERS.limit, String(this.options.rule.limit));
    res.setHeader(RATE_LIMIT_HEADERS.remaining, String(remaining));
    res.setHeader(RATE_LIMIT_HEADERS.reset, String(resetAt));
  }
}

/** A request whose client address is known: express's, or a lane's (`req.ip` set by the lane). */
type AddressedRequest = Pick<Request, 'socket'> & { ip?: string };

/**
 * The address a client is limited by: `req.ip`, an IPv4-mapped IPv6 address as IPv4, and an
 * IPv6 address as its /64 (one subscriber's network has all of it, so per address would not
 * limit anyone).
 */
export function clientAddress(req: AddressedRequest): string {
  const ip = (req.ip ?? req.socket.remoteAddress ?? 'unknown').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped && isIPv4(mapped)) return mapped;
  if (!isIPv6(ip)) return ip;
  return `${ipv6Groups(ip).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lowercase hex without leading zeros. */
function ipv6Groups(ip: string): string[] {
  const groupsOf = (part: string): string[] => {
    if (!part) return [];
    const pieces = part.split(':');
    const last = pieces[pieces.length - 1]!;
    if (!last.includes('.')) return pieces;
    // An embedded IPv4 address is the last two groups.
    const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number];
    return [...pieces.slice(0, -1), ((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
  };
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const front = groupsOf(head);
  const back = tail === undefined ? [] : groupsOf(tail);
  const zeros = Array<string>(8 - front.length - back.length).fill('0');
  return [...front, ...zeros, ...back].map((group) => parseInt(group, 16).toString(16));
}
