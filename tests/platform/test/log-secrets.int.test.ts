import { createHash } from 'node:crypto';
import { createLogger } from '@billing/service';
import { eventually, testInternalSecret } from '@billing/testing';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

type Reply = { status: number; body: any };

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** Every string in a JSON value whose key or shape says it is a secret (client secrets, whsec_). */
function secretsIn(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string' && (/_secret_/.test(value) || value.startsWith('whsec_'))) found.push(value);
  else if (value && typeof value === 'object') for (const inner of Object.values(value)) secretsIn(inner, found);
  return found;
}

/**
 * Issue 12, part 7: the whole platform logs at debug into a buffer while checkouts, payments,
 * refusals and forced SQL errors (statements whose parameters hold a client secret, an API-key
 * hash, emails and names) run through it; no line may hold any of them.
 */
describe('a log scan after checkouts, payments and failures', () => {
  const lines: string[] = [];
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  const secrets = new Set<string>();

  const call = async (method: string, path: string, key: string, body?: unknown): Promise<Reply> => {
    const response = await fetch(`${platform.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed = text.startsWith('{') ? JSON.parse(text) : text;
    for (const secret of secretsIn(parsed)) secrets.add(secret);
    return { status: response.status, body: parsed };
  };
  const pay = (sessionId: string, card: string, name: string) =>
    fetch(`${platform.gatewayUrl}/checkout/${sessionId}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ card_number: card, exp: '12/34', cvc: '123', name }),
    });
  const sql = (statement: string) => platform.infrastructure.database.exec(statement);

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      logger: (name) => createLogger(name, { level: 'debug', destination: { write: (line) => lines.push(line) } }),
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Acme');
    for (const keys of [org.api_keys.sandbox, org.api_keys.production]) {
      secrets.add(keys.secret_key).add(keys.publishable_key);
    }
  });
  afterAll(() => platform?.stop());

  it('holds no secret, hash, card number, email or name in any line', async () => {
    const sk = org.api_keys.sandbox.secret_key;
    const pk = org.api_keys.sandbox.publishable_key;
    expect((await client.createProduct(org.id, plan({ slug: 'pro' }))).status).toBe(201);
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: 'https://hooks.example/billing',
      events: ['*'],
    });
    expect(endpoint.status).toBe(201);
    const read = await client.admin('GET', `/organizations/${org.id}/webhook_endpoints/${endpoint.body.id}`);
    for (const secret of secretsIn(read.body)) secrets.add(secret);

    // A declined card, then a paid checkout: a customer, a subscription, webhooks that cannot be sent.
    const checkout = {
      product_slug: 'pro',
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cancel',
      customer_email: 'ada.lovelace@example.com',
      external_customer_id: 'ada-lovelace',
    };
    const session = await call('POST', '/v1/checkout/sessions', pk, checkout);
    expect(session.status).toBe(201);
    expect((await pay(session.body.id, '4000000000000002', 'Ada Lovelace')).status).toBe(402);
    expect((await pay(session.body.id, '4242424242424242', 'Ada Lovelace')).status).toBe(200);
    const customer = await eventually(
      async () => {
        const listed = await call('GET', '/v1/customers', sk);
        expect(listed.body.data).toHaveLength(1);
        return listed.body.data[0];
      },
      30000,
      200,
    );
    expect(
      (await call('GET', `/v1/customers/external/${encodeURIComponent(checkout.external_customer_id)}`, sk)).status,
    ).toBe(200);
    expect((await call('GET', `/v1/customers/entitlements?email=ada.lovelace%40example.com`, sk)).status).toBe(200);

    // Refusals: a wrong key, a wrong admin token, a Publishable Key on a Secret route, bad input.
    expect((await call('GET', '/v1/products', `${sk}x`)).status).toBe(401);
    expect((await client.admin('GET', `/organizations/${org.id}`, undefined, 'adm_wrong_token')).status).toBe(401);
    expect((await call('GET', '/v1/customers', pk)).status).toBe(401);
    expect((await call('POST', '/v1/checkout/sessions', sk, { ...checkout, success_url: 'nope' })).status).toBe(422);

    // Forced SQL errors whose parameters hold a client secret, an email and a name (checkout's
    // append), a name (billing's append) and an API key's hash (the gateway's key lookup).
    const { events: checkoutEvents } = platform.checkout!.service.context.store.tables;
    const { events: billingEvents } = platform.billing!.service.context.store.tables;
    await sql(`ALTER TABLE ${checkoutEvents} ADD CONSTRAINT leak_probe CHECK (data::text NOT LIKE '%grace.hopper%')`);
    await sql(`ALTER TABLE ${billingEvents} ADD CONSTRAINT leak_probe CHECK (data::text NOT LIKE '%Grace Hopper%')`);
    const gatewaySchema = platform.gateway.service.context.store.tables.schema;
    try {
      const refused = await call('POST', '/v1/checkout/sessions', sk, {
        ...checkout,
        customer_email: 'grace.hopper@example.com',
        external_customer_id: undefined,
      });
      expect(refused.status).toBe(500);
      expect((await call('PATCH', `/v1/customers/${customer.id}`, sk, { name: 'Grace Hopper' })).status).toBe(500);
      // Only now: with the table away, the Secret Key above fails too once its cached lookup
      // (1 s) expires, which a slow machine reached before the PATCH.
      await sql(`ALTER TABLE ${gatewaySchema}.api_keys RENAME TO api_keys_away`);
      // Never used before, so not in the key cache: the lookup by its hash reaches the database.
      expect((await call('GET', '/v1/products', org.api_keys.production.secret_key)).status).toBe(500);
    } finally {
      await sql(`ALTER TABLE IF EXISTS ${gatewaySchema}.api_keys_away RENAME TO api_keys`);
      await sql(`ALTER TABLE ${checkoutEvents} DROP CONSTRAINT leak_probe`);
      await sql(`ALTER TABLE ${billingEvents} DROP CONSTRAINT leak_probe`);
    }

    const logged = lines.join('');
    // The failures were logged, with their SQLSTATE: the scan below is not vacuous.
    const errors = lines.map((line) => JSON.parse(line)).filter((line) => line.level === 'error' && line.err);
    expect(errors.filter((line) => line.err.code === '23514').length).toBeGreaterThanOrEqual(2);
    expect(errors.some((line) => line.name === 'gateway' && /api_keys/.test(line.err.message))).toBe(true);
    expect(logged).toContain('"msg":"request completed"');

    expect(secrets.size).toBeGreaterThanOrEqual(6); // four API keys, a client secret, a webhook secret
    const forbidden = [
      ...secrets,
      ...[...secrets].map(sha256),
      platform.gateway.service.context.config.ADMIN_TOKEN!,
      testInternalSecret(),
      '4242424242424242',
      '4000000000000002',
      'ada.lovelace@example.com',
      'ada.lovelace%40example.com',
      'grace.hopper@example.com',
      'Ada Lovelace',
      'Grace Hopper',
    ];
    const found = forbidden.filter((value) => logged.includes(value));
    expect(found).toEqual([]);
    // And by shape, for the values the test never saw (the refused session's client secret).
    const shapes = [
      /_secret_[A-Za-z0-9]{8}/,
      /\b[sp]k_(?:test|live)_/,
      /\bwhsec_/,
      /\badm_[A-Za-z0-9_-]{16}/,
      /\b[a-f0-9]{64}\b/,
      /[^\s"@/]+@[a-z0-9-]+\.[a-z]{2,}/i,
    ];
    expect(shapes.filter((shape) => shape.test(logged)).map(String)).toEqual([]);
  });
});
