import type { ClientMetadata } from './oidc-types';
import type { OAuthApp } from './apps';
import { OAUTH_SCOPES } from '@billing/contracts';

/**
 * An app as oidc-provider's client: a confidential web app using the authorization code with
 * refresh tokens. `client_secret` holds the secret's SHA-256, never the secret: the provider's
 * comparison is replaced by one of hashes (`compareHashedClientSecrets`), and no feature that
 * would use the secret as a key (client_secret_jwt, HS* signatures) is enabled.
 */
export function clientMetadata(app: OAuthApp): ClientMetadata {
  return {
    client_id: app.client_id,
    client_secret: app.secret_hash,
    client_name: app.name,
    redirect_uris: app.redirect_uris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: OAUTH_SCOPES.join(' '),
    organization_id: app.organization_id,
    environment: app.environment,
  };
}

/** The client metadata that are ours, kept on the client (`extraClientMetadata`). */
export const APP_CLIENT_PROPERTIES = ['organization_id', 'environment'];
