import type { SqlExecutor } from '@billing/eventstore';
import { html } from '@billing/service';
import type { Configuration, KoaContextWithOIDC, Provider } from './oidc-types';
import { sqlAdapterFactory } from './adapter';
import { clientSecretMatches } from './apps';
import { APP_CLIENT_PROPERTIES } from './client-metadata';
import { OAUTH_SCOPES } from '@billing/contracts';
import type { ServerSecrets } from './server-secrets';

export const DEFAULT_OAUTH_ISSUER = 'http://127.0.0.1:8080/oauth';

/** Where the provider sends the user to sign in and consent: the dashboard (src/dashboard/pages/oauth-consent.ts). */
export const CONSENT_PATH_PREFIX = '/dashboard/oauth/consent/';

/** Access tokens live ten minutes; a refresh token (rotated at each use) thirty days. */
export const TOKEN_TTL_SECONDS = {
  AccessToken: 10 * 60,
  AuthorizationCode: 60,
  RefreshToken: 30 * 24 * 60 * 60,
  Grant: 365 * 24 * 60 * 60,
  IdToken: 60 * 60,
  Interaction: 60 * 60,
  Session: 24 * 60 * 60,
};

/** The scopes the gateway's read routes accept (all but `openid`, which only names the user). */
export const API_SCOPES = OAUTH_SCOPES.filter((scope) => scope !== 'openid');

/** The API the tokens are for (the resource of RFC 8707): the gateway's `/v1` beside the issuer. */
export const apiResourceOf = (issuer: string) => new URL('/v1', issuer).href;

export interface ProviderOptions {
  issuer: string;
  sql: SqlExecutor;
  schema: string;
  secrets: ServerSecrets;
  /** Behind a load balancer that sets X-Forwarded-Proto (TRUST_PROXY). */
  behindProxy?: boolean;
}

/**
 * The authorization server: oidc-provider (certified OpenID Connect, docs/decisions/0025),
 * configured for the authorization code with PKCE (S256) and rotating refresh tokens, opaque
 * access tokens for the API, kept in the gateway's database.
 */
export async function createOAuthProvider(options: ProviderOptions): Promise<Provider> {
  // oidc-provider is an ES module and the gateway CommonJS: `import()` loads it (TypeScript keeps
  // it so for node16; the gateway's jest config tells swc to keep it too).
  const { default: OidcProvider } = await import('oidc-provider');
  const resource = apiResourceOf(options.issuer);
  const provider = new OidcProvider(options.issuer, configuration(options, resource));
  provider.proxy = options.behindProxy ?? false;
  // Apps' secrets are kept as SHA-256 hashes, as API keys are (client-metadata.ts).
  provider.Client.prototype.compareClientSecret = function (this: { clientSecret?: string }, actual: string) {
    return Promise.resolve(clientSecretMatches(this.clientSecret ?? '', actual));
  };
  return provider;
}

function configuration(options: ProviderOptions, resource: string): Configuration {
  return {
    adapter: sqlAdapterFactory(options.sql, options.schema),
    jwks: options.secrets.jwks,
    cookies: { keys: options.secrets.cookieKeys },
    scopes: [...OAUTH_SCOPES],
    claims: { openid: ['sub'] },
    extraClientMetadata: { properties: APP_CLIENT_PROPERTIES },
    responseTypes: ['code'],
    pkce: { required: () => true },
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: TOKEN_TTL_SECONDS,
    clientDefaults: { token_endpoint_auth_method: 'client_secret_basic', id_token_signed_response_alg: 'RS256' },
    interactions: { url: (_ctx: KoaContextWithOIDC, interaction) => `${CONSENT_PATH_PREFIX}${interaction.uid}` },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    // A user who lands on an error (a wrong redirect_uri, an expired request) sees what and why, in plain HTML.
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = String(
        html`<!doctype html>
          <meta charset="utf-8" />
          <title>Authorization failed</title>
          <h1>Authorization failed</h1>
          <p>${out.error}: ${out.error_description ?? ''}</p>`,
      );
    },
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new Error('unknown resource');
          return {
            scope: API_SCOPES.join(' '),
            audience: resource,
            accessTokenFormat: 'opaque',
            accessTokenTTL: TOKEN_TTL_SECONDS.AccessToken,
          };
        },
      },
    },
  };
}
