import { type CallerIdentity, type Environment, IDENTITY_HEADERS, unauthorized } from '@billing/contracts';
import { callerOf } from '@billing/service';
import type { Request, RequestHandler } from 'express';

/** Every read and write is confined to one organization and environment. */
export interface Tenant {
  organization: string;
  environment: Environment;
}

/** Public and internal routes need the identity headers the gateway (or checkout) sets. */
export const requireCaller: RequestHandler = (req, _res, next) => {
  callerOf(req);
  next();
};

/**
 * Spec: every promotion endpoint but validate takes the Secret Key. The gateway enforces it;
 * the service checks again so that a routing mistake cannot open them to Publishable Keys.
 */
export function secretCallerOf(req: Request): CallerIdentity {
  const caller = callerOf(req);
  if (caller.keyKind !== 'secret') throw unauthorized('This endpoint requires a Secret Key');
  return caller;
}

/** Admin writes come through the gateway's admin API, which names only the organization. */
export const requireAdminOrganization: RequestHandler = (req, _res, next) => {
  next(adminOrganizationOf(req) ? undefined : unauthorized('Missing organization'));
};
export const adminOrganizationOf = (req: Request) => req.get(IDENTITY_HEADERS.organization)?.trim() || undefined;
