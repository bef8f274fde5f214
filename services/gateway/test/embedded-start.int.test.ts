import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(90000);

const script = join(__dirname, '..', '..', '..', 'scripts', 'start-embedded.js');

interface Started {
  child: ChildProcess;
  output: () => string;
  printed: { gateway: string; adminToken: string; organization: string; secretKey: string; publishableKey: string };
}

/** Runs `npm start`'s script in `cwd` (its own ./.data) and waits for its banner. */
function startEmbedded(cwd: string): Promise<Started> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'error', NODE_OPTIONS: '' };
    for (const name of ['DATABASE_URL', 'KAFKA_BROKERS', 'REDIS_URL', 'ADMIN_TOKEN']) delete env[name];
    const child = spawn(process.execPath, [script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const grab = (label: string) => new RegExp(`${label}:\\s+(\\S+)`).exec(output)?.[1] ?? '';
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
      });
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => reject(new Error(`exited with ${code} before starting:\n${output}`)));
  });
}

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
    expect(gateway).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(organization).toMatch(/^org_/);
    expect(secretKey).toMatch(/^sk_test_/);
    expect(publishableKey).toMatch(/^pk_test_/);

    const created = await fetch(`${gateway}/admin/v1/organizations/${organization}/products`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        environment: 'SANDBOX',
        name: 'Pro',
        slug: 'pro',
        type: 'SUBSCRIPTION',
        interval: 'month',
        price: 299,
      }),
    });
    expect(created.status).toBe(201);
    const list = await fetch(`${gateway}/v1/products`, { headers: { authorization: `Bearer ${secretKey}` } });
    expect(((await list.json()) as { data: Array<{ slug: string }> }).data.map((p) => p.slug)).toEqual(['pro']);
    expect(await stop(first.child)).toBe(0);

    const second = await startEmbedded(cwd);
    try {
      expect({ ...second.printed, gateway: '' }).toEqual({ ...first.printed, gateway: '' });
      const again = await fetch(`${second.printed.gateway}/v1/products/by-slug/pro`, {
        headers: { authorization: `Bearer ${publishableKey}` },
      });
      expect(again.status).toBe(200);
    } finally {
      expect(await stop(second.child)).toBe(0);
    }
  });
});
