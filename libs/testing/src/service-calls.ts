import { randomUUID } from 'node:crypto';
import {
  type DomainEventEnvelope,
  type Environment,
  IDENTITY_HEADERS,
  type KeyKind,
  identityHeaders,
  newId,
} from '@billing/contracts';

export interface Reply {
  status: number;
  body: any;
}

/** A JSON call to a service; a string body is sent as it is (for malformed JSON). */
export async function callService(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Reply> {
  const res = await fetch(`${baseUrl}${path}`, {
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
