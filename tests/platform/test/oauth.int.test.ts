import { createLogger } from '@billing/service';
import { eventually, freePort } from '@billing/testing';
import { DashboardAgent, createUser, csrfOf } from '../src/dashboard-helpers';
import {
  type CreatedOrganization,
  type Platform,
  clientOf,
  jsonApi,
  plan,
  startGateway,
  startPlatform,
} from '../src/platform';

jest.setTimeout(120000);

type OpenIdClient = typeof import('openid-client', { with: { 'resolution-mode': 'import' } });

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
  /** Every service's log lines at debug, and every secret the flow handed out, which none may hold. */
  const lines: string[] = [];
  const secrets = new Set<string>();
  const remember = <T extends { access_token: string; refresh_token?: string; id_token?: string }>(tokens: T) => {
    for (const value of [tokens.access_token, tokens.refresh_token, tokens.id_token]) if (value) secrets.add(value);
    return tokens;
  };

  beforeAll(async () => {
    // openid-client is an ES module: loaded as one.
    oidc = await (new Function('return import("openid-client")')() as Promise<OpenIdClient>);
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}/oauth`;
    platform = await startPlatform({
      gatewayPort: port,
      config: { OAUTH_ISSUER: issuer },
      checkout: true,
      billing: true,
      logger: (name) => createLogger(name, { level: 'debug', destination: { write: (line) => lines.push(line) } }),
    });
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
    secrets.add(created.body.client_secret);
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

    const reference = (await (await fetch(`${platform.gatewayUrl}/v1/openapi.json`)).json()) as any;
    expect(reference.components.securitySchemes.oauth2.flows.authorizationCode).toMatchObject({
      authorizationUrl: '/oauth/auth',
      tokenUrl: '/oauth/token',
    });
    expect(Object.keys(reference.components.securitySchemes.oauth2.flows.authorizationCode.scopes)).toEqual(
      metadata.scopes_supported,
    );
    expect(reference.paths['/products'].get.security).toContainEqual({ oauth2: ['products:read'] });
    const openedByTokens = Object.values(reference.paths as Record<string, Record<string, any>>)
      .flatMap((operations) => Object.entries(operations))
      .filter(([, operation]) => operation.security?.some((requirement: object) => 'oauth2' in requirement))
      .map(([method]) => method);
    expect(openedByTokens).toHaveLength(12);
    expect(new Set(openedByTokens)).toEqual(new Set(['get']));
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
      connections: [],
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

  describe('an app connected by the owner', () => {
    let other: CreatedOrganization;
    let app: { client_id: string; client_secret: string };
    let config: Awaited<ReturnType<OpenIdClient['discovery']>>;
    let acmeSubscription: { id: string; customer_id: string };
    let otherSubscription: { id: string; customer_id: string };
    const password = 'correct horse battery';

    const buy = async (organization: CreatedOrganization, email: string) => {
      const send = jsonApi(
        () => platform.gatewayUrl,
        () => organization.api_keys.sandbox.secret_key,
      );
      const created = await send('POST', '/checkout/sessions', {
        product_slug: 'monthly',
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/no',
      });
      expect(created.status).toBe(201);
      const paid = await fetch(`${platform.gatewayUrl}/checkout/${created.body.id}`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({ email, name: 'Mei', card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
      });
      expect(paid.status).toBe(303);
      return eventually(async () => {
        const session = await send('GET', `/checkout/sessions/${created.body.id}`);
        const subscription = await send('GET', `/subscriptions/${session.body.subscription_id}`);
        expect(subscription.status).toBe(200);
        return subscription.body as { id: string; customer_id: string };
      });
    };

    /** The owner's browser: signs in when the consent page asks, approves or denies. */
    const authorize = async (
      agent: DashboardAgent & { email: string },
      scope: string,
      decision: 'approve' | 'deny' = 'approve',
    ) => {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope,
        state,
        // The owner is asked each time (an app may insist), not only for scopes not granted yet.
        prompt: 'consent',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      const toConsent = await agent.get(url.pathname + url.search);
      expect(toConsent.status).toBe(303);
      let consent = await agent.get(toConsent.location!);
      if (consent.status === 303 && consent.location === '/dashboard/login') {
        const signedIn = await agent.signIn({ email: agent.email, password });
        expect(signedIn.location).toBe(toConsent.location);
        consent = await agent.get(toConsent.location!);
      }
      if (consent.status !== 200) return { consent };
      const decided = await agent.post(toConsent.location!, { _csrf: csrfOf(consent.html), decision });
      expect(decided.status).toBe(303);
      const back = await agent.get(decided.location!.replace(/^https?:\/\/[^/]+/, ''));
      expect(back.status).toBe(303);
      const callback = new URL(back.location!);
      if (callback.searchParams.get('code')) secrets.add(callback.searchParams.get('code')!);
      expect(callback.origin + callback.pathname).toBe(redirectUri);
      return { consent, callback, verifier, state };
    };

    const tokensFor = async (scope: string) => {
      const flow = await authorize(owner(), scope);
      return remember(
        await oidc.authorizationCodeGrant(config, flow.callback!, {
          pkceCodeVerifier: flow.verifier,
          expectedState: flow.state,
        }),
      );
    };

    const agents = new Map<string, DashboardAgent & { email: string }>();
    const agentOf = (email: string) => {
      if (!agents.has(email)) agents.set(email, Object.assign(new DashboardAgent(platform.gatewayUrl), { email }));
      return agents.get(email)!;
    };
    const owner = () => agentOf('owner@acme.example');

    const read = (path: string, token: string, init: RequestInit = {}) =>
      fetch(`${platform.gatewayUrl}/v1${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));

    beforeAll(async () => {
      other = await client.createOrganization('Other');
      for (const organization of [org, other]) {
        await client.createProduct(organization.id, plan({ slug: 'monthly', price: 300 }));
      }
      acmeSubscription = await buy(org, 'mei@acme-buyer.example');
      otherSubscription = await buy(other, 'lin@other-buyer.example');
      await createUser(platform.gatewayUrl, org.id, 'owner@acme.example', 'owner', password);
      await createUser(platform.gatewayUrl, org.id, 'member@acme.example', 'member', password);
      await createUser(platform.gatewayUrl, other.id, 'owner@other.example', 'owner', password);
      app = await registerApp(org.id);
      config = await configurationFor(app);
    });

    it('asks the owner to sign in, names the app, organization, environment and scopes, and gives tokens for the code', async () => {
      const flow = await authorize(owner(), 'openid products:read customers:read');
      expect(flow.consent.html).toContain('Ledger Books');
      expect(flow.consent.html).toContain('Acme');
      expect(flow.consent.html).toContain('Sandbox');
      expect(flow.consent.html).toContain('Read products and their prices');
      expect(flow.consent.html).toContain('Read customers, their emails and names');
      expect(flow.consent.html).not.toContain('Read subscriptions');
      const tokens = remember(
        await oidc.authorizationCodeGrant(config, flow.callback!, {
          pkceCodeVerifier: flow.verifier,
          expectedState: flow.state,
        }),
      );
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.expires_in).toBe(600);
      expect(tokens.refresh_token).toBeDefined();
      expect(tokens.scope!.split(' ').sort()).toEqual(['customers:read', 'products:read']);
      const users = await client.admin('GET', `/organizations/${org.id}/users`);
      const ownerId = users.body.data.find((user: { email: string }) => user.email === 'owner@acme.example').id;
      expect(tokens.claims()!.sub).toBe(ownerId);

      // The code is spent.
      await expect(
        oidc.authorizationCodeGrant(config, flow.callback!, {
          pkceCodeVerifier: flow.verifier,
          expectedState: flow.state,
        }),
      ).rejects.toMatchObject({ error: 'invalid_grant' });
    });

    it("reads the organization's products, subscriptions, customers, orders and analytics, and nothing of another", async () => {
      const tokens = await tokensFor(
        'openid products:read subscriptions:read customers:read orders:read analytics:read',
      );
      const token = tokens.access_token;
      const products = await read('/products', token);
      expect(products.status).toBe(200);
      expect(products.body.data.map((product: { slug: string }) => product.slug)).toEqual(['monthly']);
      expect((await read('/products/by-slug/monthly', token)).status).toBe(200);
      const limited = await fetch(`${platform.gatewayUrl}/v1/products`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(limited.headers.get('x-ratelimit-limit')).toBe('120');
      const subscriptions = await read('/subscriptions', token);
      expect(subscriptions.status).toBe(200);
      expect(subscriptions.body.data.map((found: { id: string }) => found.id)).toEqual([acmeSubscription.id]);
      expect((await read(`/subscriptions/${acmeSubscription.id}`, token)).status).toBe(200);
      const customers = await read('/customers', token);
      expect(customers.status).toBe(200);
      expect(customers.body.data.map((found: { id: string }) => found.id)).toEqual([acmeSubscription.customer_id]);
      const orders = await read('/orders', token);
      expect(orders.status).toBe(200);
      expect(orders.body.data).toHaveLength(1);
      expect((await read(`/orders/${orders.body.data[0].id}`, token)).status).toBe(200);
      const metrics = await read('/analytics/metrics', token);
      expect(metrics.status).toBe(200);
      expect(metrics.body.livemode).toBe(false);

      expect((await read(`/subscriptions/${otherSubscription.id}`, token)).status).toBe(404);
      expect((await read(`/customers/${otherSubscription.customer_id}`, token)).status).toBe(404);
    });

    it('answers 403 insufficient_scope to a read outside its scopes and to every write', async () => {
      const tokens = await tokensFor('products:read');
      const token = tokens.access_token;
      expect((await read('/products', token)).status).toBe(200);
      for (const path of ['/customers', '/subscriptions', '/orders', '/analytics/metrics', '/invoices', '/webhooks']) {
        const refused = await read(path, token);
        expect({ path, status: refused.status, code: refused.body.error.code }).toEqual({
          path,
          status: 403,
          code: 'insufficient_scope',
        });
      }
      const all = await tokensFor('products:read subscriptions:read customers:read orders:read analytics:read');
      const write = await read('/products', all.access_token, {
        method: 'POST',
        body: JSON.stringify(plan({ slug: 'sneaky' })),
      });
      expect(write.status).toBe(403);
      expect(write.body.error.code).toBe('insufficient_scope');
      const cancel = await read(`/subscriptions/${acmeSubscription.id}/cancel`, all.access_token, {
        method: 'POST',
        body: '{}',
      });
      expect(cancel.status).toBe(403);
      expect((await read(`/subscriptions/${acmeSubscription.id}`, all.access_token)).body.status).toBe('ACTIVE');
    });

    it('refreshes with rotation: the new token works, the old refresh token is refused', async () => {
      const first = await tokensFor('openid products:read');
      const second = remember(await oidc.refreshTokenGrant(config, first.refresh_token!));
      expect(second.refresh_token).not.toBe(first.refresh_token);
      expect((await read('/products', second.access_token)).status).toBe(200);
      await expect(oidc.refreshTokenGrant(config, first.refresh_token!)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
      // A refresh token used twice is taken for stolen: the grant and its tokens are revoked.
      expect((await read('/products', second.access_token)).status).toBe(401);
    });

    it('answers 401 to a revoked, unknown or deleted app token, and keeps API keys working', async () => {
      const tokens = await tokensFor('products:read');
      expect((await read('/products', tokens.access_token)).status).toBe(200);
      await oidc.tokenRevocation(config, tokens.refresh_token!);
      const revoked = await read('/products', tokens.access_token);
      expect(revoked.status).toBe(401);
      expect(revoked.body.error.code).toBe('unauthorized');
      expect((await read('/products', 'not-a-token')).status).toBe(401);

      const doomed = await registerApp(org.id, { name: 'Doomed' });
      const doomedConfig = await configurationFor(doomed);
      const saved = config;
      config = doomedConfig;
      const doomedTokens = await tokensFor('products:read').finally(() => (config = saved));
      expect((await read('/products', doomedTokens.access_token)).status).toBe(200);
      await client.admin('DELETE', `/organizations/${org.id}/oauth_apps/${doomed.client_id}`);
      expect((await read('/products', doomedTokens.access_token)).status).toBe(401);

      expect((await client.get('/products', org.api_keys.sandbox.secret_key)).status).toBe(200);
    });

    it('lets only an owner of the organization consent, and tells the app when the owner denies', async () => {
      const member = agentOf('member@acme.example');
      const asMember = await authorize(member, 'products:read');
      expect(asMember.consent.status).toBe(403);
      expect(asMember.consent.html).toContain('Only an owner');
      const stranger = agentOf('owner@other.example');
      expect((await authorize(stranger, 'products:read')).consent.status).toBe(403);

      const denied = await authorize(owner(), 'products:read', 'deny');
      expect(denied.callback!.searchParams.get('error')).toBe('access_denied');
    });

    it('is one authorization server across gateway replicas: another gateway reads with the token, refreshes it with the same keys, and refuses it once revoked', async () => {
      const replica = await startGateway(
        platform.infrastructure,
        { CATALOG_SERVICE_URL: platform.catalog.service.url, OAUTH_ISSUER: issuer },
        platform.gateway.service.context.store.tables.schema.replaceAll('"', ''),
      );
      try {
        const tokens = await tokensFor('openid products:read');
        const atReplica = await fetch(`${replica.service.url}/v1/products`, {
          headers: { authorization: `Bearer ${tokens.access_token}` },
        });
        expect(atReplica.status).toBe(200);
        const jwks = async (base: string) => (await fetch(`${base}/oauth/jwks`)).json();
        expect(await jwks(replica.service.url)).toEqual(await jwks(platform.gatewayUrl));

        const refreshed = await fetch(`${replica.service.url}/oauth/token`, {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }),
        });
        expect(refreshed.status).toBe(200);
        const second = remember((await refreshed.json()) as { access_token: string; refresh_token: string });
        expect((await read('/products', second.access_token)).status).toBe(200);

        await oidc.tokenRevocation(config, second.refresh_token);
        const revoked = await fetch(`${replica.service.url}/v1/products`, {
          headers: { authorization: `Bearer ${second.access_token}` },
        });
        expect(revoked.status).toBe(401);
      } finally {
        await replica.service.shutdown(); // not stop(): that would drop the schema the first gateway uses
      }
    });

    it('asks in zh-TW when the owner reads the dashboard in zh-TW', async () => {
      await owner().get('/dashboard/language/zh-TW');
      try {
        const flow = await authorize(owner(), 'products:read analytics:read', 'deny');
        expect(flow.consent.html).toContain('要連結「Ledger Books」嗎？');
        expect(flow.consent.html).toContain('讀取商品與價格');
        expect(flow.consent.html).toContain('讀取營收、MRR 與訂閱指標');
        expect(flow.consent.html).toContain('測試環境');
      } finally {
        await owner().get('/dashboard/language/en');
      }
    });

    it('shows the owner the connected apps with who approved them, and lets the owner register and remove one', async () => {
      await authorize(owner(), 'openid orders:read');
      const page = `/dashboard/${org.id}/sandbox/settings/connected-apps`;
      const shown = await owner().get(page);
      expect(shown.status).toBe(200);
      expect(shown.html).toContain('Ledger Books');
      expect(shown.html).toContain('owner@acme.example');
      expect(shown.html).toContain('orders:read');
      expect(shown.html).not.toContain('Back office');

      const registered = await owner().submit(page, {
        _action: 'register',
        name: 'Spreadsheet sync',
        redirect_uris: 'https://sheets.example/cb\nhttp://localhost:5000/cb',
      });
      expect(registered.status).toBe(200);
      const secret = /appsecret_\w+/.exec(registered.html)?.[0];
      expect(secret).toBeDefined();
      const apps = (await client.admin('GET', `/organizations/${org.id}/oauth_apps`)).body.data;
      const sync = apps.find((found: { name: string }) => found.name === 'Spreadsheet sync');
      expect(sync).toMatchObject({
        environment: 'SANDBOX',
        redirect_uris: ['https://sheets.example/cb', 'http://localhost:5000/cb'],
      });
      expect((await owner().get(page)).html).not.toContain(secret!);

      const refused = await owner().submit(page, {
        _action: 'register',
        name: 'Plain',
        redirect_uris: 'http://plain.example/cb',
      });
      expect(refused.status).toBe(422);

      const member = agentOf('member@acme.example');
      const asMember = await member.get(page);
      expect(asMember.status).toBe(200);
      expect(asMember.html).not.toContain('Register an app');
      expect((await member.submit(page, { _action: 'remove', client_id: sync.id })).status).toBe(403);

      const removed = await owner().submit(page, { _action: 'remove', client_id: sync.id });
      expect(removed.status).toBe(303);
      expect((await owner().get(page)).html).not.toContain('Spreadsheet sync');
    });
  });

  it('logs none of the secrets, codes and tokens it handed out, even at debug', () => {
    expect(secrets.size).toBeGreaterThan(20);
    expect(lines.length).toBeGreaterThan(100);
    const leaked = [...secrets].filter((secret) => lines.some((line) => line.includes(secret)));
    expect(leaked).toEqual([]);
  });
});
