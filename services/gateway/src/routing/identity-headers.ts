import type { ClientRequest, IncomingHttpHeaders } from 'node:http';
import { Actor, IDENTITY_HEADERS, type KeyKind, type Environment } from '@billing/contracts';
import { CallScope, signInternalCall } from '@billing/signing';
import type { RequestHandler } from 'express';
import type { ForwardedRequest } from '../upstream/upstream';

/** Identity headers are the gateway's word alone: whatever a client sent under them is dropped. */
export const stripIdentityHeaders: RequestHandler = (req, _res, next) => {
  stripIdentityHeaderValues(req.headers);
  next();
};

export function stripIdentityHeaderValues(headers: IncomingHttpHeaders): void {
  for (const name of Object.keys(headers)) if (name.startsWith('x-billing-')) delete headers[name];
}

/**
 * Says what the gateway vouches for on this request (`key`, `admin` or `page`); `signForwarded`
 * signs it as it leaves. A request nobody vouched for leaves unsigned, and services refuse it.
 */
export const vouchAs =
  (scope: CallScope): RequestHandler =>
  (req, _res, next) => {
    req.headers[IDENTITY_HEADERS.scope] = scope;
    next();
  };

const CALL_SCOPES: ReadonlySet<string> = new Set(CallScope.options);
/** A set-membership check rather than a schema parse: it runs on every forwarded request. */
const isCallScope = (value: unknown): value is CallScope => typeof value === 'string' && CALL_SCOPES.has(value);

/**
 * The upstreams' `onProxyReq`: signs the request as it is sent (method, path after rewriting,
 * identity headers and scope, and the body's bytes) with the internal secret, at the process's
 * clock.
 */
export function signForwarded(secret: string, now: () => number = Date.now) {
  return (proxyReq: ClientRequest, req: ForwardedRequest, body: Buffer): void => {
    const scope = req.headers[IDENTITY_HEADERS.scope];
    if (!isCallScope(scope)) return;
    const header = (name: string) => {
      const value = req.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const signed = signInternalCall(
      secret,
      {
        scope,
        method: proxyReq.method,
        path: proxyReq.path,
        identity: {
          organization: header(IDENTITY_HEADERS.organization),
          environment: header(IDENTITY_HEADERS.environment) as Environment | undefined,
          keyKind: header(IDENTITY_HEADERS.keyKind) as KeyKind | undefined,
          keyId: header(IDENTITY_HEADERS.keyId),
        },
        actor: actorOf(req, scope, header(IDENTITY_HEADERS.keyId)),
        body,
      },
      now(),
    );
    for (const [name, value] of Object.entries(signed)) proxyReq.setHeader(name, value);
  };
}

/**
 * Who a forwarded request acts for: `res.locals.billingActor` when something in front set it (the
 * dashboard, for its signed-in user), else what vouched for it: the API key, the admin token, or
 * the buyer on a hosted page or the portal.
 */
function actorOf(req: ForwardedRequest, scope: CallScope, keyId: string | undefined): Actor | undefined {
  // Parsed only when set: a failed parse builds an error, and most requests set none.
  const set: unknown = req.res?.locals?.billingActor;
  const given = set === undefined ? undefined : Actor.safeParse(set);
  if (given?.success) return given.data;
  switch (scope) {
    case 'key':
      return keyId ? { type: 'api_key', id: keyId } : undefined;
    case 'admin':
      return { type: 'admin' };
    case 'page':
      return { type: 'customer' };
    case 'service':
      return undefined;
  }
}
