import { type CallerIdentity, unauthorized } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { Request } from 'express';
import { describeKey, hashApiKey } from '../organizations/api-keys';
import { findActiveKey } from '../organizations/read-model';

/** Whether the request presents an API key at all, right or wrong (a guess to count if wrong). */
export const presentsApiKey = (req: Request): boolean =>
  ['authorization', 'x-service-secret-key', 'x-service-publishable-key'].some(
    (header) => req.get(header) !== undefined,
  );

/**
 * The key from any of the spec's three header forms. A key in the Secret or Publishable
 * header must be of that kind; a malformed or mismatched key is refused like an unknown one.
 */
export function apiKeyFrom(req: Request): string {
  const secret = req.get('x-service-secret-key');
  const publishable = req.get('x-service-publishable-key');
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
  const key = secret ?? publishable ?? bearer;
  if (!key) throw unauthorized('No API key provided: send Authorization: Bearer <API_KEY>');
  const described = describeKey(key);
  if (!described) throw unauthorized('Invalid API key');
  if ((secret && described.kind !== 'secret') || (!secret && publishable && described.kind !== 'publishable')) {
    throw unauthorized('Invalid API key');
  }
  return key;
}

/**
 * Looks keys up by hash. Found keys are cached for a few seconds to keep the database off the
 * hot path; a roll on this gateway clears the cache at once, other gateways within the TTL.
 */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, { identity: CallerIdentity; expiresAt: number }>();

  constructor(
    private readonly sql: SqlExecutor,
    private readonly schema: string,
    private readonly cacheTtlMs = 5000,
  ) {}

  async authenticate(req: Request): Promise<CallerIdentity> {
    const hash = hashApiKey(apiKeyFrom(req));
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > Date.now()) return cached.identity;
    const key = await findActiveKey(this.sql, this.schema, hash);
    if (!key) throw unauthorized('Invalid API key');
    const identity: CallerIdentity = {
      organization: key.organization,
      environment: key.environment,
      keyKind: key.kind,
      keyId: key.keyId,
    };
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(hash, { identity, expiresAt: Date.now() + this.cacheTtlMs });
    return identity;
  }

  forget(): void {
    this.cache.clear();
  }
}
