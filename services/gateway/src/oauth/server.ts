import { type ServiceContext, startPeriodic } from '@billing/runtime';
import type { Express } from 'express';
import { AccessTokenAuthenticator } from './access-tokens';
import { purgeExpiredModels } from './adapter';
import type { Provider } from './oidc-types';
import { DEFAULT_OAUTH_ISSUER, apiResourceOf, createOAuthProvider } from './provider';
import { loadServerSecrets } from './server-secrets';
import { oauthDdl } from './tables';

/** Expired codes, tokens, sessions and interactions are deleted this often. */
const PURGE_INTERVAL_MS = 60 * 60_000;

/**
 * The gateway's OAuth 2.0 / OpenID Connect authorization server for the apps merchants connect
 * (docs/oauth.md), under the path of `OAUTH_ISSUER` (default http://127.0.0.1:8080/oauth).
 */
export class OAuthServer {
  private constructor(
    readonly provider: Provider,
    readonly issuer: string,
    /** Finds the app and scopes of an access token presented to /v1. */
    readonly tokens: AccessTokenAuthenticator,
    private readonly stopPurge: () => Promise<void>,
  ) {}

  static async create(context: ServiceContext, behindProxy: boolean): Promise<OAuthServer> {
    const sql = context.infrastructure.database;
    const schema = context.store.tables.schema;
    await context.store.migrateSchema(oauthDdl(schema));
    const issuer = (context.config.OAUTH_ISSUER ?? DEFAULT_OAUTH_ISSUER).replace(/\/+$/, '');
    const secrets = await loadServerSecrets(sql, schema, context.now());
    const provider = await createOAuthProvider({ issuer, sql, schema, secrets, behindProxy });
    // Its events name what failed, never a token or a secret.
    provider.on('server_error', (_ctx, err) => context.logger.error({ err }, 'oauth server error'));
    const stopPurge = startPeriodic(
      () =>
        purgeExpiredModels(sql, schema, context.now()).catch((err) =>
          context.logger.error({ err }, 'oauth purge failed'),
        ),
      PURGE_INTERVAL_MS,
    );
    const tokens = new AccessTokenAuthenticator(provider, sql, schema, apiResourceOf(issuer));
    return new OAuthServer(provider, issuer, tokens, stopPurge);
  }

  /** The provider's endpoints (discovery, authorize, token, revocation, JWKS) under the issuer's path. */
  mount(app: Express): void {
    app.use(new URL(this.issuer).pathname, this.provider.callback());
  }

  /** What the dashboard's consent page needs: the provider and the API its scopes are granted on. */
  consent() {
    return { provider: this.provider, resource: apiResourceOf(this.issuer) };
  }

  close(): Promise<void> {
    return this.stopPurge();
  }
}
