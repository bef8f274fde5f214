import { ApiError, type CallerIdentity, type OAuthScope, isOAuthScope } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { PUBLISHABLE_KEY_HEADERS, SECRET_KEY_HEADERS } from '../auth/authenticate';
import { describeKey } from '../organizations/api-keys';
import { findApp } from './apps';
import type { Provider } from './oidc-types';
import { scopeRequiredFor } from './route-scopes';

/** An app's call: the organization and environment it acts for, and what its token may read. */
export interface TokenCaller {
  caller: CallerIdentity;
  scopes: ReadonlySet<OAuthScope>;
}

const KEY_HEADERS = [...SECRET_KEY_HEADERS, ...PUBLISHABLE_KEY_HEADERS];

/** Where the request's token caller is kept for the scope check (`res.locals`). */
export const TOKEN_SCOPES = 'oauthScopes';

/**
 * The bearer when it is an OAuth access token: sent as `Authorization: Bearer`, in no key header,
 * and not shaped as an API key (`sk_`/`pk_`). Anything else is an API key's business.
 */
export function accessTokenOf(req: IncomingMessage): string | undefined {
  if (KEY_HEADERS.some((name) => req.headers[name] !== undefined)) return undefined;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!bearer || describeKey(bearer) || /^(sk|pk)_/.test(bearer)) return undefined;
  return bearer;
}

export const invalidToken = () =>
  new ApiError(401, 'unauthorized', 'Invalid access token: it is unknown, expired or revoked');

export const insufficientScope = (scope: OAuthScope | undefined) =>
  new ApiError(
    403,
    'insufficient_scope',
    scope
      ? `This token lacks the ${scope} scope this request needs`
      : 'An app token may not make this request: it reads only what its scopes allow',
  );

/**
 * Finds who an access token acts for: its app's organization and environment. The app acts as
 * a Secret Key of that environment would, for the reads its scopes allow and nothing else
 * (`requireTokenScope`); the rate limit counts per app (the caller's keyId is its client id).
 */
export class AccessTokenAuthenticator {
  constructor(
    private readonly provider: Provider,
    private readonly sql: SqlExecutor,
    private readonly schema: string,
    private readonly resource: string,
  ) {}

  async authenticate(token: string): Promise<TokenCaller> {
    const found = await this.provider.AccessToken.find(token);
    if (!found || found.isExpired || !audienceOf(found.aud).includes(this.resource)) throw invalidToken();
    const app = found.clientId ? await findApp(this.sql, this.schema, found.clientId) : undefined;
    if (!app) throw invalidToken();
    return {
      caller: {
        organization: app.organization_id,
        environment: app.environment,
        keyKind: 'secret',
        keyId: app.client_id,
      },
      scopes: new Set(
        String(found.scope ?? '')
          .split(' ')
          .filter(isOAuthScope),
      ),
    };
  }
}

const audienceOf = (aud: unknown): string[] => (Array.isArray(aud) ? aud : typeof aud === 'string' ? [aud] : []);

/** A token's request goes on only to a read its scopes cover: 403 insufficient_scope otherwise. */
export const requireTokenScope: RequestHandler = (req, res, next) => {
  const scopes = res.locals[TOKEN_SCOPES] as ReadonlySet<OAuthScope> | undefined;
  if (!scopes) return next();
  const needed = scopeRequiredFor(req.method, req.originalUrl.split('?')[0]!);
  next(needed && scopes.has(needed) ? undefined : insufficientScope(needed));
};
