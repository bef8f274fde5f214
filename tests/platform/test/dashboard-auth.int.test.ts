import { DashboardAgent, createUser, csrfOf, signedIn } from '../src/dashboard-helpers';
import { ADMIN_TOKEN, type CreatedOrganization, type Platform, clientOf, plan, startPlatform } from '../src/platform';

jest.setTimeout(60000);

/**
 * Issue 19, item 2: signing in to the merchant dashboard, sessions, CSRF, lockout on the
 * injected clock, roles, and that a user of one organization reaches nothing of another's.
 */
describe('merchant dashboard sign-in and access', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let acme: CreatedOrganization;
  let globex: CreatedOrganization;
  let globexProductId: string;
  let now = Date.parse('2026-11-23T08:00:00.000Z');
  const PASSWORD = 'correct horse battery';

  beforeAll(async () => {
    platform = await startPlatform({ promotions: true, now: () => new Date(now) });
    client = clientOf(platform.gatewayUrl);
    acme = await client.createOrganization('Acme');
    globex = await client.createOrganization('Globex');
    const product = await client.createProduct(globex.id, plan({ name: 'Globex plan', slug: 'globex' }));
    globexProductId = product.body.id;
    await createUser(platform.gatewayUrl, acme.id, 'owner@acme.example', 'owner', PASSWORD);
    await createUser(platform.gatewayUrl, acme.id, 'member@acme.example', 'member', PASSWORD);
    await createUser(platform.gatewayUrl, globex.id, 'owner@globex.example', 'owner', PASSWORD);
  });
  afterAll(() => platform?.stop());

  const acmeProducts = async () =>
    (await client.get('/products', acme.api_keys.sandbox.secret_key)).body.data.map((p: { name: string }) => p.name);

  it("speaks the browser's language until the user picks one, which it remembers", async () => {
    const inChinese = await fetch(`${platform.gatewayUrl}/dashboard/login`, {
      headers: { 'accept-language': 'zh-TW,zh;q=0.9,en;q=0.8' },
    }).then((r) => r.text());
    expect(inChinese).toContain('<html lang="zh-TW">');
    expect(inChinese).toContain('<h1>登入</h1>');
    expect(inChinese).toContain('href="/dashboard/language/en?back=%2Fdashboard%2Flogin" lang="en"');

    const agent = await signedIn(platform.gatewayUrl, 'owner@acme.example', PASSWORD);
    const english = await agent.get(`/dashboard/${acme.id}/sandbox/customers`);
    expect(english.html).toContain('<html lang="en">');
    const picked = await agent.get(
      `/dashboard/language/zh-TW?back=${encodeURIComponent(`/dashboard/${acme.id}/sandbox/customers`)}`,
    );
    expect([picked.status, picked.location]).toEqual([303, `/dashboard/${acme.id}/sandbox/customers`]);
    const chinese = await agent.get(`/dashboard/${acme.id}/sandbox/customers`);
    expect(chinese.html).toContain('<html lang="zh-TW">');
    expect(chinese.html).toContain('>顧客</a');
    expect(chinese.html).toContain('測試環境：僅有測試資料');
    // Only back into the dashboard; an unknown language is a 404 and changes nothing.
    for (const back of ['//evil.example/x', 'https://evil.example', '/dashboardx', '/dashboard\\evil']) {
      expect((await agent.get(`/dashboard/language/en?back=${encodeURIComponent(back)}`)).location).toBe('/dashboard');
    }
    expect((await agent.get('/dashboard/language/fr')).status).toBe(404);
    expect((await agent.get(`/dashboard/${acme.id}/sandbox/customers`)).html).toContain('<html lang="en">');
  });

  it('creates users through the admin API only, with clear errors', async () => {
    const path = `/organizations/${acme.id}/users`;
    expect(
      (await client.admin('POST', path, { email: 'x@acme.example', role: 'owner', password: PASSWORD }, 'wrong'))
        .status,
    ).toBe(401);
    const duplicate = await client.admin('POST', path, {
      email: 'OWNER@acme.example',
      role: 'member',
      password: PASSWORD,
    });
    expect(duplicate.status).toBe(409);
    const bad = await client.admin('POST', path, { email: 'not an email', role: 'boss', password: 'short' });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['email', 'password', 'role']);
    const listed = await client.admin('GET', path);
    expect(listed.body.data.map((u: { email: string }) => u.email).sort()).toEqual([
      'member@acme.example',
      'owner@acme.example',
    ]);
    expect(JSON.stringify(listed.body)).not.toContain('scrypt');
  });

  it('signs in with an HttpOnly SameSite=Lax session cookie and lands on the organization in Sandbox', async () => {
    const agent = new DashboardAgent(platform.gatewayUrl);
    expect((await agent.get('/dashboard/acme/sandbox')).location).toBe('/dashboard/login');
    const reply = await agent.signIn({ email: 'owner@acme.example', password: PASSWORD });
    expect(reply.status).toBe(303);
    const session = reply.setCookies.find((c) => c.startsWith('dashboard_session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Lax/);
    expect((await agent.get('/dashboard')).location).toBe(`/dashboard/${acme.id}/sandbox`);
    const products = await agent.get(`/dashboard/${acme.id}/sandbox/products`);
    expect(products.status).toBe(200);
    expect(products.html).toContain('Sandbox: test data only');
    const production = await agent.get(`/dashboard/${acme.id}/production/products`);
    expect(production.html).not.toContain('Sandbox: test data only');
  });

  it('refuses a form without the session CSRF token and changes nothing', async () => {
    const agent = await signedIn(platform.gatewayUrl, 'owner@acme.example', PASSWORD);
    const path = `/dashboard/${acme.id}/sandbox/products`;
    const fields = { _action: 'create', name: 'Forged', slug: 'forged', type: 'ONE_TIME', price: '100' };
    expect((await agent.post(path, fields)).status).toBe(403);
    expect((await agent.post(path, { ...fields, _csrf: 'not-the-token' })).status).toBe(403);
    const login = new DashboardAgent(platform.gatewayUrl);
    expect((await login.post('/dashboard/login', { email: 'owner@acme.example', password: PASSWORD })).status).toBe(
      403,
    );
    expect(await acmeProducts()).not.toContain('Forged');

    const created = await agent.submit(path, { ...fields, name: 'Real one', slug: 'real-one' });
    expect(created.status).toBe(303);
    expect(await acmeProducts()).toContain('Real one');
  });

  it('shows an API error next to its form and keeps the input', async () => {
    const agent = await signedIn(platform.gatewayUrl, 'owner@acme.example', PASSWORD);
    const reply = await agent.submit(`/dashboard/${acme.id}/sandbox/products`, {
      _action: 'create',
      name: 'Bad slug',
      slug: 'Not A Slug',
      type: 'ONE_TIME',
      price: '100',
    });
    expect(reply.status).toBe(422);
    expect(reply.html).toMatch(/<p class="error" role="alert" id="error-create">[^<]*slug/);
    expect(reply.html).toContain('value="Not A Slug"');
  });

  it('locks an account after five wrong passwords until the clock passes the lock', async () => {
    await createUser(platform.gatewayUrl, acme.id, 'locked@acme.example', 'member', PASSWORD);
    const agent = new DashboardAgent(platform.gatewayUrl);
    for (let i = 0; i < 4; i += 1) {
      expect((await agent.signIn({ email: 'locked@acme.example', password: 'wrong password' })).status).toBe(401);
    }
    const fifth = await agent.signIn({ email: 'locked@acme.example', password: 'wrong password' });
    expect(fifth.status).toBe(429);
    const right = await agent.signIn({ email: 'locked@acme.example', password: PASSWORD });
    expect(right.status).toBe(429);
    expect(right.html).toContain('locked until');
    now += 16 * 60_000;
    expect((await agent.signIn({ email: 'locked@acme.example', password: PASSWORD })).status).toBe(303);
  });

  it('never shows another organization, by its URL or by a record id', async () => {
    const agent = await signedIn(platform.gatewayUrl, 'owner@acme.example', PASSWORD);
    for (const path of [
      '',
      '/products',
      '/customers',
      '/webhooks',
      '/api-keys',
      '/settings',
      '/team',
      `/products/${globexProductId}`,
    ]) {
      const page = await agent.get(`/dashboard/${globex.id}/sandbox${path}`);
      expect({ path, status: page.status }).toEqual({ path, status: 404 });
      expect(page.html).not.toContain('Globex');
    }
    const own = await agent.get(`/dashboard/${acme.id}/sandbox/products/${globexProductId}`);
    expect(own.status).toBe(404);
    const csrf = csrfOf((await agent.get(`/dashboard/${acme.id}/sandbox/products`)).html);
    const forged = await agent.post(`/dashboard/${globex.id}/sandbox/products`, {
      _csrf: csrf,
      _action: 'create',
      name: 'Planted',
      type: 'ONE_TIME',
      price: '1',
    });
    expect(forged.status).toBe(404);
    const archive = await agent.post(`/dashboard/${acme.id}/sandbox/products`, {
      _csrf: csrf,
      _action: 'archive',
      product_id: globexProductId,
    });
    expect(archive.status).toBe(404);
    const globexProducts = await client.get('/products', globex.api_keys.sandbox.secret_key);
    expect(globexProducts.body.data.map((p: { name: string; active: boolean }) => [p.name, p.active])).toEqual([
      ['Globex plan', true],
    ]);
  });

  it('lets an owner roll keys and manage users, and refuses a member both', async () => {
    const member = await signedIn(platform.gatewayUrl, 'member@acme.example', PASSWORD);
    const keysPath = `/dashboard/${acme.id}/sandbox/api-keys`;
    const refused = await member.submit(keysPath, { _action: 'roll', type: 'secret' });
    expect(refused.status).toBe(403);
    expect((await client.get('/products', acme.api_keys.sandbox.secret_key)).status).toBe(200);
    expect(
      (
        await member.submit(`/dashboard/${acme.id}/sandbox/team`, {
          _action: 'invite',
          email: 'new@acme.example',
          role: 'owner',
        })
      ).status,
    ).toBe(403);
    expect((await member.get(keysPath)).html).toContain('Only an owner can roll keys');

    const owner = await signedIn(platform.gatewayUrl, 'owner@acme.example', PASSWORD);
    const rolled = await owner.submit(keysPath, { _action: 'roll', type: 'secret' });
    expect(rolled.status).toBe(200);
    const key = /<code id="new-key">(sk_test_[^<]+)<\/code>/.exec(rolled.html)![1]!;
    expect((await client.get('/products', acme.api_keys.sandbox.secret_key)).status).toBe(401);
    expect((await client.get('/products', key)).status).toBe(200);
    const later = await owner.get(keysPath);
    expect(later.html).not.toContain(key);
    expect(later.html).toContain(`sk_test_…${key.slice(-4)}`);

    const invited = await owner.submit(`/dashboard/${acme.id}/sandbox/team`, {
      _action: 'invite',
      email: 'new@acme.example',
      role: 'member',
    });
    expect(invited.status).toBe(200);
    const link = /(\/dashboard\/invite\/[A-Za-z0-9_-]+)/.exec(invited.html)![1]!;
    const newcomer = new DashboardAgent(platform.gatewayUrl);
    const form = await newcomer.get(link);
    expect(form.status).toBe(200);
    expect((await newcomer.post(link, { _csrf: csrfOf(form.html), password: 'a fresh password' })).location).toBe(
      '/dashboard/login',
    );
    expect((await newcomer.get(link)).status).toBe(404);
    expect((await newcomer.signIn({ email: 'new@acme.example', password: 'a fresh password' })).status).toBe(303);
  });

  it('signs out: the session row is gone, the old cookie no longer works', async () => {
    const agent = new DashboardAgent(platform.gatewayUrl);
    const signIn = await agent.signIn({ email: 'owner@acme.example', password: PASSWORD });
    const cookie = signIn.setCookies.find((c) => c.startsWith('dashboard_session='))!.split(';')[0]!;
    const path = `/dashboard/${acme.id}/sandbox/products`;
    const page = await agent.get(path);
    expect((await agent.post('/dashboard/logout', { _csrf: csrfOf(page.html) })).location).toBe('/dashboard/login');
    const replayed = await fetch(`${platform.gatewayUrl}${path}`, { headers: { cookie }, redirect: 'manual' });
    expect(replayed.headers.get('location')).toBe('/dashboard/login');
  });

  it('lets the operator sign in with the admin token and see every organization', async () => {
    const operator = new DashboardAgent(platform.gatewayUrl);
    expect((await operator.signIn({ admin_token: 'wrong' })).status).toBe(401);
    expect((await operator.signIn({ admin_token: ADMIN_TOKEN })).status).toBe(303);
    const home = await operator.get('/dashboard');
    expect(home.html).toContain('Acme');
    expect(home.html).toContain('Globex');
    expect((await operator.get(`/dashboard/${globex.id}/sandbox/products`)).html).toContain('Globex plan');
  });

  it('refuses a forged loopback credential', async () => {
    const reply = await fetch(`${platform.gatewayUrl}/v1/products`, {
      headers: { 'x-dashboard-credential': 'e30.forged' },
    });
    expect(reply.status).toBe(404);
  });
});
