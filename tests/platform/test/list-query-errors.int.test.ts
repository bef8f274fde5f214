import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(60000);

/**
 * Every list endpoint through the gateway: invalid query parameters (limit out of range or not
 * a number, unknown enum values, unknown cursors) answer 400 with `details[]` naming the
 * parameter (docs/errors.md); valid queries answer 200 as before; bodies keep 422.
 */
describe('list query errors through the gateway', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  const ids = { coupon: '', promotionCode: '', paymentLink: '', webhookEndpoint: '' };
  const sk = () => org.api_keys.sandbox.secret_key;

  const post = (path: string, body: unknown) =>
    fetch(`${platform.gatewayUrl}/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sk()}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  /** A public list with the Sandbox Secret Key, or an admin list when the path starts with /organizations. */
  const list = (path: string) =>
    path.startsWith('/organizations') ? client.admin('GET', path) : client.get(path, sk());

  beforeAll(async () => {
    platform = await startPlatform({ checkout: true, billing: true, notifications: true });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    expect((await client.createProduct(org.id, plan({ slug: 'pro' }))).status).toBe(201);
    const coupon = await client.admin('POST', `/organizations/${org.id}/coupons`, {
      environment: 'SANDBOX',
      name: 'Launch',
      discount_type: 'PERCENTAGE',
      discount_amount: 20,
      duration: 'once',
    });
    ids.coupon = coupon.body.id;
    ids.promotionCode = (await post('/promotion-codes', { coupon_id: ids.coupon, code: 'LAUNCH20' })).body.data.id;
    ids.paymentLink = (await post('/payment-links', { productSlug: 'pro' })).body.id;
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: 'https://shop.example/hooks',
      events: ['invoice.paid'],
    });
    ids.webhookEndpoint = endpoint.body.id;
    expect(Object.values(ids).every(Boolean)).toBe(true);
  });
  afterAll(() => platform.stop());

  const redemptions = () => `/promotion-codes/${ids.promotionCode}/redemptions`;
  const endpoints = () => `/organizations/${org.id}/webhook_endpoints`;
  const endpointDeliveries = () => `${endpoints()}/${ids.webhookEndpoint}/deliveries`;
  const eventDeliveries = () => `/organizations/${org.id}/webhook_events/evt_unknown/deliveries`;

  interface BadQuery {
    list: string;
    base: () => string;
    query: string;
    parameter: string;
  }
  const bad = (list: string, base: () => string, query: string, parameter: string): BadQuery => ({
    list,
    base,
    query,
    parameter,
  });
  /** limit=0, limit=101 and limit=abc on one list. */
  const badLimits = (list: string, base: () => string) =>
    ['limit=0', 'limit=101', 'limit=abc'].map((query) => bad(list, base, query, 'limit'));

  const badQueries: BadQuery[] = [
    bad('products', () => '/products', 'type=nope', 'type'),
    bad('products', () => '/products', 'status=bogus', 'status'),
    ...badLimits('coupons', () => '/coupons'),
    bad('coupons', () => '/coupons', 'starting_after=cpn_nonexistent', 'starting_after'),
    ...badLimits('promotion codes', () => '/promotion-codes'),
    bad('promotion codes', () => '/promotion-codes', 'active=maybe', 'active'),
    bad('promotion codes', () => '/promotion-codes', 'offset=-1', 'offset'),
    ...badLimits('redemptions', redemptions),
    bad('redemptions', redemptions, 'status=bogus', 'status'),
    bad('redemptions', redemptions, 'offset=abc', 'offset'),
    bad('redemptions of an unknown code', () => '/promotion-codes/promo_none/redemptions', 'limit=0', 'limit'),
    ...badLimits('payment links', () => '/payment-links'),
    bad('payment links', () => '/payment-links', 'active=maybe', 'active'),
    bad('payment links', () => '/payment-links', 'starting_after=plink_nonexistent', 'starting_after'),
    bad('payment links', () => '/payment-links', 'starting_after=', 'starting_after'),
    ...badLimits('subscriptions', () => '/subscriptions'),
    bad('subscriptions', () => '/subscriptions', 'starting_after=sub_nonexistent', 'starting_after'),
    ...badLimits('invoices', () => '/invoices'),
    bad('invoices', () => '/invoices', 'starting_after=in_nonexistent', 'starting_after'),
    bad('invoices', () => '/invoices', 'status=PAID', 'status'),
    ...badLimits('refunds', () => '/refunds'),
    bad('refunds', () => '/refunds', 'starting_after=re_nonexistent', 'starting_after'),
    bad('admin webhook endpoints', endpoints, 'environment=bogus', 'environment'),
    ...badLimits('admin endpoint deliveries', endpointDeliveries),
    bad('admin endpoint deliveries', endpointDeliveries, 'status=bogus', 'status'),
    ...badLimits('admin event deliveries', eventDeliveries),
    bad('admin event deliveries', eventDeliveries, 'status=bogus', 'status'),
  ];

  it.each(badQueries)(
    '$list: ?$query answers 400 bad_request naming $parameter',
    async ({ base, query, parameter }) => {
      const res = await list(`${base()}?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        code: 'bad_request',
        message: `Invalid query parameter: ${parameter}`,
        details: [{ path: parameter, message: expect.any(String), code: expect.any(String) }],
      });
    },
  );

  const badCustomerQueries: Array<[string, string]> = [
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['status=bogus', 'status'],
    ['starting_after=cus_nonexistent', 'starting_after'],
  ];

  it.each(badCustomerQueries)('customers: %s answers 400 invalid_request naming %s', async (query, parameter) => {
    const res = await list(`/customers?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'invalid_request',
      message: `Invalid query parameter: ${parameter}`,
      details: [{ path: parameter, message: expect.any(String), code: expect.any(String) }],
    });
  });

  it('names an unknown cursor, also one of another environment', async () => {
    const unknown = await list('/coupons?starting_after=cpn_nonexistent');
    expect(unknown.body.error.details).toEqual([
      { path: 'starting_after', message: 'No such coupon: cpn_nonexistent', code: 'unknown_cursor' },
    ]);
    const production = await client.get(
      `/payment-links?starting_after=${ids.paymentLink}`,
      org.api_keys.production.secret_key,
    );
    expect(production.status).toBe(400);
    expect(production.body.error.details[0]).toMatchObject({ path: 'starting_after', code: 'unknown_cursor' });
  });

  const validQueries: Array<[string, () => string]> = [
    ['products', () => '/products?type=subscription&status=archived'],
    ['coupons', () => `/coupons?limit=100&starting_after=${ids.coupon}`],
    ['promotion codes', () => `/promotion-codes?coupon_id=${ids.coupon}&active=true&limit=1&offset=0`],
    ['redemptions', () => `${redemptions()}?status=VOIDED&customerId=cus_x&limit=100&offset=5`],
    ['payment links', () => `/payment-links?limit=1&active=false&starting_after=${ids.paymentLink}`],
    ['customers', () => '/customers?limit=100&status=BANNED&email=a@example.com'],
    ['subscriptions', () => '/subscriptions?limit=1&customer_id=cus_x'],
    ['invoices', () => '/invoices?limit=1&customer_id=cus_x&subscription_id=sub_x&status=open'],
    ['refunds', () => '/refunds?limit=1&order_id=ord_x&invoice_id=in_x'],
    ['webhooks', () => '/webhooks'],
    ['admin webhook endpoints', () => `${endpoints()}?environment=SANDBOX`],
    ['admin endpoint deliveries', () => `${endpointDeliveries()}?status=FAILED&limit=100`],
    ['admin event deliveries', () => `${eventDeliveries()}?limit=1`],
    ['unknown parameters are ignored', () => '/coupons?expand=everything'],
  ];

  it.each(validQueries)('%s: a valid query answers 200', async (_name, path) => {
    const res = await list(path());
    expect([res.status, res.body.error]).toEqual([200, undefined]);
  });

  it('keeps the page a valid query asks for', async () => {
    expect((await list(`/coupons?limit=1`)).body).toMatchObject({ data: [{ id: ids.coupon }], has_more: false });
    expect((await list(`/coupons?starting_after=${ids.coupon}`)).body.data).toEqual([]);
    expect((await list(`/payment-links?active=true`)).body.data.map((l: { id: string }) => l.id)).toEqual([
      ids.paymentLink,
    ]);
    expect((await list('/promotion-codes?limit=100&offset=1')).body.data).toMatchObject({ limit: 100, offset: 1 });
  });

  it('keeps 422 validation_error for bodies', async () => {
    const res = await post('/promotion-codes', { coupon_id: ids.coupon, code: 'x' });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      code: 'validation_error',
      details: [expect.objectContaining({ path: 'code' })],
    });
  });
});
