import { catalogService } from '@billing/catalog';
import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually, freePort } from '@billing/testing';
import { clientOf, type Platform, startGateway, startPlatform } from './platform';

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
