import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import {
  type Actor,
  type CallerIdentity,
  IDENTITY_HEADERS,
  actorFromHeaderValue,
  actorHeaderValue,
  identityFromHeaders,
} from '@billing/contracts';

/**
 * Who vouches for a call to a service, and so which of its routes the call may reach:
 * - `key`: the gateway, for a public request made with an API key (`/v1`); carries the key's identity.
 * - `admin`: the gateway's admin API, after the admin token (`/admin`); carries the organization only.
 * - `page`: the gateway, for a hosted page (`/checkout/...`, `/pay/...`); carries no identity.
 * - `service`: a sibling service (`/v1`, `/internal`), carrying the identity of the call it serves.
 */
export const CallScope = z.enum(['key', 'admin', 'page', 'service']);
export type CallScope = z.infer<typeof CallScope>;

/**
 * How far a signature's timestamp may be from the receiver's clock, either way. A replay
 * window for one forwarded request, not a session.
 */
export const INTERNAL_SIGNATURE_MAX_AGE_MS = 60_000;

/** INTERNAL_SECRET must be at least this long (`openssl rand -base64 32` gives 44). */
export const MIN_INTERNAL_SECRET_LENGTH = 32;

/** One call from the gateway or a service to a service, as it is sent. */
export interface InternalCall {
  scope: CallScope;
  method: string;
  /** The request target exactly as sent: path and query string. */
  path: string;
  /** The body exactly as sent; none when absent. */
  body?: Uint8Array | string;
  /** `key` and `service`: the caller; `admin`: the organization alone; `page`: nothing. */
  identity?: Partial<CallerIdentity>;
  /** Who the call acts for (recorded on the events it appends); absent: the system. */
  actor?: Actor;
}

/** What a service may believe about a call whose signature checked out. */
export type VerifiedCall = (
  { scope: 'key' | 'service'; identity: CallerIdentity } | { scope: 'admin'; organization: string } | { scope: 'page' }
) & {
  actor?: Actor;
  /** SHA-256 (hex) of the body signed: what the body read must hash to (`isSignedBody`). */
  bodyHash: string;
};

/** SHA-256 (hex) of a body; the empty body's is computed once. */
export function bodyHashOf(body: Uint8Array | string | undefined): string {
  if (body === undefined || body.length === 0) return EMPTY_BODY_HASH;
  return createHash('sha256').update(body).digest('hex');
}
const EMPTY_BODY_HASH = createHash('sha256').digest('hex');

/** Whether `body` is the body a verified call was signed with (constant time). */
export function isSignedBody(call: Pick<VerifiedCall, 'bodyHash'>, body: Uint8Array | string): boolean {
  const given = Buffer.from(bodyHashOf(body));
  const signed = Buffer.from(call.bodyHash);
  return given.length === signed.length && timingSafeEqual(given, signed);
}

export type InternalCallVerification = { ok: true; call: VerifiedCall } | { ok: false; reason: string };

/** Unambiguous (a JSON array) so that no field can shift into its neighbour. */
function canonical(
  call: Omit<InternalCall, 'actor' | 'body'> & { actor?: string; bodyHash: string },
  timestamp: string,
): string {
  const id = call.identity ?? {};
  return JSON.stringify([
    'billing-internal-v2',
    call.scope,
    id.organization ?? '',
    id.environment ?? '',
    id.keyKind ?? '',
    id.keyId ?? '',
    call.method.toUpperCase(),
    call.path,
    timestamp,
    call.actor ?? '',
    call.bodyHash,
  ]);
}

const mac = (secret: string, text: string) => `v1=${createHmac('sha256', secret).update(text).digest('hex')}`;

/**
 * The headers of a signed internal call: the identity fields given, the scope, the time, the
 * body's SHA-256 and an HMAC-SHA256 over all of them with the method, path and query, keyed by
 * the shared INTERNAL_SECRET.
 */
export function signInternalCall(secret: string, call: InternalCall, nowMs = Date.now()): Record<string, string> {
  const timestamp = String(Math.floor(nowMs));
  const actorText = call.actor && actorHeaderValue(call.actor);
  const bodyHash = bodyHashOf(call.body);
  const headers: Record<string, string> = {
    [IDENTITY_HEADERS.scope]: call.scope,
    [IDENTITY_HEADERS.timestamp]: timestamp,
    [IDENTITY_HEADERS.bodyHash]: bodyHash,
    [IDENTITY_HEADERS.signature]: mac(secret, canonical({ ...call, actor: actorText, bodyHash }, timestamp)),
  };
  if (actorText !== undefined) headers[IDENTITY_HEADERS.actor] = actorText;
  const id = call.identity ?? {};
  if (id.organization !== undefined) headers[IDENTITY_HEADERS.organization] = id.organization;
  if (id.environment !== undefined) headers[IDENTITY_HEADERS.environment] = id.environment;
  if (id.keyKind !== undefined) headers[IDENTITY_HEADERS.keyKind] = id.keyKind;
  if (id.keyId !== undefined) headers[IDENTITY_HEADERS.keyId] = id.keyId;
  return headers;
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * Checks a received call's signature (constant time), its age against `nowMs` and that its
 * scope carries what the scope needs. Anything missing, repeated, altered or stale fails. The
 * body is not read here: the call's `bodyHash` is what the body, once read, must hash to.
 */
export function verifyInternalCall(
  secret: string,
  request: { method: string; path: string; headers: Headers },
  nowMs = Date.now(),
  maxAgeMs = INTERNAL_SIGNATURE_MAX_AGE_MS,
): InternalCallVerification {
  const fail = (reason: string): InternalCallVerification => ({ ok: false, reason });
  const one = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  const scopeHeader = one(IDENTITY_HEADERS.scope);
  const timestamp = one(IDENTITY_HEADERS.timestamp);
  const signature = one(IDENTITY_HEADERS.signature);
  const bodyHash = one(IDENTITY_HEADERS.bodyHash);
  if (!scopeHeader || !timestamp || !signature || !bodyHash) {
    return fail('Missing internal signature: services are reached through the gateway');
  }
  const scope = CallScope.safeParse(scopeHeader);
  if (!scope.success || !/^\d{1,16}$/.test(timestamp)) return fail('Invalid internal signature');
  const identity = {
    organization: one(IDENTITY_HEADERS.organization),
    environment: one(IDENTITY_HEADERS.environment),
    keyKind: one(IDENTITY_HEADERS.keyKind),
    keyId: one(IDENTITY_HEADERS.keyId),
  } as Partial<CallerIdentity>;
  const actorText = one(IDENTITY_HEADERS.actor);
  const expected = Buffer.from(
    mac(secret, canonical({ ...request, scope: scope.data, identity, actor: actorText, bodyHash }, timestamp)),
  );
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return fail('Invalid internal signature');
  if (Math.abs(nowMs - Number(timestamp)) > maxAgeMs) return fail('Expired internal signature');
  const actor = actorText === undefined ? undefined : actorFromHeaderValue(actorText);
  if (actorText !== undefined && !actor) return fail('Invalid actor');
  const acting = { ...(actor ? { actor } : {}), bodyHash };

  switch (scope.data) {
    case 'key':
    case 'service': {
      const caller = identityFromHeaders(request.headers);
      return caller
        ? { ok: true, call: { scope: scope.data, identity: caller, ...acting } }
        : fail('Missing caller identity');
    }
    case 'admin':
      return identity.organization
        ? { ok: true, call: { scope: 'admin', organization: identity.organization, ...acting } }
        : fail('Missing organization');
    case 'page':
      return { ok: true, call: { scope: 'page', ...acting } };
  }
}
