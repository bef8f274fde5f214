import type { AddressInfo } from 'node:net';
import express from 'express';
import { clientOf, type CreatedOrganization, type Platform, startGateway, startPlatform } from '../src/platform';

/**
 * Issue 17: past its capacity the gateway admits what it can serve and refuses the rest at
 * once, instead of queueing every request until the services' timeouts open the breakers.
 */
describe('the gateway at capacity', () => {
  /** A checkout that holds every session creation until `release()`, then answers at once. */
  async function heldCheckout() {
    const held: Array<() => void> = [];
    let hits = 0;
    let holding = true;
    const app = express();
    app.post('/v1/checkout/sessions', (_req, res) => {
      hits++;
      const answer = () => void res.status(201).json({ object: 'checkout_session', id: `cs_${hits}` });
      if (holding) held.push(answer);
      else answer();
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return {
      hits: () => hits,
      held: () => held.length,
      release: () => {
        holding = false;
        held.splice(0).forEach((answer) => answer());
      },
      port: (server.address() as AddressInfo).port,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  let platform: Platform;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let checkout: Awaited<ReturnType<typeof heldCheckout>>;
  let org: CreatedOrganization;

  beforeAll(async () => {
    platform = await startPlatform();
    checkout = await heldCheckout();
    gateway = await startGateway(platform.infrastructure, {
      CATALOG_SERVICE_URL: platform.catalog.service.url,
      CHECKOUT_SERVICE_URL: `http://127.0.0.1:${checkout.port}`,
      GATEWAY_MAX_IN_FLIGHT: '2',
      GATEWAY_MIN_IN_FLIGHT: '2',
      RATE_LIMIT_PER_MINUTE_OVERRIDE: '10000',
    });
    org = await clientOf(gateway.service.url).createOrganization();
  });
  afterAll(async () => {
    checkout.release();
    await gateway.stop();
    await checkout.close();
    await platform.stop();
  });

  const create = () =>
    fetch(`${gateway.service.url}/v1/checkout/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.api_keys.sandbox.secret_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ product_id: 'prod_1', success_url: 'https://shop.example/ok' }),
    });

  it('refuses past its bound at once with 503 and Retry-After, keeps the admin API, and the breaker stays closed', async () => {
    let settled = 0;
    const admitted = [create(), create()].map((answer) => answer.finally(() => settled++));
    const deadline = Date.now() + 5000;
    while (checkout.held() < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(checkout.held()).toBe(2);

    // Refused without waiting for a slot: both admitted requests are still held upstream, and
    // nothing releases them before this answer (a wall-clock bound failed under CI's load).
    const refused = await create();
    expect({ held: checkout.held(), settled }).toEqual({ held: 2, settled: 0 });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({
      error: { code: 'service_unavailable', message: 'The platform is at capacity; retry in a moment' },
    });
    expect(checkout.hits()).toBe(2);
    // Paying an open session has headroom past the bound (the stub has no hosted page: 404).
    const payment = await fetch(`${gateway.service.url}/checkout/cs_1`, {
      method: 'POST',
      body: new URLSearchParams(),
    });
    expect(payment.status).toBe(404);
    // Operators are not refused: the admin API is outside the bound.
    expect((await clientOf(gateway.service.url).createOrganization('Other')).api_keys).toBeDefined();

    checkout.release();
    expect((await Promise.all(admitted)).map((response) => response.status)).toEqual([201, 201]);
    expect((await create()).status).toBe(201);
  });
});
