import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, freePort } from '@billing/testing';

jest.setTimeout(240000);

const root = join(__dirname, '..', '..', '..');
const quickstart = readFileSync(join(root, 'docs', 'quickstart.md'), 'utf8');
/** The page's ```sh blocks, in order: what a reader types. */
const blocks = [...quickstart.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);

/** Collects a child's stdout and stderr into one string. */
function collect(child: ChildProcess): () => string {
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return () => output;
}

/**
 * Step 1 is `npm start`; package.json says what that runs. The test runs the same script
 * without `--build` (the test run builds first), on a memory database so it leaves nothing.
 */
function startPlatform(): { child: ChildProcess; output: () => string } {
  const start = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start as string;
  expect(start).toBe('node scripts/start-embedded.js --build');
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: 'memory', PORT: '0', NODE_OPTIONS: '' };
  for (const name of [
    'DATABASE_URL',
    'KAFKA_BROKERS',
    'REDIS_URL',
    'ADMIN_TOKEN',
    'HOST',
    'LOG_LEVEL',
    'INTERNAL_SECRET',
  ]) {
    delete env[name];
  }
  const child = spawn(process.execPath, ['scripts/start-embedded.js'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, output: collect(child) };
}

const stopped = (child: ChildProcess, signal: NodeJS.Signals) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });

describe('docs/quickstart.md, run as written', () => {
  let platform: ReturnType<typeof startPlatform> | undefined;
  let shell: ChildProcess | undefined;

  afterAll(async () => {
    // The shell's process group holds the receiver the page starts in the background.
    if (shell?.pid) {
      try {
        process.kill(-shell.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    if (platform) await stopped(platform.child, 'SIGINT');
  });

  it('starts, makes a product, pays a checkout and receives the signed checkout.completed webhook', async () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(blocks[0]).toBe('npm install\nnpm start\n');
    platform = startPlatform();
    await eventually(() => expect(platform!.output()).toContain('Press Ctrl+C to stop.'), 120000, 200);
    // "paste them into a second terminal": the banner's export lines, then every later block.
    const exports = platform
      .output()
      .split('\n')
      .filter((line) => line.startsWith('    export '))
      .map((line) => line.trim());
    expect(exports.map((line) => line.split('=')[0])).toEqual([
      'export BILLING_URL',
      'export ORG_ID',
      'export ADMIN_TOKEN',
      'export SANDBOX_SECRET_KEY',
      'export SANDBOX_PUBLISHABLE_KEY',
    ]);
    const script = ['set -euo pipefail', ...exports, ...blocks.slice(1)].join('\n');
    const env = { ...process.env, WEBHOOK_PORT: String(await freePort()) };
    shell = spawn('bash', ['-c', script], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = collect(shell);
    const exitCode = await new Promise<number | null>((resolve) => shell!.once('exit', resolve));
    expect({ exitCode, output: output() }).toMatchObject({ exitCode: 0 });

    expect(output()).toContain('"slug":"pro"');
    expect(output()).toMatch(/^303 https:\/\/example\.com\/thanks/m);
    // The receiver outlives the shell; it prints the webhook when it arrives.
    await eventually(() => expect(output()).toContain('webhook verified: checkout.completed evt_'), 60000, 200);
    expect(output()).not.toContain('REFUSED');
    // What the page says follows: the buyer has an active subscription to the plan.
    const banner = Object.fromEntries(
      exports.map((line) => line.replace('export ', '').split('=') as [string, string]),
    );
    await eventually(
      async () => {
        const listed = await fetch(`${banner.BILLING_URL}/v1/subscriptions`, {
          headers: { authorization: `Bearer ${banner.SANDBOX_SECRET_KEY}` },
        });
        expect(await listed.json()).toMatchObject({ subscriptions: [{ status: 'ACTIVE', product: { slug: 'pro' } }] });
      },
      30000,
      500,
    );
  });
});
