import { catalogService } from '@billing/catalog';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { checkoutService } from '../src';
import { admin, call, caller, ebook, monthly, newOrg, urls } from './helpers';

jest.setTimeout(120_000);

let infrastructure: Infrastructure;
let catalog: ServiceUnderTest;
let promotions: ServiceUnderTest;
let checkout: ServiceUnderTest;
let clock = new Date();
const advance = (ms: number) => (clock = new Date(clock.getTime() + ms));

beforeAll(async () => {
  infrastructure = await testInfrastructure('checkout-promotion-codes-test');
  catalog = await startServiceForTest(catalogService, { infrastructure });
  promotions = await startServiceForTest(promotionsService, { infrastructure, now: () => clock });
  checkout = await startServiceForTest(checkoutService, {
    infrastructure,
    config: {
      CATALOG_SERVICE_URL: catalog.service.url,
      PROMOTIONS_SERVICE_URL: promotions.service.url,
      CHECKOUT_URL: 'https://pay.example/checkout',
      CHECKOUT_SWEEP_INTERVAL_MS: '3600000',
    },
    now: () => clock,
  });
});
afterAll(async () => {
  await checkout?.stop();
  await promotions?.stop();
  await catalog?.stop();
  await infrastructure?.close();
});

const url = () => checkout.service.url;
const create = (org: string, body: Record<string, unknown>, headers = caller(org)) =>
  call(url(), 'POST', '/v1/checkout/sessions', headers, body);
const read = (org: string, id: string) => call(url(), 'GET', `/v1/checkout/sessions/${id}`, caller(org));
const detailsOf = (res: { body: any }) => res.body.error.details.map((d: any) => `${d.path}: ${d.code}`);

async function product(org: string, fields: Record<string, unknown>) {
  const res = await call(catalog.service.url, 'POST', '/admin/products', admin(org), fields);
  expect(res.status).toBe(201);
  return res.body as { id: string; price: number };
}

async function sessionsOf(org: string) {
  const { store } = checkout.service.context;
  const { rows } = await store.database.query<{ count: string }>(
    `SELECT count(*) FROM ${store.tables.schema}.checkout_sessions WHERE organization = $1`,
    [org],
  );
  return Number(rows[0]!.count);
}

describe('allow_promotion_codes on POST /v1/checkout/sessions', () => {
  it('is false unless given; true is kept and read back, under its camelCase name too', async () => {
    const org = newOrg();
    const p = await product(org, ebook());
    const plain = await create(org, { product_id: p.id, ...urls });
    expect((await read(org, plain.body.id)).body.allow_promotion_codes).toBe(false);
    const allowed = await create(org, { product_id: p.id, ...urls, allow_promotion_codes: true });
    expect(allowed.status).toBe(201);
    expect((await read(org, allowed.body.id)).body).toMatchObject({ allow_promotion_codes: true, discount: null });
    const camel = await create(org, { product_id: p.id, ...urls, allowPromotionCodes: true });
    expect((await read(org, camel.body.id)).body.allow_promotion_codes).toBe(true);
  });

  it('refuses a value that is not a boolean, and promotion codes in SETUP mode, with 422 and creates nothing', async () => {
    const org = newOrg();
    const p = await product(org, ebook());
    for (const value of ['true', 1, null]) {
      const refused = await create(org, { product_id: p.id, ...urls, allow_promotion_codes: value });
      expect([refused.status, refused.body.error.code]).toEqual([422, 'validation_error']);
      expect(detailsOf(refused)).toEqual([expect.stringMatching(/^allow_promotion_codes: /)]);
    }
    const plan = await product(org, monthly());
    const setup = await create(org, { product_id: plan.id, ...urls, mode: 'SETUP', allow_promotion_codes: true });
    expect([setup.status, detailsOf(setup)]).toEqual([422, ['allow_promotion_codes: not_allowed']]);
    expect(await sessionsOf(org)).toBe(0);
  });
});
