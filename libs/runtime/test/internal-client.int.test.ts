import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ApiError, type CallerIdentity } from '@billing/contracts';
import express from 'express';
import { InternalClient } from '../src';

const tenant = (organization: string): CallerIdentity => ({
  organization,
  environment: 'SANDBOX',
  keyKind: 'secret',
  keyId: 'checkout',
});

/**
 * Checkout's breakers in front of catalog and promotions: one tenant whose calls fail (its input
 * makes the service answer 503, or 500) must not cut the others off.
 */
describe('InternalClient breakers per tenant', () => {
  let server: Server;
  let client: InternalClient;
  const hostile = tenant('org_hostile');
  const victim = tenant('org_victim');

  beforeAll(async () => {
    const app = express();
    app.get('/things/ok', (_req, res) => void res.json({ ok: true }));
    app.get(
      '/things/unavailable',
      (_req, res) => void res.status(503).json({ error: { code: 'service_unavailable' } }),
    );
    app.get('/things/bug', (_req, res) => void res.status(500).json({ error: { code: 'internal_error' } }));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    // Built apart so that the options also fit an InternalClient that takes no secret.
    const options = {
      name: 'catalog',
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      secret: 'internal-client-test-secret',
      resetTimeoutMs: 60_000,
      // What is tested is whose failures open which breaker, not the 1.5 s default timeout: on
      // CI's four suites at once on two cores one of the victim's 40 local calls was answered
      // 503, most likely by that timeout (nothing else there fails a call to /things/ok).
      timeoutMs: 10_000,
    };
    client = new InternalClient(options);
  });
  afterAll(async () => {
    client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const outcome = (call: Promise<{ status: number }>) =>
    call.then(
      (response) => response.status,
      (error: unknown) => (error instanceof ApiError ? `${error.status} ${error.code}` : String(error)),
    );

  it("opens only the failing tenant's breaker: the other tenant's 40 calls all answer", async () => {
    const victimStatuses: unknown[] = [];
    for (let i = 0; i < 40; i++) {
      expect(await outcome(client.get('/things/unavailable', hostile))).toBe('503 service_unavailable');
      victimStatuses.push(await outcome(client.get('/things/ok', victim)));
    }
    expect(victimStatuses).toEqual(Array(40).fill(200));
    expect(client.isOpenFor(hostile)).toBe(true);
    expect(client.isOpenFor(victim)).toBe(false);
    expect(client.isOpen).toBe(false);
  });

  it('does not count a 500 against anyone (a bug answering, not a service that cannot serve)', async () => {
    const other = tenant('org_buggy');
    for (let i = 0; i < 10; i++) {
      expect(await outcome(client.get('/things/bug', other))).toBe('503 service_unavailable');
    }
    expect(client.isOpenFor(other)).toBe(false);
    expect(await outcome(client.get('/things/ok', other))).toBe(200);
  });
});
