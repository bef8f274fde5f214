import { clientOf, type CreatedOrganization, type Platform, startPlatform } from '../src/platform';

jest.setTimeout(60000);

const INTERNAL = [
  'https://169.254.169.254/latest/meta-data/',
  'https://metadata.google.internal/computeMetadata/v1/',
  'https://127.0.0.1/hooks',
  'https://localhost:8080/admin/v1/organizations',
  'http://127.0.0.1:4105/admin/webhook_endpoints',
  'https://10.0.0.1/hooks',
  'https://192.168.0.1/hooks',
  'https://[::1]/hooks',
  'https://[fd00:ec2::254]/',
  'https://0.0.0.0/hooks',
  'https://2852039166/',
  'https://0x7f.1/hooks',
];

/**
 * Issue 12, part 6, through the admin API: the gateway proxies webhook endpoints to
 * notifications, which refuses internal targets with 422 validation_error on `url`, in
 * Production always and in Sandbox unless WEBHOOK_ALLOW_PRIVATE_TARGETS=sandbox.
 */
describe('webhook endpoint targets through the admin API', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;

  beforeAll(async () => {
    platform = await startPlatform({ notifications: true });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
  });
  afterAll(() => platform?.stop());

  const create = (environment: string, url: string) =>
    client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, { environment, url, events: ['*'] });

  it.each(['PRODUCTION', 'SANDBOX'])('refuses internal targets in %s with 422 on url', async (environment) => {
    for (const url of INTERNAL) {
      const refused = await create(environment, url);
      expect({ url, status: refused.status, error: refused.body.error }).toEqual({
        url,
        status: 422,
        error: {
          code: 'validation_error',
          message: expect.any(String),
          details: [{ path: 'url', message: expect.any(String), code: expect.any(String) }],
        },
      });
    }
  });

  it('refuses changing an endpoint to an internal target, and keeps its URL', async () => {
    const created = await create('PRODUCTION', 'https://shop.example/hooks');
    expect(created.status).toBe(201);
    const path = `/organizations/${org.id}/webhook_endpoints/${created.body.id}`;
    const changed = await client.admin('PATCH', path, { url: 'https://169.254.169.254/latest/meta-data/' });
    expect(changed.status).toBe(422);
    expect(changed.body.error.details).toEqual([
      { path: 'url', message: expect.stringContaining('cloud metadata service'), code: 'internal_target' },
    ]);
    expect((await client.admin('GET', path)).body.url).toBe('https://shop.example/hooks');
  });
});
