import type { ServiceUnderTest } from '@billing/runtime';
import { clientOf, type Platform, startGateway, startPlatform } from '../src/platform';

type Client = ReturnType<typeof clientOf>;

/**
 * Two gateways on one database and schema, as two processes of one deployment would be (on
 * PostgreSQL the change travels by NOTIFY, as between processes; on PGlite by the in-process
 * signal). Each caches authentications; a key rolled on one must be refused by the other at
 * once, although the other has just cached it.
 */
describe('a rolled key on two gateways', () => {
  let platform: Platform;
  let second: ServiceUnderTest;
  beforeAll(async () => {
    platform = await startPlatform();
    second = await startGateway(
      platform.infrastructure,
      { CATALOG_SERVICE_URL: platform.catalog.service.url },
      platform.gateway.service.context.store.tables.schema.replaceAll('"', ''),
    );
  });
  afterAll(async () => {
    await second?.service.shutdown(); // not stop(): that would drop the schema the first still uses
    await platform?.stop();
  });

  it.each([
    ['rolled on the first, refused by the second', 0],
    ['rolled on the second, refused by the first', 1],
  ])('%s at once', async (_name, rolling) => {
    const gateways = [clientOf(platform.gatewayUrl), clientOf(second.service.url)];
    const [roller, other] = (rolling === 0 ? gateways : [...gateways].reverse()) as [Client, Client];
    const org = await roller.createOrganization();
    const old = org.api_keys.sandbox.secret_key;
    // Both gateways have authenticated (and cached) the key.
    for (const gateway of gateways) expect((await gateway.get('/products', old)).status).toBe(200);

    const rolled = await roller.admin('POST', `/organizations/${org.id}/api_keys/roll`, {
      environment: 'SANDBOX',
      type: 'secret',
    });
    expect(rolled.status).toBe(201);

    for (const gateway of [other, roller] as const) {
      const refused = await gateway.get('/products', old);
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('unauthorized');
      expect((await gateway.get('/products', rolled.body.key)).status).toBe(200);
    }
    // Keys nobody rolled stay cached and good.
    expect((await other.get('/products', org.api_keys.production.secret_key)).status).toBe(200);
  });
});
