import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, type CallerIdentity } from '@billing/contracts';
import {
  type Lane,
  type LaneRequest,
  type LaneResponse,
  ROUTE_PATTERN,
  bodyHeadersRefusal,
  pathOfTarget,
} from '@billing/service';
import { DASHBOARD_CREDENTIAL_HEADER } from '../dashboard/loopback';
import { IDEMPOTENCY_HEADERS, readForwardedBody } from '../idempotency';
import { MAX_BODY_BYTES } from '../request-body';
import { sendRefusal } from '../refusals';
import type { UpstreamHandler } from '../upstream';
import { ENTITLEMENTS_PATH, PORTAL_API_PATH, type PublicRoute, type UpstreamName } from './public-routes';
import { RouteTable } from './route-table';
import { stripIdentityHeaderValues } from './identity-headers';

export interface PublicLaneOptions {
  routes: readonly PublicRoute[];
  /** The caller of a key found in the cache, without I/O; undefined otherwise. */
  cachedCaller: (req: IncomingMessage) => CallerIdentity | undefined;
  /** The client's address as express's `req.ip` finds it (with `trust proxy`). */
  clientAddress: (req: IncomingMessage) => string | undefined;
  /** The gateway's admission (the same bound as express's): a refusal, or undefined when admitted. */
  admit: (req: LaneRequest, res: ServerResponse) => ApiError | undefined;
  /** Hands the caller on, as express's path does (locals, identity headers). */
  actAs: (req: LaneRequest, res: LaneResponse, caller: CallerIdentity) => void;
  /** The caller's limits: true when the request goes on, else its 429 was written. */
  limit: (req: LaneRequest, res: ServerResponse, caller: CallerIdentity) => Promise<boolean>;
  upstream: (name: UpstreamName) => UpstreamHandler;
}

/**
 * The public API's calls that a server makes with a key the gateway holds in its cache take this
 * lane, past express (docs/decisions/0026, 0035): its reads (nearly all of `/v1`'s traffic) and
 * the POSTs whose body carries their own key (`bodyKeyed`: credit spends, decision 0031) sent
 * without an `Idempotency-Key`, for which the gateway keeps no record. It does what express's
 * layers do for such a request, in their order, and nothing they would not: the identity headers
 * dropped, admission, `Vary: Origin` on a Publishable-Key route, the caller handed on, the key's
 * and the address's limits in one round trip, for a POST the generated `Idempotency-Key` and its
 * body read ahead as the idempotency layer reads it, and the route's service.
 *
 * Everything else is declined and takes express's path unchanged: other writes (their
 * idempotency keys), a browser's request (`Origin`: CORS and the allow-list), the dashboard's own
 * calls, an OAuth token, a key not cached or not allowed on the route (express answers 401), a
 * read with a body, a POST whose body its headers refuse or whose length they do not give within
 * the limit, a target that is not a plain path, and the routes with limits or error codes of
 * their own (entitlement checks, portal sessions).
 */
export function publicLane(options: PublicLaneOptions): Lane {
  // Every route, as express's table has them: a route with rules of its own must still be found
  // (and declined), not passed over for a later pattern that also matches (`/v1/customers/:id`).
  const table = new RouteTable(options.routes);
  return {
    accept(req) {
      if (!isPlainTarget(req.url) || !isServerCall(req)) return undefined;
      const method = req.method === 'GET' ? (hasNoBody(req) ? 'GET' : undefined) : req.method;
      if (method !== 'GET' && !(method === 'POST' && isReadableUnkeyedPost(req))) return undefined;
      const route = table.find(method, pathOfTarget(req.url));
      if (!route || hasOwnRules(route) || (method === 'POST' && !route.bodyKeyed)) return undefined;
      const caller = options.cachedCaller(req);
      if (!caller || !route.keys.includes(caller.keyKind)) return undefined;
      return (laneReq, res) => void serve(laneReq, res, route, caller);
    },
  };

  async function serve(req: LaneRequest, res: LaneResponse, route: PublicRoute, caller: CallerIdentity) {
    res.locals[ROUTE_PATTERN] = route.path;
    stripIdentityHeaderValues(req.headers);
    req.ip = options.clientAddress(req);
    const refused = options.admit(req, res);
    if (refused) return sendRefusal(res, refused);
    // What CORS says on a browser route to a request without `Origin`: the answer varies with it.
    if (route.keys.includes('publishable')) res.setHeader('Vary', 'Origin');
    options.actAs(req, res, caller);
    if (!(await options.limit(req, res, caller))) return;
    if (req.method === 'POST' && !(await readAhead(req, res))) return;
    options.upstream(route.upstream)(req, res);
  }
}

/**
 * What the idempotency layer does for a body-keyed POST sent without the header: a key
 * generated for the answer (and kept nowhere), the body read ahead. False when the body was
 * refused (a leading BOM: its 400 written) or the client went away.
 */
async function readAhead(req: LaneRequest, res: LaneResponse): Promise<boolean> {
  res.setHeader(IDEMPOTENCY_HEADERS.key, randomUUID());
  try {
    await readForwardedBody(req);
    return true;
  } catch (error) {
    if (error instanceof ApiError) sendRefusal(res, error);
    else res.destroy();
    return false;
  }
}

const hasOwnRules = (route: PublicRoute): boolean =>
  route.path === ENTITLEMENTS_PATH || route.path === PORTAL_API_PATH || route.path.startsWith(`${PORTAL_API_PATH}/`);

/** An origin-form target whose path express reads as the text before `?` (no space, no `#`). */
const isPlainTarget = (url: string | undefined): url is string =>
  url !== undefined && url.startsWith('/v1/') && !/[\s#\u00a0\ufeff]/.test(url);

/** A server's call: no browser (`Origin`), not the dashboard's own call. */
const isServerCall = (req: IncomingMessage): boolean =>
  req.headers.origin === undefined && req.headers[DASHBOARD_CREDENTIAL_HEADER] === undefined;

const hasNoBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] === undefined &&
  (req.headers['content-length'] === undefined || req.headers['content-length'] === '0');

/**
 * A POST without an `Idempotency-Key` whose body the lane reads as express's path would: its
 * length given and within the limit, and nothing in its headers that the services refuse.
 */
const isReadableUnkeyedPost = (req: IncomingMessage): boolean => {
  if (req.headers[IDEMPOTENCY_HEADERS.key] !== undefined || req.headers['transfer-encoding'] !== undefined)
    return false;
  const length = Number(req.headers['content-length']);
  return Number.isInteger(length) && length <= MAX_BODY_BYTES && bodyHeadersRefusal(req.headers) === null;
};
