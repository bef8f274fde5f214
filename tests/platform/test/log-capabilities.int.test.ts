import { createLogger } from '@billing/service';
import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

type Reply = { status: number; body: any };

/**
 * Issue 26, item 3: a credential that travels in a URL (a portal page's access token, a
 * dashboard invitation, an embedded checkout's card-form token, a client secret in a query) acts
 * as the customer or the merchant's user; the whole platform logs at debug into a buffer while
 * each is issued and used, also on routes that do not exist under them (whose 404 names the
 * path), and no line may hold any of them.
 */
describe('a log scan after flows that put credentials in URLs', () => {
  const lines: string[] = [];
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;

  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await fetch(`${platform.gatewayUrl}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text } as Reply;
  };
  const page = async (method: 'GET' | 'POST', url: string) => {
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      ...(method === 'POST' && { body: new URLSearchParams({ _csrf: 'forged' }) }),
    });
    await response.text();
    return response.status;
  };

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
      logger: (name) => createLogger(name, { level: 'debug', destination: { write: (line) => lines.push(line) } }),
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Acme');
  });
  afterAll(() => platform?.stop());

  it('holds no portal token, invitation token, card-form token or client secret in any line', async () => {
    const sk = { authorization: `Bearer ${org.api_keys.sandbox.secret_key}` };
    const pk = { 'x-recur-publishable-key': org.api_keys.sandbox.publishable_key, origin: 'https://shop.example' };
    const gateway = platform.gatewayUrl;
    const product = (await client.createProduct(org.id, plan({ slug: 'pro' }))).body;

    // An embedded checkout: its card form by token, its page by client_secret, paid.
    const created = await call('POST', '/v1/checkouts', pk, {
      productId: product.id,
      customerEmail: 'mei@shop.example',
    });
    expect(created.status).toBe(201);
    const { sdk_token: sdkToken, client_secret: clientSecret, checkout } = created.body;
    const card = await fetch(`${gateway}/sandbox/card-form/${sdkToken}`, {
      method: 'POST',
      headers: { origin: 'https://shop.example' },
      body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(card.status).toBe(200);
    const embed = new URLSearchParams({
      id: checkout.id,
      key: pk['x-recur-publishable-key'],
      client_secret: clientSecret,
    });
    expect(await page('GET', `${gateway}/embed/checkout?${embed}`)).toBe(200);
    expect(await page('GET', `${gateway}/sandbox/card-form/${sdkToken}/nothing-here`)).toBe(404);
    const paid = await call('POST', `/v1/checkouts/${checkout.id}/pay`, pk, { creditToken: created.body.credit_token });
    expect(paid.status).toBe(200);

    // The customer's portal: its page, a form post without the CSRF token, a page that does not exist.
    const customer = await eventually(
      async () => {
        const listed = await call('GET', '/v1/customers', sk);
        expect(listed.body.data).toHaveLength(1);
        return listed.body.data[0];
      },
      30000,
      200,
    );
    const portal = await call('POST', '/v1/portal/sessions', sk, {
      customer_id: customer.id,
      return_url: 'https://shop.example/account',
    });
    expect(portal.status).toBe(201);
    const portalToken = new URL(portal.body.url).pathname.split('/')[3]!;
    expect(await page('GET', portal.body.url)).toBe(200);
    expect(await page('POST', `${portal.body.url}/schedule/cancel`)).toBeGreaterThanOrEqual(400);
    expect(await page('GET', `${portal.body.url}/nothing-here`)).toBe(404);
    expect(await page('GET', `${gateway}/portal/${portal.body.id}/${portalToken}x`)).toBe(404);

    // A dashboard invitation: its page, its form posted without the CSRF cookie, a path under it.
    const invited = await client.admin('POST', `/organizations/${org.id}/users`, {
      email: 'new.user@acme.example',
      role: 'member',
    });
    expect(invited.status).toBe(201);
    const invitePath: string = invited.body.invite_path;
    const inviteToken = invitePath.split('/').pop()!;
    expect(await page('GET', `${gateway}${invitePath}`)).toBe(200);
    expect(await page('POST', `${gateway}${invitePath}`)).toBe(403);
    expect(await page('GET', `${gateway}${invitePath}/nothing-here`)).toBe(404);

    // A token in a query string, on a route that exists and on one that does not.
    expect(await page('GET', `${gateway}/v1/nothing?token=${inviteToken}&client_secret=${clientSecret}`)).toBe(401);

    const logged = lines.join('');
    // Each flow was logged: the scan below is not vacuous.
    for (const route of ['/portal/', '/dashboard/invite/', '/sandbox/card-form/', '/embed/checkout']) {
      expect(logged).toContain(route);
    }
    expect(logged).toContain('"level":"debug"');
    const secrets = { sdkToken, clientSecret, portalToken, inviteToken };
    const found = Object.entries(secrets).filter(([, value]) => logged.includes(value));
    expect(found.map(([name]) => name)).toEqual([]);
  });
});
