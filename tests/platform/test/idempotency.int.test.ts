import { randomBytes } from 'node:crypto';
import { type Infrastructure, testInfrastructure } from '@billing/runtime';
import { ebook, urls } from '@billing/testing';
import { ABANDONED_AFTER_MS, IDEMPOTENCY_WINDOW_MS, IdempotencyStore, idempotencyDdl } from '@billing/gateway';
import { type CreatedOrganization, type Platform, clientOf, startPlatform } from '../src/platform';

jest.setTimeout(60_000);

describe('Idempotency-Key through the gateway', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let other: CreatedOrganization;

  beforeAll(async () => {
    platform = await startPlatform({ checkout: true });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    other = await client.createOrganization();
  });
  afterAll(() => platform?.stop());

  const post = async (key: string, body: unknown, idempotencyKey?: string, path = '/v1/coupons') => {
    const response = await fetch(`${platform.gatewayUrl}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as any };
  };
  const coupon = (name: string) => ({ name, discount_type: 'PERCENTAGE', discount_amount: 10 });
  const couponCount = async (key: string) => (await client.get('/coupons', key)).body.data.length;

  it('generates a key when none is given and returns it', async () => {
    const created = await post(org.api_keys.sandbox.secret_key, coupon('Generated'));
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.headers.get('idempotency-replay')).toBeNull();
  });

  it('replays the first answer for the same key and body, creating nothing more', async () => {
    const secret = org.api_keys.sandbox.secret_key;
    const before = await couponCount(secret);
    const first = await post(secret, coupon('Once'), 'order-1001');
    const again = await post(secret, coupon('Once'), 'order-1001');
    expect(first.status).toBe(201);
    expect(again).toMatchObject({ status: 201, body: first.body });
    expect(again.headers.get('idempotency-replay')).toBe('true');
    expect(again.headers.get('idempotency-key')).toBe('order-1001');
    expect(again.headers.get('content-type')).toContain('application/json');
    expect(await couponCount(secret)).toBe(before + 1);
  });

  it('replays an answered error too, and refuses the key with another body', async () => {
    const secret = org.api_keys.sandbox.secret_key;
    const invalid = await post(secret, { name: '' }, 'bad-1');
    expect(invalid.status).toBe(422);
    expect((await post(secret, { name: '' }, 'bad-1')).headers.get('idempotency-replay')).toBe('true');
    const mismatch = await post(secret, coupon('Other'), 'bad-1');
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBe('idempotency_key_mismatch');
  });

  it('compares JSON bodies parsed: other whitespace and key order replay the first answer', async () => {
    const secret = org.api_keys.sandbox.secret_key;
    const before = await couponCount(secret);
    const first = await post(
      secret,
      '{"name":"Reordered","discount_type":"PERCENTAGE","discount_amount":10,"metadata":{"a":"1","b":"2"}}',
      'canonical-1',
    );
    const again = await post(
      secret,
      '{\n  "metadata": { "b": "2", "a": "1" },\n  "discount_amount": 10,\n  "discount_type": "PERCENTAGE",\n  "name": "Reordered"\n}',
      'canonical-1',
    );
    expect(first.status).toBe(201);
    expect(again).toMatchObject({ status: 201, body: first.body });
    expect(again.headers.get('idempotency-replay')).toBe('true');
    expect(await couponCount(secret)).toBe(before + 1);
    const otherValue = await post(secret, { ...coupon('Reordered'), metadata: { a: '1', b: '3' } }, 'canonical-1');
    expect(otherValue.body.error.code).toBe('idempotency_key_mismatch');
  });

  it('keeps keys apart per API key: the Secret and Publishable Keys of one environment both create', async () => {
    const product = await client.createProduct(org.id, ebook());
    const body = { product_id: product.body.id, ...urls };
    const path = '/v1/checkout/sessions';
    const bySecret = await post(org.api_keys.sandbox.secret_key, body, 'per-api-key-1', path);
    const byPublishable = await post(org.api_keys.sandbox.publishable_key, body, 'per-api-key-1', path);
    expect([bySecret.status, byPublishable.status]).toEqual([201, 201]);
    expect(byPublishable.body.id).not.toBe(bySecret.body.id);
    expect(byPublishable.headers.get('idempotency-replay')).toBeNull();
  });

  it('does not claim the key for a POST to a route that does not exist', async () => {
    const secret = org.api_keys.sandbox.secret_key;
    const unknown = await post(secret, coupon('Routed'), 'unrouted-1', '/v1/no-such-thing');
    expect(unknown.status).toBe(404);
    const created = await post(secret, coupon('Routed'), 'unrouted-1');
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotency-replay')).toBeNull();
  });

  it('keeps keys apart per organization and environment', async () => {
    const mine = await post(org.api_keys.sandbox.secret_key, coupon('Shared key'), 'shared-7');
    const theirs = await post(other.api_keys.sandbox.secret_key, coupon('Shared key'), 'shared-7');
    const live = await post(org.api_keys.production.secret_key, coupon('Shared key'), 'shared-7');
    expect([mine.status, theirs.status, live.status]).toEqual([201, 201, 201]);
    expect(new Set([mine.body.id, theirs.body.id, live.body.id]).size).toBe(3);
    expect(theirs.headers.get('idempotency-replay')).toBeNull();
  });

  it('forwards the body unchanged, malformed JSON included', async () => {
    const malformed = await post(org.api_keys.sandbox.secret_key, '{', 'malformed-1');
    expect(malformed.status).toBe(400);
  });

  it('refuses an empty or overlong key', async () => {
    const secret = org.api_keys.sandbox.secret_key;
    expect((await post(secret, coupon('x'), 'k'.repeat(256))).status).toBe(400);
    expect((await post(secret, coupon('x'), ' ')).status).toBe(400);
  });
});

describe('IdempotencyStore', () => {
  let infrastructure: Infrastructure;
  let store: IdempotencyStore;
  const schema = `idempotency_${randomBytes(4).toString('hex')}`;
  const t0 = new Date('2026-11-21T08:00:00.000Z');
  const at = (ms: number) => new Date(t0.getTime() + ms);
  const scope = (key: string, apiKeyId = 'key_1') => ({ apiKeyId, key });
  const answer = { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id":"cpn_1"}' };

  beforeAll(async () => {
    infrastructure = await testInfrastructure('idempotency-test');
    await infrastructure.database.exec(idempotencyDdl(schema));
    store = new IdempotencyStore(infrastructure.database, schema);
  });
  afterAll(async () => {
    await infrastructure.database.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await infrastructure.close();
  });

  it('gives one of two concurrent claims the key; the other is told it is in flight', async () => {
    const claims = await Promise.all([store.claim(scope('a'), 'h', t0), store.claim(scope('a'), 'h', t0)]);
    expect(claims.map((c) => c.outcome).sort()).toEqual(['in_flight', 'proceed']);
  });

  it('keeps the same key of two API keys apart', async () => {
    await store.claim(scope('d', 'key_1'), 'h', t0);
    await store.complete(scope('d', 'key_1'), answer);
    expect(await store.claim(scope('d', 'key_2'), 'other', t0)).toEqual({ outcome: 'proceed' });
  });

  it('comes up on a database of the previous version, whose table it leaves to older gateways', async () => {
    const previous = `${schema}_previous`;
    const database = infrastructure.database;
    await database.exec(`CREATE SCHEMA ${previous};
      CREATE TABLE ${previous}.idempotency_keys (organization text, environment text, key text, request_hash text,
        state text, started_at timestamptz, response_status integer, response_headers jsonb, response_body text,
        PRIMARY KEY (organization, environment, key));
      INSERT INTO ${previous}.idempotency_keys VALUES ('org_1', 'SANDBOX', 'a', 'h', 'done', now(), 201, '{}', '');`);
    await database.exec(idempotencyDdl(previous));
    await database.exec(idempotencyDdl(previous));
    const upgraded = new IdempotencyStore(database, previous);
    expect(await upgraded.claim(scope('a'), 'h', t0)).toEqual({ outcome: 'proceed' });
    const { rows } = await database.query(`SELECT key FROM ${previous}.idempotency_keys`);
    expect(rows).toEqual([{ key: 'a' }]);
    await database.exec(`DROP SCHEMA ${previous} CASCADE`);
  });

  it('replays a completed answer within 24 hours, and lets the key be used again after', async () => {
    await store.claim(scope('b'), 'h', t0);
    await store.complete(scope('b'), answer);
    expect(await store.claim(scope('b'), 'h', at(IDEMPOTENCY_WINDOW_MS - 1))).toEqual({
      outcome: 'replay',
      response: answer,
    });
    expect(await store.claim(scope('b'), 'other', at(IDEMPOTENCY_WINDOW_MS))).toEqual({ outcome: 'proceed' });
  });

  it('purges the keys older than 24 hours, and only those', async () => {
    await store.claim(scope('old'), 'h', at(-IDEMPOTENCY_WINDOW_MS - 1));
    await store.claim(scope('recent'), 'h', at(-IDEMPOTENCY_WINDOW_MS + 1));
    await store.purge(t0);
    expect(await store.claim(scope('old'), 'other', t0)).toEqual({ outcome: 'proceed' });
    expect(await store.claim(scope('recent'), 'other', t0)).toEqual({ outcome: 'mismatch' });
  });

  it('takes over a claim abandoned by a crash, and forgets a released one', async () => {
    await store.claim(scope('c'), 'h', t0);
    expect(await store.claim(scope('c'), 'h', at(ABANDONED_AFTER_MS - 1))).toEqual({ outcome: 'in_flight' });
    expect(await store.claim(scope('c'), 'h', at(ABANDONED_AFTER_MS))).toEqual({ outcome: 'proceed' });
    await store.release(scope('c'));
    expect(await store.claim(scope('c'), 'h2', at(ABANDONED_AFTER_MS + 1))).toEqual({ outcome: 'proceed' });
  });
});
