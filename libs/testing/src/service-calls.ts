import { randomBytes, randomUUID } from 'node:crypto';
import {
  type CallerIdentity,
  type DomainEventEnvelope,
  type Environment,
  IDENTITY_HEADERS,
  type KeyKind,
  identityHeaders,
  newId,
} from '@billing/contracts';
import { type CallScope, signInternalCall } from '@billing/signing';

export interface Reply {
  status: number;
  body: any;
}

/**
 * The internal secret the services of this test process check: INTERNAL_SECRET, made here or
 * by `startServiceForTest` (`@billing/runtime`), whichever runs first.
 */
export function testInternalSecret(): string {
  return (process.env.INTERNAL_SECRET ??= randomBytes(32).toString('base64url'));
}

/** The scope the gateway (or a sibling service) would sign a call to this path with. */
export function scopeForTestPath(path: string): CallScope {
  if (path.startsWith('/admin')) return 'admin';
  if (path.startsWith('/internal')) return 'service';
  if (path.startsWith('/v1')) return 'key';
  return 'page';
}

/**
 * `headers` with the internal signature added, as the gateway would send them to `url` with
 * `body`: the identity headers among them are signed, with the scope the path needs
 * (`scopeForTestPath`) unless `scope` is given. Headers that already carry a signature are left
 * as they are.
 */
export function signedHeaders(
  url: string,
  method = 'GET',
  headers: Record<string, string> = {},
  scope?: CallScope,
  body?: string | Uint8Array,
): Record<string, string> {
  if (headers[IDENTITY_HEADERS.signature] !== undefined) return headers;
  const { pathname, search } = new URL(url);
  const identity: Partial<CallerIdentity> = {
    organization: headers[IDENTITY_HEADERS.organization],
    environment: headers[IDENTITY_HEADERS.environment] as Environment | undefined,
    keyKind: headers[IDENTITY_HEADERS.keyKind] as KeyKind | undefined,
    keyId: headers[IDENTITY_HEADERS.keyId],
  };
  const signed = signInternalCall(testInternalSecret(), {
    scope: scope ?? scopeForTestPath(pathname),
    method,
    path: `${pathname}${search}`,
    identity,
    body,
  });
  return { ...headers, ...signed };
}

/**
 * `fetch` straight to a service, signed as the gateway would sign it (`signedHeaders`), body
 * included: a string, bytes or form fields (sent as the string that was signed).
 */
export function signedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const method = init.method ?? 'GET';
  const headers = Object.fromEntries(new Headers(init.headers).entries());
  const body = bytesOf(init.body);
  if (init.body instanceof URLSearchParams) headers['content-type'] ??= 'application/x-www-form-urlencoded';
  return fetch(url, { ...init, body, headers: signedHeaders(url, method, headers, undefined, body) });
}

function bytesOf(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof URLSearchParams) return body.toString();
  throw new Error('signedFetch signs string, byte and form bodies only');
}

/**
 * A JSON call to a service, signed as the gateway would sign it; a string body is sent as it
 * is (for malformed JSON).
 */
export async function callService(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Reply> {
  const res = await signedFetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** A random organization per test, so lists and replicas only hold what the test made. */
export const newOrg = () => newId('organization');

/** What the gateway sets for a public request made with an API key. */
export const caller = (organization: string, environment: Environment = 'SANDBOX', keyKind: KeyKind = 'secret') =>
  identityHeaders({ organization, environment, keyKind, keyId: 'key_test' });

/** What the gateway's admin API sets: the organization only. */
export const admin = (organization: string) => ({ [IDENTITY_HEADERS.organization]: organization });

let position = 1;
/** An envelope as another service's relay would publish it. */
export function envelope(
  type: string,
  stream: string,
  organization: string,
  data: Record<string, unknown>,
  streamVersion = 1,
  environment: Environment = 'SANDBOX',
): DomainEventEnvelope {
  return {
    id: randomUUID(),
    type,
    schema_version: 1,
    stream,
    stream_version: streamVersion,
    global_position: position++,
    occurred_at: new Date().toISOString(),
    organization,
    environment,
    data,
  };
}
