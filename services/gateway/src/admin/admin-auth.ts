import { timingSafeEqual, createHash } from 'node:crypto';
import { unauthorized } from '@billing/contracts';
import type { RequestHandler } from 'express';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
export function requireAdminToken(adminToken: string): RequestHandler {
  const expected = digest(adminToken);
  return (req, _res, next) => {
    const given = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!given || !timingSafeEqual(digest(given), expected)) {
      next(unauthorized('Admin token required: send Authorization: Bearer <ADMIN_TOKEN>'));
      return;
    }
    next();
  };
}
