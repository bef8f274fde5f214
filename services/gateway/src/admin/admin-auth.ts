import { timingSafeEqual, createHash } from 'node:crypto';
import { unauthorized } from '@billing/contracts';
import type { RequestHandler } from 'express';
import type { FailedAuthenticationLimiter } from '../auth/failed-authentication';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. With `failures`, repeated
 * wrong tokens from one address are limited (then 429 even for the right token).
 */
export function requireAdminToken(adminToken: string, failures?: FailedAuthenticationLimiter): RequestHandler {
  const expected = digest(adminToken);
  const check: RequestHandler = (req, _res, next) => {
    const given = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!given || !timingSafeEqual(digest(given), expected)) {
      next(unauthorized('Admin token required: send Authorization: Bearer <ADMIN_TOKEN>'));
      return;
    }
    next();
  };
  return failures ? failures.protect(check) : check;
}
