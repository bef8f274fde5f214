import { HOSTED_PAGE_LIMITS } from '@billing/gateway';
import { clientOf, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(60_000);

/** The key-less hosted pages are limited per client IP; behind a proxy, `TRUST_PROXY` names it. */
describe('hosted page limits', () => {
  let platform: Platform;
  let linkUrl: string;
  let clock = Date.parse('2026-11-21T08:00:00.000Z');

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      now: () => new Date(clock),
      config: { TRUST_PROXY: 'loopback' },
    });
    const client = clientOf(platform.gatewayUrl);
    const org = await client.createOrganization();
    await client.createProduct(org.id, plan({ slug: 'pro' }));
    const link = await fetch(`${platform.gatewayUrl}/v1/payment-links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.api_keys.sandbox.secret_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ productSlug: 'pro' }),
    });
    linkUrl = ((await link.json()) as { url: string }).url;
  });
  afterAll(() => platform?.stop());

  const visit = (ip: string) =>
    fetch(linkUrl, { redirect: 'manual', headers: { 'x-forwarded-for': ip, accept: 'text/html,*/*;q=0.8' } });
  const pay = (ip: string) =>
    fetch(`${platform.gatewayUrl}/checkout/cs_unknown/pay`, {
      method: 'POST',
      headers: { 'x-forwarded-for': ip, 'content-type': 'application/json' },
      body: '{}',
    });

  it('lets an IP open a payment link 30 times a minute, then answers 429; another IP is not affected', async () => {
    const { limit } = HOSTED_PAGE_LIMITS.paymentLinkVisitsPerIp;
    for (let i = 0; i < limit; i++) expect((await visit('203.0.113.7')).status).toBe(303);
    const refused = await visit('203.0.113.7');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect(await refused.text()).toContain('<h1>Too many attempts</h1>');
    expect((await visit('203.0.113.8')).status).toBe(303);
    clock += 60_000;
    expect((await visit('203.0.113.7')).status).toBe(303);
  });

  it('counts 10 pay attempts a minute per IP, whatever their outcome', async () => {
    const { limit } = HOSTED_PAGE_LIMITS.payAttemptsPerIp;
    for (let i = 0; i < limit; i++) expect((await pay('198.51.100.1')).status).toBe(404);
    const refused = await pay('198.51.100.1');
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as any).error.code).toBe('rate_limit_exceeded');
    expect((await pay('198.51.100.2')).status).toBe(404);
  });

  it('leaves reading a checkout page alone', async () => {
    for (let i = 0; i < 40; i++) {
      const page = await fetch(`${platform.gatewayUrl}/checkout/cs_unknown`, {
        headers: { 'x-forwarded-for': '192.0.2.1' },
      });
      expect(page.status).toBe(404);
    }
  });
});
