import { type CallerIdentity, forbidden } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { Express, Request, RequestHandler, Response } from 'express';
import { findSettings } from '../organizations/read-model';
import type { PublicRoute } from '../routing/public-routes';
import { RouteTable } from '../routing/route-table';

/** What a browser page may send to a Publishable-Key endpoint (the recur-tw SDK's headers included). */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'X-Service-Publishable-Key',
  'X-Recur-Publishable-Key',
  'X-Recur-SDK-Type',
  'X-Recur-SDK-Version',
  'X-Recur-Source',
  'X-Recur-Embed-Domain',
];

/** What a browser page may read of the answer besides the safelisted headers. */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Idempotency-Key',
  'Idempotency-Replay',
];

/** Browsers keep a preflight's answer this long (seconds). */
export const CORS_MAX_AGE_SECONDS = 600;

const ALLOW_ORIGIN = 'Access-Control-Allow-Origin';

/**
 * CORS for the Publishable-Key endpoints (docs/embedded-checkout.md): a preflight is answered
 * without a key, for any origin; the request itself gets `Access-Control-Allow-Origin` for its
 * origin, which `enforceAllowedOrigin` takes back for a Secret Key or an origin outside the
 * organization's allow-list. Never `Access-Control-Allow-Credentials`: keys travel in headers,
 * not cookies. Mounted before authentication, so a 401 is readable by the page too. Paths no
 * Publishable Key may call get no CORS at all.
 */
export function mountCors(app: Express, routes: readonly PublicRoute[]): void {
  const browserRoutes = new RouteTable(routes.filter((route) => route.keys.includes('publishable')));
  app.use((req, res, next) => {
    const matching = browserRoutes.matching(req.path);
    if (matching.length === 0) return next();
    if (req.method === 'OPTIONS') {
      // The first path listed that matches answers, with the methods listed for that path.
      const path = matching[0]!.path;
      return answerPreflight(req, res, methodsOf(matching.filter((route) => route.path === path)));
    }
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    if (methodsOf(matching).includes(method)) allowOrigin(req, res);
    next();
  });
}

const methodsOf = (routes: readonly PublicRoute[]) => routes.map((route) => route.method.toUpperCase());

function answerPreflight(req: Request, res: Response, methods: readonly string[]): void {
  const origin = req.get('origin');
  const requested = req.get('access-control-request-method')?.toUpperCase();
  res.vary('Origin').vary('Access-Control-Request-Method');
  if (!origin || !requested || !methods.includes(requested)) {
    throw forbidden(`${requested ?? 'This method'} on this path is not available to browser pages`);
  }
  res
    .set(ALLOW_ORIGIN, origin)
    .set('Access-Control-Allow-Methods', methods.join(', '))
    .set('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(', '))
    .set('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS))
    .status(204)
    .end();
}

function allowOrigin(req: Request, res: Response): void {
  const origin = req.get('origin');
  res.vary('Origin');
  if (origin) res.set(ALLOW_ORIGIN, origin).set('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS.join(', '));
}

/**
 * Runs after authentication: a Secret Key never gets a CORS answer (a page holding one leaks
 * it), and an organization with an allow-list refuses other origins with 403 before anything
 * happens. A request without `Origin` (a server) is not a browser's and passes.
 */
export function enforceAllowedOrigin(allowList: OriginAllowList): RequestHandler {
  return async (req, res, next) => {
    const origin = req.get('origin');
    if (!origin || !res.get(ALLOW_ORIGIN)) return next();
    const caller = res.locals.caller as CallerIdentity;
    if (caller.keyKind !== 'publishable') return next(withoutCors(res));
    // The platform's own pages (the embedded checkout's iframe page) call it from its own origin.
    if (origin === `${req.protocol}://${req.get('host')}`) return next();
    if (await allowList.allows(caller.organization, origin)) return next();
    withoutCors(res);
    next(forbidden(`Origin ${origin} is not in this organization's allowed origins`));
  };
}

function withoutCors(res: Response): undefined {
  res.removeHeader(ALLOW_ORIGIN);
  res.removeHeader('Access-Control-Expose-Headers');
  return undefined;
}

/** Each organization's allowed origins, cached for a few seconds; an empty list allows any origin. */
export class OriginAllowList {
  private readonly cache = new Map<string, { origins: string[]; expiresAt: number }>();
  /** Bumped by every `forget`: a lookup that a change overtook is answered but not cached. */
  private generation = 0;

  constructor(
    private readonly sql: SqlExecutor,
    private readonly schema: string,
    private readonly cacheTtlMs = 5000,
  ) {}

  async allows(organization: string, origin: string): Promise<boolean> {
    const origins = await this.originsOf(organization);
    return origins.length === 0 || origins.includes(origin);
  }

  forget(): void {
    this.generation++;
    this.cache.clear();
  }

  private async originsOf(organization: string): Promise<string[]> {
    const cached = this.cache.get(organization);
    if (cached && cached.expiresAt > Date.now()) return cached.origins;
    const generation = this.generation;
    const origins = (await findSettings(this.sql, this.schema, organization))?.allowed_origins ?? [];
    if (generation !== this.generation) return origins;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(organization, { origins, expiresAt: Date.now() + this.cacheTtlMs });
    return origins;
  }
}
