import { z } from 'zod';
import { Environment } from '../events/envelope';

/**
 * Who is calling, as the gateway found out from the API key. The gateway sets these headers
 * on every request it forwards and strips them from every client request (every `x-billing-`
 * header); services believe them only when the call is signed with the internal secret
 * (`scope`, `timestamp`, `signature`: see `@billing/signing`).
 */
export const IDENTITY_HEADERS = {
  organization: 'x-billing-organization',
  environment: 'x-billing-environment',
  keyKind: 'x-billing-key-kind',
  keyId: 'x-billing-key-id',
  /** Who the call acts for (`actorHeaderValue`), signed with the rest. */
  actor: 'x-billing-actor',
  scope: 'x-billing-scope',
  timestamp: 'x-billing-timestamp',
  signature: 'x-billing-signature',
  /** SHA-256 (hex) of the body bytes as sent, signed with the rest; checked against the bytes received. */
  bodyHash: 'x-billing-body-sha256',
} as const;

/**
 * Set by the gateway (`1`) on a request whose API key came in the recur-tw SDK's own header
 * (`X-Recur-Publishable-Key`, `X-Recur-Secret-Key`): the checkout service answers it in the shapes
 * the SDK reads (docs/embedded-checkout.md). Stripped from clients like the identity headers; not
 * signed, as it chooses how an answer is worded, never what a caller may do.
 */
export const RECUR_SDK_HEADER = 'x-billing-recur-sdk';

/** The key headers the recur-tw SDK sends: a request that used one is answered in the SDK's shapes. */
export const RECUR_SDK_KEY_HEADERS = ['x-recur-secret-key', 'x-recur-publishable-key'] as const;

export const KeyKind = z.enum(['secret', 'publishable']);
export type KeyKind = z.infer<typeof KeyKind>;

/**
 * Every read and write of a service is confined to one organization and environment. A type, not
 * an interface: event data that holds one must stay assignable to `Record<string, unknown>`.
 */
export type Tenant = {
  organization: string;
  environment: Environment;
};

export const CallerIdentity = z.object({
  organization: z.string().min(1),
  environment: Environment,
  keyKind: KeyKind,
  keyId: z.string().min(1),
});
export type CallerIdentity = z.infer<typeof CallerIdentity>;

export function identityHeaders(identity: CallerIdentity): Record<string, string> {
  return {
    [IDENTITY_HEADERS.organization]: identity.organization,
    [IDENTITY_HEADERS.environment]: identity.environment,
    [IDENTITY_HEADERS.keyKind]: identity.keyKind,
    [IDENTITY_HEADERS.keyId]: identity.keyId,
  };
}

/** Reads the identity headers; undefined when any is missing or malformed. */
export function identityFromHeaders(
  headers: Record<string, string | string[] | undefined>,
): CallerIdentity | undefined {
  const one = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? undefined : value;
  };
  const parsed = CallerIdentity.safeParse({
    organization: one(IDENTITY_HEADERS.organization),
    environment: one(IDENTITY_HEADERS.environment),
    keyKind: one(IDENTITY_HEADERS.keyKind),
    keyId: one(IDENTITY_HEADERS.keyId),
  });
  return parsed.success ? parsed.data : undefined;
}
