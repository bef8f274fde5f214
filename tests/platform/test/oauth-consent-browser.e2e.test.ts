import { readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { freePort } from '@billing/testing';
import { describeWithBrowser, launchChromium } from '../src/browser';
import { createUser } from '../src/dashboard-helpers';
import { type Platform, clientOf, plan, startPlatform } from '../src/platform';

jest.setTimeout(120000);

declare const window: any;
declare const document: any;
type OpenIdClient = typeof import('openid-client', { with: { 'resolution-mode': 'import' } });
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'correct horse battery';

/** No sideways scroll of the page (wide tables scroll in their own region) and no serious axe violation. */
async function expectReadableOnAPhone(page: Page): Promise<void> {
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  await page.evaluate(AXE_SOURCE);
  const violations: Array<{ id: string; impact: string }> = await page.evaluate(
    async () => (await window.axe.run(window.document, { resultTypes: ['violations'] })).violations,
  );
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
}

/** An app connecting in a phone's browser (docs/oauth.md): sign-in, consent at 375 px, back to the app. */
describeWithBrowser('connecting an app in a browser', () => {
  let platform: Platform;
  let browser: Browser;
  let appSite: Server;
  let redirectUri: string;
  let issuer: string;
  let oidc: OpenIdClient;

  beforeAll(async () => {
    oidc = await (new Function('return import("openid-client")')() as Promise<OpenIdClient>);
    appSite = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>App</title><h1>Connected</h1>');
    });
    await new Promise<void>((resolve) => appSite.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(appSite.address() as AddressInfo).port}/callback`;
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}/oauth`;
    [platform, browser] = await Promise.all([
      startPlatform({ gatewayPort: port, config: { OAUTH_ISSUER: issuer } }),
      launchChromium(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    appSite?.close();
  });

  it('signs the owner in, shows the consent readable at 375 px, and returns to the app with a code that reads', async () => {
    const client = clientOf(platform.gatewayUrl);
    const org = await client.createOrganization('Acme Cloud');
    await client.createProduct(org.id, plan({ slug: 'pro' }));
    await createUser(platform.gatewayUrl, org.id, 'mei@acme.example', 'owner', PASSWORD);
    const app = (
      await client.admin('POST', `/organizations/${org.id}/oauth_apps`, {
        name: 'Ledger Books',
        environment: 'SANDBOX',
        redirect_uris: [redirectUri],
      })
    ).body;
    const config = await oidc.discovery(
      new URL(issuer),
      app.client_id,
      undefined,
      oidc.ClientSecretBasic(app.client_secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const authorizationUrl = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid products:read',
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });

    const context = await browser.newContext({ viewport: { width: 375, height: 740 } });
    const page = await context.newPage();
    await page.goto(authorizationUrl.href);
    await page.getByLabel('Email').fill('mei@acme.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Connect Ledger Books?' }).waitFor();
    expect(await page.textContent('main')).toContain('Acme Cloud');
    await expectReadableOnAPhone(page);

    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Connected' }).waitFor();
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    const products = await client.get('/products', tokens.access_token);
    expect(products.status).toBe(200);
    expect(products.body.data.map((product: { slug: string }) => product.slug)).toEqual(['pro']);

    await page.goto(`${platform.gatewayUrl}/dashboard/${org.id}/sandbox/settings/connected-apps`);
    await page.getByRole('heading', { name: 'Connected apps' }).waitFor();
    expect(await page.textContent('main')).toContain('mei@acme.example');
    await expectReadableOnAPhone(page);
    await context.close();
  });
});
