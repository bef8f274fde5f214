import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@billing/testing';

jest.setTimeout(90000);

const script = join(__dirname, '..', '..', '..', 'scripts', 'start-embedded.js');

interface Started {
  child: ChildProcess;
  output: () => string;
  printed: { gateway: string; adminToken: string; organization: string; secretKey: string; publishableKey: string };
  /** The banner's data lines: each the rest of its line. */
  data: { directory: string; pglite: string; adminTokenFile: string; demoFile: string };
}

/**
 * Runs `npm start`'s script in `cwd` (its own ./.data unless `dataDir` is given as DATA_DIR)
 * and waits for its banner. Never on DATABASE_URL or Kafka, whatever the test run has.
 */
function startEmbedded(
  cwd: string,
  dataDir?: string,
  extra: { args?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<Started> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'error', NODE_OPTIONS: '' };
    for (const name of [
      'DATABASE_URL',
      'KAFKA_BROKERS',
      'REDIS_URL',
      'ADMIN_TOKEN',
      'DATA_DIR',
      'HOST',
      'INTERNAL_SECRET',
      'SHOW_SECRETS',
    ]) {
      delete env[name];
    }
    if (dataDir !== undefined) env.DATA_DIR = dataDir;
    Object.assign(env, extra.env);
    for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
    const child = spawn(process.execPath, [script, ...(extra.args ?? [])], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const grab = (label: string) => new RegExp(`${label}:\\s+(\\S+)`).exec(output)?.[1] ?? '';
    const rest = (label: string) => new RegExp(`  ${label}:\\s+(.+)`).exec(output)?.[1] ?? '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (!output.includes('Press Ctrl+C')) return;
      resolve({
        child,
        output: () => output,
        printed: {
          gateway: grab('Gateway'),
          adminToken: grab('Admin token'),
          organization: grab('Demo organization'),
          secretKey: grab('Sandbox secret key'),
          publishableKey: grab('Sandbox publishable'),
        },
        data: {
          directory: rest('Data directory'),
          pglite: rest('PGlite data'),
          adminTokenFile: rest('Admin token file'),
          demoFile: rest('Demo org file'),
        },
      });
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => reject(new Error(`exited with ${code} before starting:\n${output}`)));
  });
}

/** A JSON call to the started gateway: GET, or POST with a body. */
async function callGateway(gateway: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${gateway}${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as any };
}

const PLAN = { environment: 'SANDBOX', name: 'Pro', slug: 'pro', type: 'SUBSCRIPTION', interval: 'month', price: 299 };

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    child.kill('SIGINT');
  });
}

describe('npm start on the embedded default', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'billing-start-'));
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  it('creates a demo organization, serves products with its key, and keeps everything across a restart', async () => {
    const first = await startEmbedded(cwd);
    const { gateway, adminToken, organization, secretKey, publishableKey } = first.printed;
    const data = join(realpathSync(cwd), '.data');
    expect(first.data).toEqual({
      directory: data,
      pglite: join(data, 'pglite'),
      adminTokenFile: join(data, 'admin-token'),
      demoFile: join(data, 'demo-organization.json'),
    });
    expect(gateway).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(organization).toMatch(/^org_/);
    expect(secretKey).toMatch(/^sk_test_/);
    expect(publishableKey).toMatch(/^pk_test_/);

    const created = await callGateway(gateway, `/admin/v1/organizations/${organization}/products`, adminToken, PLAN);
    expect(created.status).toBe(201);
    const list = await callGateway(gateway, '/v1/products', secretKey);
    expect(list.body.data.map((p: { slug: string }) => p.slug)).toEqual(['pro']);
    expect(await stop(first.child)).toBe(0);

    // A restart shows the secrets no more: it says where they are kept.
    const second = await startEmbedded(cwd);
    try {
      expect(second.printed.organization).toBe(organization);
      expect(second.output()).toContain(`Admin token:          not shown: ${join(data, 'admin-token')} holds it`);
      expect(second.output()).toContain(`Sandbox keys:         not shown: ${join(data, 'demo-organization.json')}`);
      for (const secret of [adminToken, secretKey, publishableKey]) expect(second.output()).not.toContain(secret);
      // The paste-ready exports read the secrets from their files instead of printing them.
      const exports = second
        .output()
        .split('\n')
        .filter((line) => line.startsWith('    export '))
        .join('\n');
      const shell = spawnSync('bash', [
        '-c',
        `${exports}\necho "$ADMIN_TOKEN $SANDBOX_SECRET_KEY $SANDBOX_PUBLISHABLE_KEY"`,
      ]);
      expect(shell.stdout.toString().trim()).toBe(`${adminToken} ${secretKey} ${publishableKey}`);
      const again = await fetch(`${second.printed.gateway}/v1/products/by-slug/pro`, {
        headers: { authorization: `Bearer ${publishableKey}` },
      });
      expect(again.status).toBe(200);
    } finally {
      expect(await stop(second.child)).toBe(0);
    }
  });

  it('wires the services together: a paid plan is a subscription, a second checkout for it is 409, its portal link outlives a restart', async () => {
    const own = mkdtempSync(join(tmpdir(), 'billing-start-'));
    let started = await startEmbedded(own);
    const { gateway, adminToken, organization, secretKey } = started.printed;
    const call = (path: string, token: string, body?: unknown) => callGateway(gateway, path, token, body);
    try {
      expect((await call(`/admin/v1/organizations/${organization}/products`, adminToken, PLAN)).status).toBe(201);
      const checkout = {
        product_slug: 'pro',
        success_url: 'https://shop.example/thanks',
        cancel_url: 'https://shop.example/cancel',
        customer_email: 'amy@example.com',
      };
      const session = await call('/v1/checkout/sessions', secretKey, checkout);
      expect(session.status).toBe(201);
      const paid = await fetch(session.body.url, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
      });
      expect(paid.status).toBe(303);

      // Polled slowly enough to stay within the Sandbox key's 120 requests a minute (a 429 never
      // turns into the list), with room for a busy machine.
      const subscriptions = await eventually(
        async () => {
          const listed = await call('/v1/subscriptions', secretKey);
          expect(listed).toMatchObject({ status: 200, body: { subscriptions: [expect.anything()] } });
          return listed.body.subscriptions;
        },
        40000,
        500,
      );
      expect(subscriptions[0]).toMatchObject({ status: 'ACTIVE', product: { slug: 'pro' } });
      const again = await call('/v1/checkout/sessions', secretKey, checkout);
      expect(again).toMatchObject({
        status: 409,
        body: {
          error: { code: 'conflict', details: [{ existing_subscription_id: subscriptions[0].id, status: 'ACTIVE' }] },
        },
      });

      // Issue 26, item 8: the portal link is derived from INTERNAL_SECRET, which is kept in
      // DATA_DIR (owner only), so a restart does not end it. The port is new: only the path is kept.
      const portal = await call('/v1/portal/sessions', secretKey, {
        customer_id: subscriptions[0].customer_id,
        return_url: 'https://shop.example/account',
      });
      expect(portal.status).toBe(201);
      const portalPath = new URL(portal.body.url).pathname;
      expect((await fetch(`${gateway}${portalPath}`)).status).toBe(200);
      expect(await stop(started.child)).toBe(0);
      started = await startEmbedded(own);
      expect((await fetch(`${started.printed.gateway}${portalPath}`)).status).toBe(200);
      const secretFile = join(own, '.data', 'internal-secret');
      expect(statSync(secretFile).mode & 0o777).toBe(0o600);
      expect(started.output()).not.toContain(readFileSync(secretFile, 'utf8').trim());
    } finally {
      expect(await stop(started.child)).toBe(0);
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('keeps everything under DATA_DIR, never in ./.data, and prints the exact paths', async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'billing-start-')));
    const cwd = join(base, 'cwd');
    mkdirSync(cwd);
    const dataDir = join(base, 'state', 'billing');
    try {
      const first = await startEmbedded(cwd, dataDir);
      try {
        expect(first.data).toEqual({
          directory: dataDir,
          pglite: join(dataDir, 'pglite'),
          adminTokenFile: join(dataDir, 'admin-token'),
          demoFile: join(dataDir, 'demo-organization.json'),
        });
        const { gateway, adminToken, organization, secretKey } = first.printed;
        expect(
          (await callGateway(gateway, `/admin/v1/organizations/${organization}/products`, adminToken, PLAN)).status,
        ).toBe(201);
        expect((await callGateway(gateway, '/v1/products', secretKey)).body.data).toHaveLength(1);
      } finally {
        expect(await stop(first.child)).toBe(0);
      }
      expect(readdirSync(cwd)).toEqual([]);
      expect(existsSync(join(cwd, '.data'))).toBe(false);
      expect(readdirSync(dataDir).sort()).toEqual([
        'admin-token',
        'demo-organization.json',
        'internal-secret',
        'pglite',
      ]);
      expect(existsSync(join(dataDir, 'pglite', 'PG_VERSION'))).toBe(true);
      expect(readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()).toBe(first.printed.adminToken);
      expect(JSON.parse(readFileSync(join(dataDir, 'demo-organization.json'), 'utf8')).id).toBe(
        first.printed.organization,
      );

      // A relative DATA_DIR is taken from the current directory and printed absolute; the data is
      // the same, and --show-secrets prints the token and keys again.
      const second = await startEmbedded(base, join('state', 'billing'), { args: ['--show-secrets'] });
      try {
        expect(second.data.directory).toBe(dataDir);
        expect({ ...second.printed, gateway: '' }).toEqual({ ...first.printed, gateway: '' });
        const products = await callGateway(second.printed.gateway, '/v1/products', second.printed.secretKey);
        expect(products.body.data.map((p: { slug: string }) => p.slug)).toEqual(['pro']);
      } finally {
        expect(await stop(second.child)).toBe(0);
      }
      expect(existsSync(join(base, '.data'))).toBe(false);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('writes nothing to disk with DATA_DIR=memory, and says so', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'billing-start-'));
    try {
      const started = await startEmbedded(cwd, 'memory');
      try {
        expect(started.data).toEqual({
          directory: 'none (DATA_DIR=memory: nothing is written to disk)',
          pglite: 'in memory, lost on exit',
          adminTokenFile: 'none (a new token every start)',
          demoFile: 'none (a new demo organization every start)',
        });
        const { gateway, adminToken, organization, secretKey } = started.printed;
        expect(adminToken).toMatch(/^adm_/);
        expect(
          (await callGateway(gateway, `/admin/v1/organizations/${organization}/products`, adminToken, PLAN)).status,
        ).toBe(201);
        expect((await callGateway(gateway, '/v1/products', secretKey)).body.data).toHaveLength(1);
      } finally {
        expect(await stop(started.child)).toBe(0);
      }
      expect(readdirSync(cwd)).toEqual([]);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('says what it does, then prints the banner last with paste-ready exports, and logs no request by default', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'billing-start-'));
    try {
      const started = await startEmbedded(cwd, 'memory', { env: { LOG_LEVEL: undefined } });
      try {
        const { gateway, adminToken, organization, secretKey, publishableKey } = started.printed;
        const before = started.output();
        const progress = [
          'Opening embedded PostgreSQL (PGlite) in memory, the bus in it.',
          'Starting the services',
          '  gateway       ',
          'Creating the demo organization.',
          'Billing platform is running',
        ].map((line) => before.indexOf(line));
        expect(progress.every((at, i) => at >= 0 && (i === 0 || at > progress[i - 1]!))).toBe(true);
        expect(before).toContain(
          [
            `    export BILLING_URL=${gateway}`,
            `    export ORG_ID=${organization}`,
            `    export ADMIN_TOKEN=${adminToken}`,
            `    export SANDBOX_SECRET_KEY=${secretKey}`,
            `    export SANDBOX_PUBLISHABLE_KEY=${publishableKey}`,
            '',
            '  Press Ctrl+C to stop.',
          ].join('\n'),
        );
        expect(
          (await callGateway(gateway, `/admin/v1/organizations/${organization}/products`, adminToken, PLAN)).status,
        ).toBe(201);
        expect((await callGateway(gateway, '/v1/products', secretKey)).status).toBe(200);
        expect((await callGateway(gateway, '/v1/products', `${secretKey}x`)).status).toBe(401);
        const dashboard = new RegExp(`  Dashboard:\\s+(${gateway}/dashboard) `).exec(before)?.[1];
        expect(dashboard).toBe(`${gateway}/dashboard`);
        expect((await fetch(dashboard!)).status).toBe(200);
        // Nothing after the banner: requests log at info, and the default level is warn.
        await new Promise((settle) => setTimeout(settle, 300));
        expect(started.output()).toBe(before);
        expect(before.trimEnd().endsWith('Press Ctrl+C to stop.')).toBe(true);
      } finally {
        expect(await stop(started.child)).toBe(0);
      }
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('binds every service to 127.0.0.1 whatever HOST says, refuses forged calls to them, and logs no secret', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'billing-start-'));
    try {
      const started = await startEmbedded(cwd, 'memory', { env: { HOST: '0.0.0.0', LOG_LEVEL: 'debug' } });
      try {
        const { gateway, adminToken, organization, secretKey, publishableKey } = started.printed;
        expect(gateway).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
        const logLines = () =>
          started
            .output()
            .split('\n')
            .filter((line) => line.startsWith('{'))
            .map((line) => JSON.parse(line) as { msg?: string; url?: string; service?: string });
        const listening = new Map(
          logLines()
            .filter((line) => line.msg === 'service listening')
            .map((line) => [line.service, line.url ?? '']),
        );
        expect([...listening.keys()].sort()).toEqual(
          ['billing', 'catalog', 'checkout', 'gateway', 'notifications', 'promotions'].sort(),
        );
        for (const [service, url] of listening) {
          expect([service, url]).toEqual([
            service,
            expect.stringMatching(service === 'gateway' ? /^http:\/\/0\.0\.0\.0:/ : /^http:\/\/127\.0\.0\.1:/),
          ]);
        }

        // Straight to the catalog's port with forged identity headers: refused, nothing made.
        const forged = { 'x-billing-organization': organization, 'content-type': 'application/json' };
        const catalog = listening.get('catalog')!;
        const made = await fetch(`${catalog}/admin/products`, {
          method: 'POST',
          headers: forged,
          body: JSON.stringify(PLAN),
        });
        expect(made.status).toBe(401);
        expect(((await made.json()) as any).error.code).toBe('unauthorized');
        const read = await fetch(`${catalog}/v1/products`, {
          headers: {
            ...forged,
            'x-billing-environment': 'SANDBOX',
            'x-billing-key-kind': 'secret',
            'x-billing-key-id': 'k',
          },
        });
        expect(read.status).toBe(401);
        expect((await callGateway(gateway, '/v1/products', secretKey)).body.data).toEqual([]);

        // Traffic that logs, at debug: a product, a refused key, a missing route.
        expect(
          (await callGateway(gateway, `/admin/v1/organizations/${organization}/products`, adminToken, PLAN)).status,
        ).toBe(201);
        expect((await callGateway(gateway, '/v1/products', `${secretKey}x`)).status).toBe(401);
        expect((await callGateway(gateway, '/v1/nothing', publishableKey)).status).toBe(404);
        const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
        const logs = logLines()
          .map((line) => JSON.stringify(line))
          .join('\n');
        expect(logs).toContain('request completed');
        // Not a terminal: every log line is JSON (pretty only on a TTY or with LOG_FORMAT=pretty).
        const afterBanner = started.output().split('Press Ctrl+C to stop.')[1]!.split('\n').filter(Boolean);
        expect(afterBanner.length).toBeGreaterThan(0);
        for (const line of afterBanner) expect(() => JSON.parse(line)).not.toThrow();
        for (const secret of [adminToken, secretKey, publishableKey]) {
          expect(logs).not.toContain(secret);
          expect(logs).not.toContain(sha256(secret));
        }
      } finally {
        expect(await stop(started.child)).toBe(0);
      }
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
