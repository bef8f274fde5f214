import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

jest.setTimeout(90000);

const script = join(__dirname, '..', '..', '..', 'scripts', 'start-embedded.js');
const ADMIN_TOKEN = 'adm_embedded_webhook_targets_test';

/** `npm start`'s script on the embedded default (in memory), with `env` on top; its gateway URL and demo organization. */
function startEmbedded(env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; gateway: string; org: string }> {
  return new Promise((resolve, reject) => {
    const base: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'error', NODE_OPTIONS: '' };
    for (const name of ['DATABASE_URL', 'KAFKA_BROKERS', 'REDIS_URL', 'HOST', 'WEBHOOK_ALLOW_PRIVATE_TARGETS']) {
      delete base[name];
    }
    const child = spawn(process.execPath, [script], {
      env: { ...base, DATA_DIR: 'memory', ADMIN_TOKEN, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (!output.includes('Press Ctrl+C')) return;
      const grab = (label: string) => new RegExp(`${label}:\\s+(\\S+)`).exec(output)?.[1] ?? '';
      resolve({ child, gateway: grab('Gateway'), org: grab('Demo organization') });
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => reject(new Error(`exited with ${code} before starting:\n${output}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', () => resolve());
    child.kill('SIGINT');
  });
}

/**
 * Issue 12, part 6: Sandbox's localhost allowance is an operator setting that `npm start`
 * turns on for the embedded default only, and that the operator can turn off there too.
 */
describe('webhook targets on the embedded default', () => {
  const register = async (gateway: string, org: string, environment: string, url: string) => {
    const response = await fetch(`${gateway}/admin/v1/organizations/${org}/webhook_endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ environment, url, events: ['*'] }),
    });
    return response.status;
  };

  it('lets Sandbox endpoints reach localhost, never Production ones or metadata', async () => {
    const { child, gateway, org } = await startEmbedded();
    try {
      expect(await register(gateway, org, 'SANDBOX', 'http://127.0.0.1:3000/hooks')).toBe(201);
      expect(await register(gateway, org, 'SANDBOX', 'http://localhost:3000/hooks')).toBe(201);
      expect(await register(gateway, org, 'PRODUCTION', 'https://127.0.0.1:3000/hooks')).toBe(422);
      expect(await register(gateway, org, 'SANDBOX', 'http://169.254.169.254/latest/meta-data/')).toBe(422);
    } finally {
      await stop(child);
    }
  });

  it('refuses localhost in Sandbox too when the operator sets WEBHOOK_ALLOW_PRIVATE_TARGETS=none', async () => {
    const { child, gateway, org } = await startEmbedded({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'none' });
    try {
      expect(await register(gateway, org, 'SANDBOX', 'http://127.0.0.1:3000/hooks')).toBe(422);
      expect(await register(gateway, org, 'SANDBOX', 'https://shop.example/hooks')).toBe(201);
    } finally {
      await stop(child);
    }
  });
});
