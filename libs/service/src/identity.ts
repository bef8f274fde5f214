import {
  type Actor,
  type CallerIdentity,
  type Environment,
  SYSTEM_ACTOR,
  type Tenant,
  unauthorized,
} from '@billing/contracts';
import {
  type CallScope,
  type VerifiedCall,
  INTERNAL_SIGNATURE_MAX_AGE_MS,
  isSignedBody,
  verifyInternalCall,
} from '@billing/signing';
import type { Request, RequestHandler } from 'express';

export type { Tenant };

export interface InternalAuthOptions {
  /** The INTERNAL_SECRET shared by the gateway and every service. */
  secret: string;
  /**
   * The clock a signature's age is measured on: the process's, not the injected domain clock,
   * which tests move by days while the gateway's stays put (default `Date.now`).
   */
  now?: () => number;
  maxAgeMs?: number;
}

/** What `requireInternalSignature` found for each request it let through. */
const verifiedCalls = new WeakMap<Request, VerifiedCall>();

/**
 * Which scopes may reach a path: the admin API's effects only through the admin API, internal
 * routes only from services, the public API from the gateway (with a key) or a service, and
 * the rest (the hosted pages) only as pages the gateway forwarded.
 */
export function scopesForPath(path: string): readonly CallScope[] {
  if (path === '/admin' || path.startsWith('/admin/')) return ['admin'];
  if (path === '/internal' || path.startsWith('/internal/')) return ['service'];
  if (path === '/v1' || path.startsWith('/v1/')) return ['key', 'service'];
  return ['page'];
}

/**
 * Mounted before every route of a service (after `/healthz`, `/readyz`, `/metrics`): a call
 * not signed with the internal secret, signed for another method, path or identity, older than
 * a minute, or of a scope the path does not admit, answers 401 before anything is read. A call
 * without a body must have been signed without one; a body is checked where it is read
 * (`checkSignedBody`, in the services' body parsers).
 */
export function requireInternalSignature(options: InternalAuthOptions): RequestHandler {
  const now = options.now ?? Date.now;
  const maxAgeMs = options.maxAgeMs ?? INTERNAL_SIGNATURE_MAX_AGE_MS;
  return (req, _res, next) => {
    const verified = verifyInternalCall(
      options.secret,
      { method: req.method, path: req.originalUrl, headers: req.headers },
      now(),
      maxAgeMs,
    );
    if (!verified.ok) return next(unauthorized(verified.reason));
    if (!scopesForPath(req.path).includes(verified.call.scope)) {
      return next(unauthorized(`A ${verified.call.scope} call cannot reach ${req.method} ${req.path}`));
    }
    if (!hasBody(req) && !isSignedBody(verified.call, '')) return next(anotherBody());
    verifiedCalls.set(req, verified.call);
    next();
  };
}

/** HTTP/1.1 framing: a request has a body only with `Transfer-Encoding` or a non-zero `Content-Length`. */
const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

const anotherBody = () => unauthorized('Invalid internal signature: the body is not the one signed');

/**
 * For a body parser's `verify`, with the bytes it read: a signed call's body must be the one
 * its signature covers (401 otherwise), so a captured call cannot be replayed with another
 * body. Calls nobody signed (the gateway's own admin API, which faces the network) pass.
 */
export function checkSignedBody(req: Request, body: Buffer): void {
  const call = verifiedCalls.get(req);
  if (call && !isSignedBody(call, body)) throw anotherBody();
}

/** The caller the gateway (or a calling service) vouched for; 401 when none did. */
export function callerOf(req: Request): CallerIdentity {
  const call = verifiedCalls.get(req);
  if (!call || (call.scope !== 'key' && call.scope !== 'service')) throw unauthorized('Missing caller identity');
  return call.identity;
}

/** Public and internal routes need an identity the gateway (or a calling service) signed. */
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

/** Admin writes come signed from the gateway's admin API, which names only the organization (401 otherwise). */
export function adminOrganizationOf(req: Request): string {
  const call = verifiedCalls.get(req);
  if (call?.scope !== 'admin') throw unauthorized('Admin calls come through the admin API');
  return call.organization;
}

export const requireAdminOrganization: RequestHandler = (req, _res, next) => {
  adminOrganizationOf(req);
  next();
};

/**
 * Who the request acts for, as the signature vouched: the gateway names the API key, the admin,
 * the dashboard user or the buyer; a sibling service passes on its own caller's. `system` when
 * nobody was named.
 */
export function actorOf(req: Request): Actor {
  return verifiedCalls.get(req)?.actor ?? SYSTEM_ACTOR;
}
