import net, { type AddressInfo, type Server } from 'node:net';
import { CHECKOUT_TOPIC } from '@billing/contracts';
import { startServiceForTest, type ServiceUnderTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { createNotificationsService, type ResolvedAddress, schedulerOf } from '../src';
import { client, completedSession, envelope, newOrg, publish, startReceiver, type Receiver } from './helpers';

jest.setTimeout(60000);

/** A listener that counts every connection, whatever is sent on it (TLS or not). */
async function startListener(host = '127.0.0.1', port = 0) {
  const connections: string[] = [];
  const server: Server = net.createServer((socket) => {
    connections.push(socket.remoteAddress ?? '?');
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Host names that resolve as the test says, each answer in turn (the last one repeats). */
function fakeDns() {
  const answers = new Map<string, string[][]>();
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname);
    const queue = answers.get(hostname);
    if (!queue) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const addresses = queue.length > 1 ? queue.shift()! : queue[0]!;
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, asked, set: (hostname: string, ...answer: string[][]) => answers.set(hostname, answer) };
}

const INTERNAL_URLS = [
  'https://127.0.0.1/hooks',
  'https://localhost/hooks',
  'https://api.localhost/hooks',
  'https://[::1]/hooks',
  'https://10.0.0.8/hooks',
  'https://172.16.5.4/hooks',
  'https://192.168.1.20/hooks',
  'https://100.64.0.7/hooks',
  'https://169.254.169.254/latest/meta-data/iam/security-credentials/',
  'https://metadata.google.internal/computeMetadata/v1/',
  'https://metadata/computeMetadata/v1/',
  'https://[fe80::1]/hooks',
  'https://[fd00:ec2::254]/latest/meta-data/',
  'https://[fc00::5]/hooks',
  'https://0.0.0.0/hooks',
  'https://[::ffff:127.0.0.1]/hooks',
  'https://[::ffff:a9fe:a9fe]/hooks',
  'https://2130706433/hooks',
  'https://0x7f.0.0.1/hooks',
  'https://0177.0.0.1/hooks',
  'https://127.1/hooks',
  'https://0xa9fea9fe/hooks',
  'https://224.0.0.1/hooks',
  'https://255.255.255.255/hooks',
  'https://billing:4103/hooks',
  'https://db.internal/hooks',
];

/**
 * Issue 12, part 6: webhook targets on internal networks are refused at registration and again
 * after DNS resolution at send time, without any connection to them; Sandbox reaches loopback
 * and private networks only when the operator sets WEBHOOK_ALLOW_PRIVATE_TARGETS=sandbox.
 */
describe('webhook targets on internal networks', () => {
  let strict: ServiceUnderTest;
  let allowing: ServiceUnderTest;
  let receiver: Receiver;
  const dns = fakeDns();
  let clock = Date.parse('2026-11-21T08:00:00.000Z');
  const config = { WEBHOOK_POLL_MS: '25', WEBHOOK_TIMEOUT_MS: '2000' };

  beforeAll(async () => {
    receiver = await startReceiver();
    const service = createNotificationsService({ resolve: dns.resolve });
    strict = await startServiceForTest(service, { config, now: () => new Date(clock) });
    allowing = await startServiceForTest(service, {
      config: { ...config, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
      now: () => new Date(clock),
    });
  });
  afterAll(async () => {
    await strict?.stop();
    await allowing?.stop();
    await receiver?.close();
  });

  const register = (running: ServiceUnderTest, org: string, url: string, environment = 'SANDBOX') =>
    client(() => running).admin(org, 'POST', '/webhook_endpoints', { environment, url, events: ['*'] });

  /** Publishes a checkout.completed and waits for the endpoint's first attempt; returns it. */
  async function firstAttempt(running: ServiceUnderTest, org: string, endpointId: string, environment = 'SANDBOX') {
    const session = completedSession({ livemode: environment === 'PRODUCTION' });
    const event = envelope(
      'checkout.completed',
      org,
      { session_id: session.id, object: session },
      environment as 'SANDBOX',
    );
    await publish(running, CHECKOUT_TOPIC, event);
    return eventually(async () => {
      await schedulerOf(running.service.context)!.idle();
      const list = await client(() => running).admin(org, 'GET', `/webhook_endpoints/${endpointId}/deliveries`);
      const [delivery] = list.body.data;
      expect(delivery?.attempts?.length).toBeGreaterThanOrEqual(1);
      return delivery.attempts[0];
    }, 20000);
  }

  it.each(['PRODUCTION', 'SANDBOX'])(
    'refuses every kind of internal target at registration in %s without the setting',
    async (environment) => {
      const org = newOrg();
      for (const url of [...INTERNAL_URLS, receiver.url('/hooks')]) {
        const refused = await register(strict, org, url, environment);
        expect({ url, status: refused.status, body: refused.body }).toEqual({
          url,
          status: 422,
          body: {
            error: {
              code: 'validation_error',
              message: expect.any(String),
              details: [{ path: 'url', message: expect.any(String), code: expect.any(String) }],
            },
          },
        });
      }
      expect((await register(strict, org, 'https://shop.example/hooks', environment)).status).toBe(201);
      const listed = await client(() => strict).admin(org, 'GET', '/webhook_endpoints');
      expect(listed.body.data.map((e: any) => e.url)).toEqual(['https://shop.example/hooks']);
    },
  );

  it('lets Sandbox reach loopback and private networks only with WEBHOOK_ALLOW_PRIVATE_TARGETS=sandbox', async () => {
    const org = newOrg();
    expect((await register(allowing, org, receiver.url('/allowed'))).status).toBe(201);
    expect((await register(allowing, org, 'http://localhost:3000/hooks')).status).toBe(201);
    expect((await register(allowing, org, 'https://10.0.0.8/hooks')).status).toBe(201);
    // Never Production, never metadata, link-local or 0.0.0.0, and http only to private targets.
    expect((await register(allowing, org, receiver.url('/p'), 'PRODUCTION')).status).toBe(422);
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'https://metadata.google.internal/',
      'https://[fe80::1]/hooks',
      'http://0.0.0.0:3000/hooks',
      'http://shop.example/hooks',
    ]) {
      expect({ url, status: (await register(allowing, org, url)).status }).toEqual({ url, status: 422 });
    }
  });

  it('checks the resolved addresses when sending: a name that resolves to 127.0.0.1 is never contacted', async () => {
    const listener = await startListener();
    try {
      const org = newOrg();
      dns.set('loopback.hooks.example', ['127.0.0.1']);
      const registered = await register(strict, org, `https://loopback.hooks.example:${listener.port}/x`, 'PRODUCTION');
      expect(registered.status).toBe(201);
      const attempt = await firstAttempt(strict, org, registered.body.id, 'PRODUCTION');
      expect(attempt).toMatchObject({
        status: 'failed',
        response_status: null,
        error: 'refused: loopback.hooks.example resolves to a loopback address',
      });
      expect(listener.connections).toEqual([]);
    } finally {
      await listener.close();
    }
  });

  it('refuses a name with any internal address among public ones', async () => {
    const org = newOrg();
    dns.set('mixed.hooks.example', ['93.184.216.34', '169.254.169.254']);
    const mixed = await register(strict, org, 'https://mixed.hooks.example/x');
    const attempt = await firstAttempt(strict, org, mixed.body.id);
    expect(attempt.error).toBe('refused: mixed.hooks.example resolves to a cloud metadata service');
  });

  it('refuses, when sending, a stored URL that the rules refuse now', async () => {
    // An endpoint registered before these rules (or under another setting): its URL is put in
    // the read model the scheduler sends from, behind the registration check's back.
    const listener = await startListener();
    try {
      const org = newOrg();
      const registered = await register(strict, org, 'https://shop.example/later');
      const { database, tables } = strict.service.context.store;
      await database.query(`UPDATE ${tables.schema}.webhook_endpoints SET url = $1 WHERE id = $2`, [
        `http://127.0.0.1:${listener.port}/old`,
        registered.body.id,
      ]);
      const attempt = await firstAttempt(strict, org, registered.body.id);
      expect(attempt.error).toBe('refused: 127.0.0.1 is a loopback address');
      expect(listener.connections).toEqual([]);
    } finally {
      await listener.close();
    }
  });

  it('connects to the address it checked and asks DNS once: rebinding to a private address reaches nothing', async () => {
    // First answer public, every later one 127.0.0.1, where a listener waits on the URL's port.
    const listener = await startListener();
    const connects: unknown[] = [];
    const original = net.Socket.prototype.connect;
    // No traffic leaves the test: the connection to the public address is recorded, then failed.
    const spy = jest.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (
      this: net.Socket,
      ...args: any[]
    ) {
      const options = Array.isArray(args[0]) ? args[0][0] : args[0];
      if (options?.host === 'rebind.hooks.example') {
        options.lookup(options.host, { all: true }, (_err: unknown, addresses: unknown) => connects.push(addresses));
        process.nextTick(() => this.destroy(Object.assign(new Error('no egress from tests'), { code: 'ETEST' })));
        return this;
      }
      return original.apply(this, args as Parameters<typeof original>);
    });
    try {
      const org = newOrg();
      dns.set('rebind.hooks.example', ['93.184.216.34'], ['127.0.0.1']);
      const registered = await register(strict, org, `https://rebind.hooks.example:${listener.port}/x`, 'PRODUCTION');
      expect(registered.status).toBe(201);
      const before = dns.asked.filter((name) => name === 'rebind.hooks.example').length;
      const attempt = await firstAttempt(strict, org, registered.body.id, 'PRODUCTION');
      expect(attempt).toMatchObject({ status: 'failed', error: 'connection error: ETEST' });
      // One resolution for the attempt; the connection got the address that was checked.
      expect(dns.asked.filter((name) => name === 'rebind.hooks.example').length - before).toBe(1);
      expect(connects).toEqual([[{ address: '93.184.216.34', family: 4 }]]);
      expect(listener.connections).toEqual([]);
    } finally {
      spy.mockRestore();
      await listener.close();
    }
  });

  it('pins the checked address for the connection itself (two loopback listeners, the allowance on)', async () => {
    // 127.0.0.1 answers first, 127.0.0.2 afterwards, on the same port: only the first is reached.
    const first = await startReceiver();
    const port = Number(new URL(first.url('/')).port);
    const second = await startListener('127.0.0.2', port);
    try {
      const org = newOrg();
      dns.set('dev.hooks.internal', ['127.0.0.1'], ['127.0.0.2']);
      const registered = await register(allowing, org, `http://dev.hooks.internal:${port}/pinned`);
      expect(registered.status).toBe(201);
      const attempt = await firstAttempt(allowing, org, registered.body.id);
      expect(attempt).toMatchObject({ status: 'succeeded', response_status: 200 });
      expect(first.at('/pinned')).toHaveLength(1);
      expect(first.at('/pinned')[0]!.headers.host).toBe(`dev.hooks.internal:${port}`);
      expect(second.connections).toEqual([]);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
