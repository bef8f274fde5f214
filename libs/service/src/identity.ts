import {
  type CallerIdentity,
  type Environment,
  IDENTITY_HEADERS,
  identityFromHeaders,
  unauthorized,
} from '@billing/contracts';
import type { Request, RequestHandler } from 'express';

/** Every read and write of a service is confined to one organization and environment. */
export interface Tenant {
  organization: string;
  environment: Environment;
}

/** The caller the gateway vouched for; 401 when the request did not come through it. */
export function callerOf(req: Request): CallerIdentity {
  const identity = identityFromHeaders(req.headers);
  if (!identity) throw unauthorized('Missing caller identity');
  return identity;
}

/** Public and internal routes need the identity headers the gateway (or a calling service) sets. */
export const requireCaller: RequestHandler = (req, _res, next) => {
  callerOf(req);
  next();
};

/**
 * For the spec's Secret-Key-only endpoints. The gateway enforces the key kind; services check
 * again so that a routing mistake cannot open them to Publishable Keys.
 */
export function secretCallerOf(req: Request): CallerIdentity {
  const caller = callerOf(req);
  if (caller.keyKind !== 'secret') throw unauthorized('This endpoint requires a Secret Key');
  return caller;
}

/** Admin writes come through the gateway's admin API, which names only the organization (401 without). */
export function adminOrganizationOf(req: Request): string {
  const organization = req.get(IDENTITY_HEADERS.organization)?.trim();
  if (!organization) throw unauthorized('Missing organization');
  return organization;
}

export const requireAdminOrganization: RequestHandler = (req, _res, next) => {
  adminOrganizationOf(req);
  next();
};
