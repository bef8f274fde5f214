import { type CallerIdentity, identityFromHeaders, unauthorized } from '@billing/contracts';
import type { Request } from 'express';

/** The caller the gateway vouched for; 401 when the request did not come through it. */
export function callerOf(req: Request): CallerIdentity {
  const identity = identityFromHeaders(req.headers);
  if (!identity) throw unauthorized('Missing caller identity');
  return identity;
}
