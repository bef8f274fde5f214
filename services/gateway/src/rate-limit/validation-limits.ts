import type { CallerIdentity } from '@billing/contracts';
import type { Request, RequestHandler, Response } from 'express';
import type { RequestWithRawBody } from '../idempotency';
import { PROMOTION_VALIDATION_LIMITS } from './limits';
import { rateLimit, type RateLimitRule } from './middleware';
import type { RateLimitStore } from './store';

const callerOf = (res: Response) => res.locals.caller as CallerIdentity;

function jsonBodyOf(req: RequestWithRawBody): Record<string, unknown> {
  try {
    const parsed: unknown = req.rawBody?.length ? JSON.parse(req.rawBody.toString('utf8')) : null;
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The customer a validation is for: `customer_id`, else `external_id`, from the JSON body. The
 * gateway forwards bodies unread; the idempotency check has read this one into `rawBody`.
 */
function customerOf(req: Request): string | undefined {
  const body = jsonBodyOf(req as RequestWithRawBody) as { customer_id?: unknown; external_id?: unknown };
  if (typeof body.customer_id === 'string' && body.customer_id) return `id:${body.customer_id}`;
  if (typeof body.external_id === 'string' && body.external_id) return `external:${body.external_id}`;
  return undefined;
}

/**
 * The spec's validation limits, on top of the general per-key limit: a Publishable Key gets 5 a
 * minute per client IP (per key, so two storefronts behind one NAT do not share) and 10 an hour
 * per customer (per organization and environment); a Secret Key gets 60 a minute per key.
 */
export function promotionValidationLimits(
  store: RateLimitStore,
  now: () => number,
  onError: (error: unknown) => void,
): RequestHandler[] {
  const { publishablePerIp, publishablePerCustomer, secretPerKey } = PROMOTION_VALIDATION_LIMITS;
  const perIpOrKey = (req: Request, res: Response): RateLimitRule => {
    const caller = callerOf(res);
    return caller.keyKind === 'secret'
      ? { bucket: `validate-key:${caller.keyId}`, ...secretPerKey }
      : { bucket: `validate-ip:${caller.keyId}:${req.ip ?? 'unknown'}`, ...publishablePerIp };
  };
  const perCustomer = (req: Request, res: Response): RateLimitRule | undefined => {
    const caller = callerOf(res);
    const customer = customerOf(req);
    if (caller.keyKind !== 'publishable' || !customer) return undefined;
    return {
      bucket: `validate-customer:${caller.organization}:${caller.environment}:${customer}`,
      ...publishablePerCustomer,
    };
  };
  return [
    rateLimit({ store, now, onError, limitFor: perIpOrKey }),
    rateLimit({ store, now, onError, limitFor: perCustomer }),
  ];
}
