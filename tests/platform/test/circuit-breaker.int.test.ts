import type { AddressInfo } from 'node:net';
import { catalogService } from '@billing/catalog';
import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually, freePort } from '@billing/testing';
import express from 'express';
import { clientOf, type CreatedOrganization, type Platform, plan, startGateway, startPlatform } from '../src/platform';

describe('a service that is down', () => {
  let platform: Platform;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let catalog: ServiceUnderTest | undefined;
  let port: number;

  beforeAll(async () => {
    platform = await startPlatform();
    port = await freePort();
    gateway = await startGateway(platform.infrastructure, { CATALOG_SERVICE_URL: `http://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    await catalog?.stop();
    await gateway.stop();
    await platform.stop();
  });

  it('gives 503 in the error envelope within two seconds, and recovers when the service returns', async () => {
    const client = clientOf(gateway.service.url);
    const org = await client.createOrganization();
    const key = org.api_keys.sandbox.secret_key;

    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const down = await client.get('/products', key);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(down.status).toBe(503);
      expect(down.body).toEqual({
        error: { code: 'service_unavailable', message: expect.stringContaining('catalog') },
      });
    }

    catalog = await startServiceForTest(catalogService, { infrastructure: platform.infrastructure, port });
    await eventually(async () => expect((await client.get('/products', key)).status).toBe(200), 10000, 200);
  });
});

interface Reply {
  status: number;
  body: any;
}

const post = async (baseUrl: string, path: string, headers: Record<string, string>, body: unknown): Promise<Reply> => {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
};

const session = (product_id: string) => ({
  product_id,
  success_url: 'https://shop.example/thanks',
  cancel_url: 'https://shop.example/cart',
});

/** A NUL in product_id: made checkout answer 5xx (issue 12, item 4). */
const POISON = 'prod_\u0000poison';

/**
 * Issue 12, item 4: requests that make a service fail, sent with one organization's key (or
 * with a Publishable Key anyone can copy), must not open the breakers for the others.
 */
describe('a hostile tenant and the breakers', () => {
  /**
   * A stand-in checkout that fails (503, as checkout answered when the catalog choked on the
   * input) for the poisoned product_id, and creates sessions otherwise: whether or not the real
   * services still fail on some input, the gateway's breakers must hold.
   */
  async function stubCheckout(port = 0) {
    const hits: string[] = [];
    const app = express();
    app.post('/v1/checkout/sessions', express.json(), (req, res) => {
      const productId = String((req.body as { product_id?: unknown }).product_id);
      hits.push(productId);
      if (productId.includes('\u0000')) return void res.status(503).json({ error: { code: 'service_unavailable' } });
      res.status(201).json({ object: 'checkout_session', id: `cs_${hits.length}`, product_id: productId });
    });
    const server = app.listen(port, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return {
      hits,
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
  let checkout: Awaited<ReturnType<typeof stubCheckout>>;
  let client: ReturnType<typeof clientOf>;
  let hostile: CreatedOrganization;
  let victim: CreatedOrganization;

  beforeAll(async () => {
    platform = await startPlatform();
    checkout = await stubCheckout();
    gateway = await startGateway(platform.infrastructure, {
      CATALOG_SERVICE_URL: platform.catalog.service.url,
      CHECKOUT_SERVICE_URL: `http://127.0.0.1:${checkout.port}`,
      // Clients' addresses from X-Forwarded-For, as behind a load balancer on loopback.
      TRUST_PROXY: 'loopback',
      RATE_LIMIT_PER_MINUTE_OVERRIDE: '10000',
    });
    client = clientOf(gateway.service.url);
    hostile = await client.createOrganization('Hostile');
    victim = await client.createOrganization('Victim');
  });
  afterAll(async () => {
    await gateway.stop();
    await checkout.close();
    await platform.stop();
  });

  const create = (key: string, productId: string, from = '198.51.100.10') =>
    post(
      gateway.service.url,
      '/v1/checkout/sessions',
      { authorization: `Bearer ${key}`, 'x-forwarded-for': from },
      session(productId),
    );

  it("does not let one organization's failing requests open the breaker for another: 0 of 40 get 503", async () => {
    const hostileKey = hostile.api_keys.sandbox.publishable_key;
    const victimStatuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      expect((await create(hostileKey, POISON, '203.0.113.66')).status).toBe(503);
      victimStatuses.push((await create(victim.api_keys.sandbox.publishable_key, `prod_${i}`)).status);
    }
    expect(victimStatuses.filter((status) => status === 503)).toHaveLength(0);
    expect(victimStatuses).toEqual(Array(40).fill(201));
    // The hostile caller's breaker opened: most of its requests never reached checkout (5, then
    // a trial a second).
    expect(checkout.hits.filter((id) => id === POISON).length).toBeLessThan(20);
  });

  it("does not let someone with another organization's Publishable Key open that organization's breaker", async () => {
    // Publishable Keys are public: copied from the victim's storefront and sent from elsewhere.
    const copied = victim.api_keys.sandbox.publishable_key;
    const storefront: number[] = [];
    for (let i = 0; i < 40; i++) {
      expect((await create(copied, POISON, '203.0.113.77')).status).toBe(503);
      storefront.push((await create(copied, `prod_${i}`, '198.51.100.20')).status);
      // The merchant's own server, with the Secret Key.
      storefront.push((await create(victim.api_keys.sandbox.secret_key, `prod_${i}`)).status);
    }
    expect(storefront).toEqual(Array(80).fill(201));
  });

  it('still opens for everyone, with 503 at once, when checkout is down', async () => {
    const { port } = checkout;
    await checkout.close();
    const started = Date.now();
    // The first may find a pooled connection reset (not counted: a request can cause that);
    // five refused connections in a row then open the breaker of the whole upstream.
    for (let i = 0; i < 6; i++) {
      const down = await create(victim.api_keys.sandbox.secret_key, 'prod_down');
      expect(down.status).toBe(503);
      expect(down.body).toEqual({
        error: { code: 'service_unavailable', message: expect.stringContaining('checkout') },
      });
    }
    expect(Date.now() - started).toBeLessThan(2000);
    // Back on the same port, but the breaker of the whole upstream is open: another tenant is
    // answered 503 without checkout being called.
    checkout = await stubCheckout(port);
    const newcomer = await client.createOrganization('Newcomer');
    const refused = await create(newcomer.api_keys.sandbox.secret_key, 'prod_new', '198.51.100.30');
    expect(refused.status).toBe(503);
    expect(checkout.hits).toEqual([]);
    await eventually(
      async () => expect((await create(newcomer.api_keys.sandbox.secret_key, 'prod_new')).status).toBe(201),
      10000,
      200,
    );
  });
});

/** The same through the real services: the probe of issue 12 (a NUL in product_id). */
describe('a hostile tenant and the breakers, through the real checkout and catalog', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  beforeAll(async () => {
    platform = await startPlatform({ checkout: true });
    client = clientOf(platform.gatewayUrl);
  });
  afterAll(() => platform.stop());

  it("keeps another organization's session creations going: 0 of 40 get 503", async () => {
    const hostile = await client.createOrganization('Hostile');
    const victim = await client.createOrganization('Victim');
    const product = await client.createProduct(victim.id, plan({ slug: 'pro' }));
    expect(product.status).toBe(201);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const attack = await post(
        platform.gatewayUrl,
        '/v1/checkout/sessions',
        { authorization: `Bearer ${hostile.api_keys.sandbox.publishable_key}` },
        session(POISON),
      );
      expect(attack.status).not.toBe(201);
      const created = await post(
        platform.gatewayUrl,
        '/v1/checkout/sessions',
        { authorization: `Bearer ${victim.api_keys.sandbox.publishable_key}` },
        session(product.body.id),
      );
      statuses.push(created.status);
    }
    expect(statuses.filter((status) => status === 503)).toHaveLength(0);
    expect(statuses).toEqual(Array(40).fill(201));
  });
});
