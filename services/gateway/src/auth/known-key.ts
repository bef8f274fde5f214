import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallerIdentity } from '@billing/contracts';
import type { Request, RequestHandler, Response } from 'express';
import { showLimit } from '../rate-limit/middleware';
import type { CountingRateLimitStore } from '../rate-limit/store';
import type { FailedAuthenticationLimiter } from './failed-authentication';
import { sendRefusal } from '../refusals';

export interface KnownKeyOptions {
  /** The caller when it is known without I/O (a cached key, the dashboard's own call); else undefined. */
  known: (req: Request, res: Response) => CallerIdentity | undefined;
  /** The address's failed authentications, which must not be spent. */
  failures: FailedAuthenticationLimiter;
  store: CountingRateLimitStore;
  /** The caller's own limit: its bucket and requests per `windowMs`. */
  limitOf: (caller: CallerIdentity) => { bucket: string; limit: number; windowMs: number };
  /** Hands the caller on (locals, identity headers). */
  actAs: (req: Request, res: Response, caller: CallerIdentity) => void;
  /** Everything else: the failure guard, the key lookup, the origin check and the key's limit, in turn. */
  otherwise: RequestHandler;
  now: () => number;
  /** The store failed: the request goes on unlimited (as the limits do). */
  onError: (error: unknown) => void;
}

/**
 * The hot path of `/v1` (issue 17): a request whose caller is known without I/O, and that is
 * not a browser's (no `Origin`, whose check may read the database), needs no database, and
 * its two limits, the address's failed authentications and the key's requests, cost one round
 * trip to the store (`hitUnlessSpent`) rather than one each. It answers what `otherwise` would:
 * 429 while the address's failures are spent (nothing counted), else the key's limit.
 */
export function knownKeyFirst(options: KnownKeyOptions): RequestHandler {
  const { known, actAs, otherwise } = options;
  const limitKnownCaller = knownCallerLimits(options);
  return async (req, res, next) => {
    const caller = req.headers.origin === undefined ? known(req, res) : undefined;
    if (!caller) return otherwise(req, res, next);
    actAs(req, res, caller);
    if (await limitKnownCaller(req, res, caller)) next();
  };
}

/** What a known caller's limits need. */
export type KeyLimits = Pick<KnownKeyOptions, 'failures' | 'store' | 'limitOf' | 'now' | 'onError'>;

/**
 * A known caller's two limits in one round trip to the store, with the key's `X-RateLimit-*`
 * headers: true when the request goes on, else its 429 was written. A store that fails lets the
 * request through, as the limits do. On node's own request and response, for a lane too.
 */
export function knownCallerLimits(options: KeyLimits) {
  const { failures, store, limitOf, now, onError } = options;
  return async (req: IncomingMessage & { ip?: string }, res: ServerResponse, caller: CallerIdentity) => {
    const at = now();
    const { bucket, limit, windowMs } = limitOf(caller);
    let hit;
    try {
      hit = await store.hitUnlessSpent(failures.guardOf(req), bucket, limit, windowMs, at);
    } catch (error) {
      onError(error);
      return true;
    }
    if (!hit.result) {
      failures.refuse(res, at);
      return false;
    }
    const refused = showLimit(res, hit.result, windowMs, at);
    if (refused) sendRefusal(res, refused);
    return !refused;
  };
}
