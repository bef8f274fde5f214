import { type CallerIdentity, RECUR_SDK_HEADER, RECUR_SDK_KEY_HEADERS, unauthorized } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { describeKey, hashApiKey } from '../organizations/api-keys';
import { findActiveKey } from '../organizations/read-model';

/** The dedicated key headers: the spec's, and the `X-Recur-*` names the recur-tw SDK sends. */
export const SECRET_KEY_HEADERS = ['x-service-secret-key', 'x-recur-secret-key'] as const;
export const PUBLISHABLE_KEY_HEADERS = ['x-service-publishable-key', 'x-recur-publishable-key'] as const;

/**
 * Once the caller is known, the key leaves the request: a service never holds an API key (the
 * gateway vouches for the caller in signed identity headers). A key that came in the SDK's own
 * header leaves `RECUR_SDK_HEADER` behind, so that the service answers in the shapes the SDK reads.
 */
export function handOverKeyHeaders(req: IncomingMessage): void {
  const fromSdk = RECUR_SDK_KEY_HEADERS.some((name) => req.headers[name] !== undefined);
  for (const name of [...SECRET_KEY_HEADERS, ...PUBLISHABLE_KEY_HEADERS]) delete req.headers[name];
  if (fromSdk) req.headers[RECUR_SDK_HEADER] = '1';
}

/** A header's value as one string (names in lower case), as express's `req.get` reads it. */
export const headerOf = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

const firstHeader = (req: IncomingMessage, names: readonly string[]) =>
  names.map((name) => headerOf(req, name)).find((value) => value !== undefined);

/** Whether the request presents an API key at all, right or wrong (a guess to count if wrong). */
export const presentsApiKey = (req: IncomingMessage): boolean =>
  ['authorization', ...SECRET_KEY_HEADERS, ...PUBLISHABLE_KEY_HEADERS].some(
    (header) => req.headers[header] !== undefined,
  );

/**
 * The key from any of the accepted header forms. A key in a Secret or Publishable header must
 * be of that kind; a malformed or mismatched key is refused like an unknown one.
 */
export function apiKeyFrom(req: IncomingMessage): string {
  const secret = firstHeader(req, SECRET_KEY_HEADERS);
  const publishable = firstHeader(req, PUBLISHABLE_KEY_HEADERS);
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  const key = secret ?? publishable ?? bearer;
  if (!key) throw unauthorized('No API key provided: send Authorization: Bearer <API_KEY>');
  const described = describeKey(key);
  if (!described) throw unauthorized('Invalid API key');
  if ((secret && described.kind !== 'secret') || (!secret && publishable && described.kind !== 'publishable')) {
    throw unauthorized('Invalid API key');
  }
  return key;
}

/** How long a found key is trusted without asking the database again; a roll on PostgreSQL waits as long. */
export const API_KEY_CACHE_TTL_MS = 1000;

/**
 * Looks keys up by hash. Found keys are cached for `cacheTtlMs`, counted from the start of the
 * lookup, to keep the database off the hot path. A key in use is looked up again in the
 * background once its entry is half that old, so under steady use it never expires and no
 * request waits for the lookup: when every request of a key waited on it once a second, a
 * lookup slowed by a busy machine held them all (issue 17's half-load p99). A roll must be
 * refused at once by every gateway: `OrganizationChanges` clears the caches of every gateway of
 * the process before the roll is answered, and those of other processes when its NOTIFY
 * arrives; since that can come after the answer, a roll on PostgreSQL is answered only once
 * `cacheTtlMs` has passed since its commit, when no gateway holds an entry looked up before it
 * (a background lookup started before the change is not cached, as any other).
 */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, { identity: CallerIdentity; refreshAt: number; expiresAt: number }>();
  /** Bumped by every `forget`: a lookup that a change overtook is answered but not cached. */
  private generation = 0;
  /** Lookups in flight, by key hash, with the generation they started in. */
  private readonly lookups = new Map<string, { generation: number; lookup: Promise<CallerIdentity | undefined> }>();

  constructor(
    private readonly sql: SqlExecutor,
    private readonly schema: string,
    private readonly cacheTtlMs = API_KEY_CACHE_TTL_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async authenticate(req: IncomingMessage): Promise<CallerIdentity> {
    const hash = hashApiKey(apiKeyFrom(req));
    const cached = this.fresh(hash);
    if (cached) return cached;
    const identity = await this.lookUp(hash);
    if (!identity) throw unauthorized('Invalid API key');
    return identity;
  }

  /**
   * The cached caller of `hash` while its entry is valid; past half its life, a lookup starts in
   * the background (one at a time) to replace the entry before it expires. The entry is never
   * trusted past `cacheTtlMs` from the start of its own lookup, so a roll is refused as before.
   */
  private fresh(hash: string): CallerIdentity | undefined {
    const cached = this.cache.get(hash);
    if (!cached) return undefined;
    const now = this.now();
    if (cached.expiresAt <= now) return undefined;
    if (cached.refreshAt <= now && !this.lookups.has(hash)) {
      // Nobody waits on it: a failure leaves the entry to expire, and the next lookup reports it.
      this.lookUp(hash).catch(() => undefined);
    }
    return cached.identity;
  }

  /**
   * One database lookup per key at a time: the requests that miss the cache together share it,
   * unless a change came between (a new generation). A key no longer found leaves the cache.
   */
  private lookUp(hash: string): Promise<CallerIdentity | undefined> {
    const pending = this.lookups.get(hash);
    if (pending && pending.generation === this.generation) return pending.lookup;
    const generation = this.generation;
    const lookedUpAt = this.now();
    const lookup = findActiveKey(this.sql, this.schema, hash)
      .then((key) => {
        if (!key) {
          if (generation === this.generation) this.cache.delete(hash);
          return undefined;
        }
        const identity: CallerIdentity = {
          organization: key.organization,
          environment: key.environment,
          keyKind: key.kind,
          keyId: key.keyId,
        };
        if (generation === this.generation) {
          if (this.cache.size > 10_000) this.cache.clear();
          this.cache.set(hash, {
            identity,
            refreshAt: lookedUpAt + this.cacheTtlMs / 2,
            expiresAt: lookedUpAt + this.cacheTtlMs,
          });
        }
        return identity;
      })
      .finally(() => {
        if (this.lookups.get(hash)?.lookup === lookup) this.lookups.delete(hash);
      });
    this.lookups.set(hash, { generation, lookup });
    return lookup;
  }

  /**
   * The caller of a cached key without waiting on I/O (past half its entry's life it starts the
   * background lookup, as `authenticate` does); undefined when the key is not cached (or not valid).
   */
  cached(req: IncomingMessage): CallerIdentity | undefined {
    let key: string;
    try {
      key = apiKeyFrom(req);
    } catch {
      return undefined;
    }
    return this.fresh(hashApiKey(key));
  }

  forget(): void {
    this.generation++;
    this.cache.clear();
  }
}
