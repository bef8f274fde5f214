import { freePort } from '@billing/testing';
import { type CreatedOrganization, type Platform, clientOf, startPlatform } from '../src/platform';

jest.setTimeout(120000);

type OpenIdClient = typeof import('openid-client');

/**
 * Apps merchants connect with OAuth 2.0 / OpenID Connect (docs/oauth.md): the gateway's
 * authorization server under /oauth, driven with openid-client as an app developer would.
 */
describe('OAuth apps', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let issuer: string;
  let oidc: OpenIdClient;
  const redirectUri = 'http://127.0.0.1:3999/callback';

  beforeAll(async () => {
    // openid-client is an ES module: loaded as one.
    oidc = await (new Function('return import("openid-client")')() as Promise<OpenIdClient>);
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}/oauth`;
    platform = await startPlatform({ gatewayPort: port, config: { OAUTH_ISSUER: issuer } });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Acme');
  });
  afterAll(() => platform?.stop());

  const registerApp = async (organization = org.id, body: Record<string, unknown> = {}) => {
    const created = await client.admin('POST', `/organizations/${organization}/oauth_apps`, {
      name: 'Ledger Books',
      environment: 'SANDBOX',
      redirect_uris: [redirectUri],
      ...body,
    });
    expect(created.status).toBe(201);
    return created.body as { client_id: string; client_secret: string };
  };

  const configurationFor = (app: { client_id: string; client_secret: string }) =>
    oidc.discovery(new URL(issuer), app.client_id, undefined, oidc.ClientSecretBasic(app.client_secret), {
      execute: [oidc.allowInsecureRequests],
    });

  it('publishes its discovery document and keys: the code flow with S256, the six scopes, revocation', async () => {
    const app = await registerApp();
    const config = await configurationFor(app);
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(issuer);
    expect(metadata.authorization_endpoint).toBe(`${issuer}/auth`);
    expect(metadata.token_endpoint).toBe(`${issuer}/token`);
    expect(metadata.revocation_endpoint).toBe(`${issuer}/token/revocation`);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.response_types_supported).toEqual(['code']);
    expect(metadata.scopes_supported).toEqual([
      'openid',
      'products:read',
      'orders:read',
      'subscriptions:read',
      'customers:read',
      'analytics:read',
    ]);
    const jwks = (await (await fetch(metadata.jwks_uri!)).json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'RSA', alg: 'RS256', use: 'sig' })]);
    expect(jwks.keys[0]!.d).toBeUndefined();
  });

  it('registers apps per organization and environment, with the secret shown once', async () => {
    const app = await registerApp(org.id, { name: 'Back office', environment: 'PRODUCTION' });
    expect(app).toMatchObject({ object: 'oauth_app', name: 'Back office', environment: 'PRODUCTION' });
    expect(app.client_id).toMatch(/^app_/);
    expect(app.client_secret).toMatch(/^appsecret_/);
    const listed = await client.admin('GET', `/organizations/${org.id}/oauth_apps`);
    expect(listed.status).toBe(200);
    const shown = listed.body.data.find((found: { id: string }) => found.id === app.client_id);
    expect(shown).toEqual({
      object: 'oauth_app',
      id: app.client_id,
      client_id: app.client_id,
      name: 'Back office',
      environment: 'PRODUCTION',
      redirect_uris: [redirectUri],
      created_at: expect.any(String),
    });
    expect(JSON.stringify(listed.body)).not.toContain(app.client_secret);

    const other = await client.createOrganization('Other');
    expect((await client.admin('GET', `/organizations/${other.id}/oauth_apps`)).body.data).toEqual([]);
    const fromOther = await client.admin('DELETE', `/organizations/${other.id}/oauth_apps/${app.client_id}`);
    expect(fromOther.status).toBe(404);
    const deleted = await client.admin('DELETE', `/organizations/${org.id}/oauth_apps/${app.client_id}`);
    expect(deleted.body).toEqual({ object: 'oauth_app', id: app.client_id, deleted: true });
    expect((await client.admin('DELETE', `/organizations/${org.id}/oauth_apps/${app.client_id}`)).status).toBe(404);
  });

  it('refuses redirect URIs that are not https (or http on the loopback), and unknown organizations', async () => {
    const refused = await client.admin('POST', `/organizations/${org.id}/oauth_apps`, {
      name: 'Plain',
      environment: 'SANDBOX',
      redirect_uris: ['http://books.example/callback'],
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('validation_error');
    const unknown = await client.admin('POST', '/organizations/org_unknown/oauth_apps', {
      name: 'Plain',
      environment: 'SANDBOX',
      redirect_uris: [redirectUri],
    });
    expect(unknown.status).toBe(404);
  });

  it('sends an authorization request to the dashboard to consent, and refuses one without PKCE or with another redirect URI', async () => {
    const app = await registerApp();
    const config = await configurationFor(app);
    const verifier = oidc.randomPKCECodeVerifier();
    const request = (parameters: Record<string, string>) =>
      fetch(
        oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid products:read', ...parameters }),
        {
          redirect: 'manual',
        },
      );

    const accepted = await request({
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toMatch(/^\/dashboard\/oauth\/consent\/[\w-]+$/);

    const withoutPkce = await request({});
    expect(withoutPkce.status).toBe(303);
    expect(new URL(withoutPkce.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');

    const plain = await request({ code_challenge: verifier, code_challenge_method: 'plain' });
    expect(new URL(plain.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');

    const elsewhere = await request({
      redirect_uri: 'http://127.0.0.1:3999/callback/other',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.text()).toContain('redirect_uri did not match any of the client');
  });
});
