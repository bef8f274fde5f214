import type { CallerIdentity } from '@billing/contracts';
import type { ForwardedRequest, ForwardedResponse } from './upstream';

/**
 * Who a request's upstream failures are held against (`callerOf` of `createUpstream`):
 *
 * - a Secret Key: its organization and environment, the tenant itself;
 * - a Publishable Key: its organization and environment *and the client's address*, because
 *   Publishable Keys are public: anyone can send one, and must not be able to open the
 *   breaker of the storefront whose key they copied;
 * - the admin API: the operator;
 * - the key-less hosted pages: the client's address.
 *
 * The address is `req.ip`: the socket's, or with `TRUST_PROXY` the client's as the load balancer
 * reports it.
 */
export function breakerCaller(req: ForwardedRequest, res: ForwardedResponse): string {
  const caller = res.locals.caller as CallerIdentity | undefined;
  const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  if (caller?.keyKind === 'secret') return `org:${caller.organization}:${caller.environment}`;
  if (caller) return `pk:${caller.organization}:${caller.environment}:${address}`;
  if ((req.originalUrl ?? req.url).startsWith('/admin/')) return 'admin';
  return `ip:${address}`;
}
