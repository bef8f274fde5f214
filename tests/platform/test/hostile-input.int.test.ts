import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

/**
 * Hostile input through the gateway (issue 12, parts 1, 4 and 8): a NUL, a lone surrogate or a
 * control character in any path parameter, query value or body field answers 400 or 422 in the
 * error envelope, never a 5xx, on every service; the hosted page refuses them before charging;
 * and a body the gateway would read differently from the service is refused, so the
 * per-customer validation limit cannot be sidestepped.
 */
jest.setTimeout(120_000);

let platform: Platform;
let client: ReturnType<typeof clientOf>;
let org: CreatedOrganization;
let productId: string;
let clock = Date.parse('2026-11-21T08:00:00.000Z');
const advance = (ms: number) => (clock += ms);

beforeAll(async () => {
  platform = await startPlatform({ checkout: true, billing: true, notifications: true, now: () => new Date(clock) });
  client = clientOf(platform.gatewayUrl);
  org = await client.createOrganization('Hostile');
  const product = await client.createProduct(org.id, plan({ slug: 'pro' }));
  expect(product.status).toBe(201);
  productId = product.body.id;
  const coupon = await client.admin('POST', `/organizations/${org.id}/coupons`, {
    environment: 'SANDBOX',
    name: 'Launch',
    discount_type: 'PERCENTAGE',
    discount_amount: 20,
    duration: 'once',
  });
  expect(coupon.status).toBe(201);
  const code = await send('POST', '/v1/promotion-codes', sk(), { coupon_id: coupon.body.id, code: 'LAUNCH20' });
  expect(code.status).toBe(201);
});
afterAll(() => platform.stop());

const sk = () => org.api_keys.sandbox.secret_key;
const pk = () => org.api_keys.sandbox.publishable_key;
const urls = { success_url: 'https://shop.example/ok', cancel_url: 'https://shop.example/cancel' };

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** A request to the gateway; a string or Buffer body is sent as it is. */
async function send(
  method: string,
  path: string,
  key: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${platform.gatewayUrl}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body:
      body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
    redirect: 'manual',
  });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('application/json');
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: json && text ? JSON.parse(text) : undefined,
  };
}
const admin = (method: string, path: string, body?: unknown) =>
  send(method, `/admin/v1${path}`, null, body, { authorization: 'Bearer adm_test_token' });

type Case = [name: string, call: () => Promise<Answer>, status: number, code: string];

const NUL = 'a\u0000b';
const cases: Case[] = [
  // catalog
  ['catalog: NUL in a product id (path)', () => send('GET', '/v1/products/a%00b', sk()), 400, 'bad_request'],
  [
    'catalog: NUL in a slug (path, Publishable)',
    () => send('GET', '/v1/products/by-slug/a%00b', pk()),
    400,
    'bad_request',
  ],
  ['catalog: NUL in a query value', () => send('GET', '/v1/products?type=%00', pk()), 400, 'bad_request'],
  [
    'catalog: NUL in a product name (admin body)',
    () => admin('POST', `/organizations/${org.id}/products`, plan({ name: NUL, slug: 'nul' })),
    422,
    'validation_error',
  ],
  // checkout
  [
    'checkout: NUL in product_id (body, Publishable)',
    () => send('POST', '/v1/checkout/sessions', pk(), { product_id: NUL, ...urls }),
    422,
    'validation_error',
  ],
  [
    'checkout: a lone surrogate in customer_name (body)',
    () => send('POST', '/v1/checkout/sessions', pk(), { product_id: productId, customer_name: 'Mei\uD800', ...urls }),
    422,
    'validation_error',
  ],
  ['checkout: NUL in a session id (path)', () => send('GET', '/v1/checkout/sessions/cs_%00', sk()), 400, 'bad_request'],
  [
    'checkout: NUL in a cursor (query)',
    () => send('GET', '/v1/payment-links?starting_after=%00', sk()),
    400,
    'bad_request',
  ],
  [
    'checkout: a control character in a payment link productId (body)',
    () => send('POST', '/v1/payment-links', sk(), { productId: 'prod_\u0007' }),
    422,
    'validation_error',
  ],
  ['checkout: NUL in a hosted page session id (path)', () => send('GET', '/checkout/cs_%00', null), 400, 'bad_request'],
  // promotions
  [
    'promotions: NUL in external_id (validation body, Publishable)',
    () => send('POST', '/v1/promotion-codes/validate', pk(), { code: 'LAUNCH20', external_id: NUL }),
    422,
    'validation_error',
  ],
  ['promotions: NUL in a coupon id (path)', () => send('GET', '/v1/coupons/cpn_%00', sk()), 400, 'bad_request'],
  [
    'promotions: NUL in coupon_id (query)',
    () => send('GET', '/v1/promotion-codes?coupon_id=%00', sk()),
    400,
    'bad_request',
  ],
  [
    'promotions: a lone surrogate in a coupon name (body)',
    () =>
      send('POST', '/v1/coupons', sk(), {
        name: '\uDC00',
        discount_type: 'PERCENTAGE',
        discount_amount: 10,
        duration: 'once',
      }),
    422,
    'validation_error',
  ],
  // billing: customer endpoints answer in their own codes
  ['billing: NUL in a customer id (path)', () => send('GET', '/v1/customers/cus_%00', sk()), 400, 'invalid_request'],
  ['billing: NUL in an email (query)', () => send('GET', '/v1/customers?email=a%00b', sk()), 400, 'invalid_request'],
  [
    'billing: NUL in external_id (entitlements query)',
    () => send('GET', '/v1/customers/entitlements?external_id=%00', sk()),
    400,
    'invalid_request',
  ],
  [
    'billing: NUL in a customer name (body)',
    () => send('PATCH', '/v1/customers/cus_x', sk(), { name: NUL }),
    422,
    'validation_error',
  ],
  [
    'billing: NUL in a subscription id (path)',
    () => send('GET', '/v1/subscriptions/sub_%00', sk()),
    400,
    'bad_request',
  ],
  // notifications
  [
    'notifications: NUL in a webhook endpoint id (path)',
    () => send('GET', '/v1/webhooks/wh_%00', sk()),
    400,
    'bad_request',
  ],
  [
    'notifications: NUL in a webhook description (admin body)',
    () =>
      admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
        environment: 'SANDBOX',
        url: 'https://hooks.example/in',
        description: NUL,
        enabled_events: ['checkout.completed'],
      }),
    422,
    'validation_error',
  ],
  // the gateway's own admin API
  [
    'gateway: NUL in an organization name (admin body)',
    () => admin('POST', '/organizations', { name: NUL }),
    422,
    'validation_error',
  ],
  [
    'gateway: NUL in an organization id (admin path)',
    () => admin('GET', '/organizations/org_%00/webhook_endpoints'),
    400,
    'bad_request',
  ],
];

describe('no input makes a service answer 5xx', () => {
  it.each(cases)('%s', async (_name, call, status, code) => {
    const answer = await call();
    expect([answer.status, answer.body?.error?.code]).toEqual([status, code]);
    expect(answer.body.error.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'invalid_characters' })]),
    );
  });

  it('changed nothing for the refused requests', async () => {
    const products = await send('GET', '/v1/products', sk());
    expect(products.body.data.map((p: { id: string }) => p.id)).toEqual([productId]);
    const coupons = await send('GET', '/v1/coupons', sk());
    expect(coupons.body.data.map((c: { name: string }) => c.name)).toEqual(['Launch']);
  });
});

describe('the hosted page refuses hostile text before charging', () => {
  async function openSession(): Promise<string> {
    const created = await send('POST', '/v1/checkout/sessions', pk(), { product_id: productId, ...urls });
    expect(created.status).toBe(201);
    return created.body.id;
  }
  // The plan is a subscription: each buyer a new email, or billing finds the last one subscribed.
  let buyers = 0;
  const email = () => `buyer${++buyers}@example.com`;
  const form = (fields: Record<string, string>) =>
    new URLSearchParams({
      email: email(),
      card_number: '4242424242424242',
      exp: '12/34',
      cvc: '123',
      ...fields,
    }).toString();
  const postForm = (id: string, body: string) =>
    send('POST', `/checkout/${id}`, null, body, { 'content-type': 'application/x-www-form-urlencoded' });
  const status = async (id: string) => (await send('GET', `/v1/checkout/sessions/${id}`, sk())).body.status;

  it.each([
    ['a NUL', 'Mei\u0000Lin'],
    ['a control character', 'Mei\u001BLin'],
    ['a line break', 'Mei\r\nLin'],
  ])(
    'answers the page with 422 for %s in the form name; nothing is charged and the session stays payable',
    async (_what, name) => {
      const id = await openSession();
      const refused = await postForm(id, form({ name }));
      expect(refused.status).toBe(422);
      expect(refused.headers.get('content-type')).toMatch(/text\/html/);
      expect(refused.text).toContain('Please check: name');
      expect(await status(id)).toBe('OPEN');
      const paid = await postForm(id, form({ name: 'Mei Lin' }));
      expect([paid.status, paid.headers.get('location')]).toEqual([303, 'https://shop.example/ok']);
      expect(await status(id)).toBe('COMPLETE');
    },
  );

  it.each([
    ['a NUL', 'Mei\u0000Lin'],
    ['a lone surrogate', 'Mei\uD83D'],
  ])('answers the JSON pay call with 422 for %s in the name; the session stays payable', async (_what, name) => {
    const id = await openSession();
    const body = { email: email(), card_number: '4242424242424242', exp: '12/34', cvc: '123' };
    const refused = await send('POST', `/checkout/${id}/pay`, null, { ...body, name });
    expect([refused.status, refused.body.error.details[0]]).toEqual([
      422,
      expect.objectContaining({ path: 'name', code: 'invalid_characters' }),
    ]);
    expect(await status(id)).toBe('OPEN');
    expect((await send('POST', `/checkout/${id}/pay`, null, { ...body, name: 'Mei' })).body.status).toBe('complete');
  });
});

describe('one reading of a body: the per-customer validation limit holds', () => {
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
  const validate = (body: Buffer | string, headers: Record<string, string> = {}) =>
    send('POST', '/v1/promotion-codes/validate', pk(), body, headers);
  const json = (customer: string) => JSON.stringify({ code: 'LAUNCH20', external_id: customer });

  it('refuses a body behind a byte-order mark (400) instead of reading it differently from the service', async () => {
    const answers: number[] = [];
    for (let minute = 0; minute < 3; minute++) {
      advance(61_000); // a new per-IP window, the same hourly one
      for (let i = 0; i < 5; i++)
        answers.push((await validate(Buffer.concat([BOM, Buffer.from(json('bom_user'))]))).status);
    }
    expect(answers).toEqual(Array(15).fill(400));
    const answer = await validate(Buffer.concat([BOM, Buffer.from(json('bom_user'))]));
    expect(answer.body.error).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/byte-order mark/) });
  });

  it('keeps 10 an hour per customer: a BOM, a compressed body or another charset cannot add an 11th', async () => {
    const accepted: number[] = [];
    for (let minute = 0; minute < 2; minute++) {
      advance(61_000);
      for (let i = 0; i < 5; i++) accepted.push((await validate(json('busy_user'))).status);
    }
    expect(accepted).toEqual(Array(10).fill(200));
    advance(61_000);
    expect((await validate(Buffer.concat([BOM, Buffer.from(json('busy_user'))]))).status).toBe(400);
    const gzip = await validate(json('busy_user'), { 'content-encoding': 'gzip' });
    expect([gzip.status, gzip.body.error.code]).toEqual([415, 'unsupported_media_type']);
    const utf16 = await validate(Buffer.from(json('busy_user'), 'utf16le'), {
      'content-type': 'application/json; charset=utf-16le',
    });
    expect([utf16.status, utf16.body.error.code]).toEqual([415, 'unsupported_media_type']);
    const limited = await validate(json('busy_user'));
    expect([limited.status, limited.headers.get('x-ratelimit-limit')]).toEqual([429, '10']);
  });
});
