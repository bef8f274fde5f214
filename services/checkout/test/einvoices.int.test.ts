import { randomUUID } from 'node:crypto';
import { CHECKOUT_TOPIC, type DomainEventEnvelope, type Einvoice } from '@billing/contracts';
import { catalogService } from '@billing/catalog';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { eventually, uniqueName } from '@billing/testing';
import { BILLING_TOPIC, checkoutService } from '../src';
import { EINVOICE_OFFER_CACHE_MS } from '../src/sessions/einvoice-enabled';
import { admin, call, caller, ebook, newOrg, signedFetch, urls } from './helpers';

jest.setTimeout(120_000);

let infrastructure: Infrastructure;
let catalog: ServiceUnderTest;
let promotions: ServiceUnderTest;
let checkout: ServiceUnderTest;
const published: DomainEventEnvelope[] = [];
let stopListening: () => Promise<void>;
const CHECKOUT_URL = 'https://pay.example/checkout';
const PAYMENT_LINK_URL = 'https://pay.example/pay';

/** Checkout's settings in this file: beside catalog and promotions, its sweeps out of the way. */
const checkoutConfig = () => ({
  CATALOG_SERVICE_URL: catalog.service.url,
  PROMOTIONS_SERVICE_URL: promotions.service.url,
  CHECKOUT_URL,
  PAYMENT_LINK_URL,
  CHECKOUT_SWEEP_INTERVAL_MS: '3600000',
});

beforeAll(async () => {
  infrastructure = await testInfrastructure('checkout-einvoices-test');
  catalog = await startServiceForTest(catalogService, { infrastructure });
  promotions = await startServiceForTest(promotionsService, { infrastructure });
  checkout = await startServiceForTest(checkoutService, { infrastructure, config: checkoutConfig() });
  const listener = await infrastructure.bus.subscribe({
    groupId: uniqueName('checkout_topic_reader'),
    topics: [CHECKOUT_TOPIC],
    handler: async (message) => void published.push(message.value),
  });
  stopListening = () => listener.stop();
});
afterAll(async () => {
  await stopListening?.();
  await checkout?.stop();
  await promotions?.stop();
  await catalog?.stop();
  await infrastructure?.close();
});

const url = () => checkout.service.url;
const db = () => checkout.service.context.store.database;
const schema = () => checkout.service.context.store.tables.schema;
const streamTypes = async (id: string) =>
  (await checkout.service.context.store.readStream(`checkout_session-${id}`)).map((e) => e.type);

/** What billing publishes on `billing.events`, on the stream of `streamId`. */
function fromBilling(org: string, type: string, data: Record<string, unknown>, streamId: string = randomUUID()) {
  const event: DomainEventEnvelope = {
    id: randomUUID(),
    type,
    schema_version: 1,
    stream: streamId,
    stream_version: 1,
    global_position: 1,
    occurred_at: new Date().toISOString(),
    organization: org,
    environment: 'SANDBOX',
    data,
  };
  return infrastructure.bus.publish(BILLING_TOPIC, [{ key: streamId, value: event }]);
}

/** The organization issues e-invoices in the sandbox, once checkout's replica has it. */
async function issuesEinvoices(org: string) {
  await fromBilling(org, 'EinvoiceSettingsConfigured', {
    organization: org,
    environment: 'SANDBOX',
    sealed_credentials: null,
    object: {
      object: 'einvoice_settings',
      organization_id: org,
      environment: 'sandbox',
      provider: 'ecpay',
      enabled: true,
      merchant_id: '2000132',
      seller_tax_id: '04595257',
      tax_type: 'TAXED',
      donation_offered: true,
      endpoint_url: null,
      credentials_set: true,
      updated_at: new Date().toISOString(),
    },
  });
  await eventually(async () => {
    const { rows } = await db().query(
      `SELECT donation_offered FROM ${schema()}.einvoice_organizations WHERE organization = $1`,
      [org],
    );
    expect(rows).toEqual([{ donation_offered: true }]);
  });
}

/** An e-invoice billing issued (or voided) for an order, as `einvoice.issued` carries it. */
function einvoiceEvent(
  org: string,
  type: 'einvoice.issued' | 'einvoice.voided',
  orderId: string,
  fields: { number: string; updated_at: string; buyer: Einvoice },
) {
  const id = 'einv_test1';
  const object = {
    object: 'einvoice',
    id,
    invoice_id: null,
    order_id: orderId,
    customer_id: 'cus_1',
    status: type === 'einvoice.voided' ? 'voided' : 'issued',
    pending_action: null,
    provider: 'ecpay',
    merchant_order_number: 'E1',
    tax_type: 'TAXED',
    description: 'E-book',
    currency: 'TWD',
    total: 300,
    sales_amount: 286,
    tax_amount: 14,
    random_code: '7531',
    issued_at: fields.updated_at,
    deadline: fields.updated_at,
    deadline_warned_at: null,
    attempt_count: 1,
    next_attempt_at: null,
    last_error: null,
    voided_at: type === 'einvoice.voided' ? fields.updated_at : null,
    amount_allowanced: 0,
    allowances: [],
    created_at: '2026-01-01T00:00:00.000Z',
    livemode: false,
    ...fields,
  };
  return fromBilling(
    org,
    type,
    { einvoice_id: id, organization: org, environment: 'SANDBOX', object },
    `einvoice-${id}`,
  );
}

const postPage = (path: string, fields: Record<string, string>) =>
  signedFetch(`${url()}${path}`, {
    method: 'POST',
    headers: { 'accept-language': 'zh-TW' },
    body: new URLSearchParams(fields),
    redirect: 'manual',
  });
const card = { email: 'buyer@example.com', card_number: '4242424242424242', exp: '12/34', cvc: '123' };

describe('the e-invoice choice on the hosted page', () => {
  it('refuses a bad barcode at its field without charging, then records a company choice that checkout.completed carries', async () => {
    const org = newOrg();
    await issuesEinvoices(org);
    const product = await call(catalog.service.url, 'POST', '/admin/products', admin(org), ebook());
    const created = await call(url(), 'POST', '/v1/checkout/sessions', caller(org), {
      product_id: product.body.id,
      ...urls,
    });
    expect(created.body.einvoice_enabled).toBe(true);
    const id = created.body.id as string;
    const shown = await signedFetch(`${url()}/checkout/${id}`, { headers: { 'accept-language': 'zh-TW' } });
    expect(await shown.text()).toMatch(/value="MEMBER"\s+checked/);

    const refused = await postPage(`/checkout/${id}`, {
      ...card,
      einvoice_type: 'MOBILE_BARCODE',
      einvoice_barcode: '/abc12',
    });
    expect(refused.status).toBe(422);
    const page = await refused.text();
    expect(page).toContain('請檢查電子發票資料，未收取任何費用。');
    expect(page).toMatch(/id="field-einvoice_barcode" [^>]*value="\/ABC12" aria-invalid="true"/);
    expect(page).toMatch(/value="MOBILE_BARCODE"\s+checked/);
    expect(await streamTypes(id)).toEqual(['CheckoutSessionCreated']);
    expect((await call(url(), 'GET', `/v1/checkout/sessions/${id}`, caller(org))).body.status).toBe('OPEN');

    const company = { type: 'B2B', tax_id: '04595257', company_name: 'Leaf Co' };
    const paid = await postPage(`/checkout/${id}`, {
      ...card,
      einvoice_type: 'B2B',
      einvoice_tax_id: ' 04595257 ',
      einvoice_company_name: 'Leaf Co',
      // Typed under another choice first: only the chosen one's fields count.
      einvoice_barcode: '/abc12',
    });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`https://shop.example/thanks?session=${id}`);
    expect(await streamTypes(id)).toEqual([
      'CheckoutSessionCreated',
      'EinvoiceChosen',
      'PaymentAttemptStarted',
      'PaymentAttemptSucceeded',
      'CheckoutSessionCompleted',
    ]);
    const completed = await eventually(() => {
      const event = published.find((e) => e.type === 'checkout.completed' && e.data.session_id === id);
      expect(event).toBeDefined();
      return event!;
    });
    expect(completed.data.einvoice).toEqual(company);
  });
});

describe("the thank-you page's e-invoice (a replica of billing's einvoice.issued)", () => {
  it('says where it will go, then its number and random code once billing issued it, in order of updated_at', async () => {
    const org = newOrg();
    await issuesEinvoices(org);
    const product = await call(catalog.service.url, 'POST', '/admin/products', admin(org), ebook());
    const link = await call(url(), 'POST', '/v1/payment-links', caller(org), { productId: product.body.id });
    const visit = await signedFetch(`${url()}/pay/${link.body.url_id}?locale=en`, { redirect: 'manual' });
    const id = visit.headers.get('location')!.slice(`${CHECKOUT_URL}/`.length);
    const barcode = { type: 'MOBILE_BARCODE' as const, carrier: '/ABC1234' };
    const paid = await postPage(`/checkout/${id}`, {
      ...card,
      einvoice_type: 'MOBILE_BARCODE',
      einvoice_barcode: '/abc1234',
    });
    expect(paid.status).toBe(303);
    const thanksUrl = paid.headers.get('location')!.replace(PAYMENT_LINK_URL, `${url()}/pay`);
    const thanks = async () => (await signedFetch(thanksUrl)).text();
    expect(await thanks()).toMatch(/<dt>E-invoice<\/dt>\s*<dd>To be issued to mobile barcode \/ABC1234<\/dd>/);

    const { order_id } = (await call(url(), 'GET', `/v1/checkout/sessions/${id}`, caller(org))).body;
    await einvoiceEvent(org, 'einvoice.issued', order_id, {
      number: 'AB12345678',
      updated_at: '2026-03-01T00:00:00.000Z',
      buyer: barcode,
    });
    await eventually(async () => expect(await thanks()).toMatch(/<dt>E-invoice number<\/dt>\s*<dd>AB-12345678<\/dd>/));
    expect(await thanks()).toMatch(/<dt>Random code<\/dt>\s*<dd>7531<\/dd>/);

    await einvoiceEvent(org, 'einvoice.voided', order_id, {
      number: 'AB12345678',
      updated_at: '2026-03-02T00:00:00.000Z',
      buyer: barcode,
    });
    await eventually(async () => expect(await thanks()).toContain('AB-12345678 (voided)'));
    // An older change delivered late changes nothing: once the event after it on the same
    // stream is recorded, the page still shows the voided e-invoice.
    await einvoiceEvent(org, 'einvoice.issued', order_id, {
      number: 'ZZ99999999',
      updated_at: '2026-02-28T00:00:00.000Z',
      buyer: barcode,
    });
    await einvoiceEvent(org, 'einvoice.issued', 'ord_after', {
      number: 'CD12345678',
      updated_at: '2026-03-03T00:00:00.000Z',
      buyer: barcode,
    });
    await eventually(async () => {
      const { rows } = await db().query(`SELECT 1 FROM ${schema()}.order_einvoices WHERE order_id = 'ord_after'`);
      expect(rows).toHaveLength(1);
    });
    expect(await thanks()).toContain('AB-12345678 (voided)');
    // The already-paid hosted page shows the same receipt.
    const again = await (await signedFetch(`${url()}/checkout/${id}`)).text();
    expect(again).toContain('AB-12345678 (voided)');
  });
});

describe('whether a session offers e-invoices, on a clock that stands still', () => {
  it('is read again once its cache ages out on the process clock: an answer cached before the settings arrived does not stay', async () => {
    const frozen = await startServiceForTest(checkoutService, {
      infrastructure,
      config: checkoutConfig(),
      now: () => new Date('2026-03-01T00:00:00.000Z'),
    });
    try {
      const org = newOrg();
      const product = await call(catalog.service.url, 'POST', '/admin/products', admin(org), ebook());
      const open = () =>
        call(frozen.service.url, 'POST', '/v1/checkout/sessions', caller(org), {
          product_id: product.body.id,
          ...urls,
        });
      expect((await open()).body.einvoice_enabled).toBe(false);
      await issuesEinvoices(org);
      const replica = frozen.service.context.store;
      await eventually(async () => {
        const { rows } = await replica.database.query(
          `SELECT enabled FROM ${replica.tables.schema}.einvoice_organizations WHERE organization = $1`,
          [org],
        );
        expect(rows).toEqual([{ enabled: true }]);
      });
      await new Promise((resolve) => setTimeout(resolve, EINVOICE_OFFER_CACHE_MS + 500));
      expect((await open()).body.einvoice_enabled).toBe(true);
    } finally {
      await frozen.stop();
    }
  }, 60_000);
});
