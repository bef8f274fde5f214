import { catalogService } from '@billing/catalog';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { checkoutService } from '../src';
import { dependenciesOf } from '../src/dependencies';
import { invoicePaymentAggregate } from '../src/refunds/invoice-payment';
import { admin, call, caller, card, ebook, newOrg, urls } from './helpers';

/**
 * The dashboard's refunds list (`GET /admin/refunds`, docs/dashboard-api.md): every refund
 * checkout decided, of orders and of invoices, newest first, by status and creation time, each
 * with the buyer and product of the order it refunds; confined to the organization and environment.
 */
jest.setTimeout(120_000);

let infrastructure: Infrastructure;
let catalog: ServiceUnderTest;
let promotions: ServiceUnderTest;
let checkout: ServiceUnderTest;
/** The service's clock: when each order is paid and each refund created. */
let clock = new Date('2026-03-01T02:00:00Z');
/** The processor refuses the next refund when set. */
let refuseNext = false;

beforeAll(async () => {
  infrastructure = await testInfrastructure('checkout-refund-reads');
  catalog = await startServiceForTest(catalogService, { infrastructure });
  promotions = await startServiceForTest(promotionsService, { infrastructure });
  checkout = await startServiceForTest(checkoutService, {
    infrastructure,
    config: {
      CATALOG_SERVICE_URL: catalog.service.url,
      PROMOTIONS_SERVICE_URL: promotions.service.url,
      CHECKOUT_SWEEP_INTERVAL_MS: '3600000',
    },
    now: () => clock,
  });
  const deps = dependenciesOf(checkout.service.context);
  const sandbox = deps.processor;
  deps.processor = {
    ...sandbox,
    refusal: (environment) => sandbox.refusal(environment),
    lookup: (key) => sandbox.lookup(key),
    release: (key) => sandbox.release(key),
    charge: (request) => sandbox.charge(request),
    chargeSavedCard: (request) => sandbox.chargeSavedCard(request),
    refund: async (request) => {
      if (!refuseNext) return sandbox.refund(request);
      refuseNext = false;
      return { status: 'failed', message: 'The charge cannot be refunded' };
    },
  };
});
afterAll(async () => {
  await checkout?.stop();
  await promotions?.stop();
  await catalog?.stop();
  await infrastructure?.close();
});

const url = () => checkout.service.url;
const at = (iso: string) => (clock = new Date(iso));
const list = (org: string, query: string) =>
  call(url(), 'GET', `/admin/refunds?environment=SANDBOX&${query}`, admin(org));
const ids = async (org: string, query: string) => {
  const reply = await list(org, query);
  expect({ query, status: reply.status }).toEqual({ query, status: 200 });
  return reply.body.data.map((r: { id: string }) => r.id) as string[];
};

/** An order of 300 TWD for `Tea mug`, paid by `email` now. */
async function paidOrder(org: string, email: string): Promise<string> {
  const product = await call(catalog.service.url, 'POST', '/admin/products', admin(org), ebook({ name: 'Tea mug' }));
  const created = await call(url(), 'POST', '/v1/checkout/sessions', caller(org), {
    product_id: product.body.id,
    ...urls,
  });
  const paid = await call(url(), 'POST', `/checkout/${created.body.id}/pay`, {}, card(undefined, { email }));
  expect(paid.status).toBe(200);
  return (await call(url(), 'GET', `/v1/checkout/sessions/${created.body.id}`, caller(org))).body.order_id;
}

async function refundOrder(org: string, order: string, amount: number): Promise<string> {
  const refund = await call(url(), 'POST', '/v1/refunds', caller(org), { order_id: order, amount });
  expect(refund.status).toBe(201);
  return refund.body.id;
}

/** A renewal invoice's refund, held while the processor has not answered: what checkout asks billing for comes given. */
async function pendingInvoiceRefund(org: string, invoiceId: string): Promise<string> {
  const refundId = `re_${invoiceId.slice(3)}`;
  await invoicePaymentAggregate.handle(
    checkout.service.context.store,
    invoiceId,
    {
      type: 'RefundInvoice',
      data: {
        refundId,
        amount: 120,
        reason: 'requested_by_customer',
        field: 'invoice_id',
        invoiceId,
        now: clock,
        invoice: { invoiceId, amountPaid: 299, chargeKey: `${invoiceId}:1`, environment: 'SANDBOX' },
      },
    },
    { organization: org, environment: 'SANDBOX', occurredAt: clock },
  );
  return refundId;
}

const taipei = (day: string) => encodeURIComponent(`${day}T00:00:00+08:00`);

let org: string;
let other: string;
let mug: string;
let second: string;
/** Oldest first: 100 of the mug (2 Mar), the second order refused (5 Mar), an invoice's held (10 Mar), the mug's rest (15 Mar). */
let partial: string, refused: string, held: string, rest: string;
let stranger: string;

beforeAll(async () => {
  org = newOrg();
  other = newOrg();
  at('2026-03-01T02:00:00Z');
  mug = await paidOrder(org, 'ada@example.com');
  second = await paidOrder(org, 'bob@example.com');
  const strangers = await paidOrder(other, 'ada@example.com');
  at('2026-03-02T02:00:00Z');
  partial = await refundOrder(org, mug, 100);
  stranger = await refundOrder(other, strangers, 300);
  at('2026-03-05T02:00:00Z');
  refuseNext = true;
  refused = await refundOrder(org, second, 300);
  at('2026-03-10T02:00:00Z');
  held = await pendingInvoiceRefund(org, 'in_0renewal0000000000001');
  at('2026-03-15T02:00:00Z');
  rest = await refundOrder(org, mug, 200);
});

describe('GET /admin/refunds', () => {
  it('lists every refund of orders and invoices newest first, with the buyer and product of its order', async () => {
    const all = await list(org, '');
    expect(all.body).toMatchObject({ object: 'list', has_more: false });
    expect(all.body.data.map((r: { id: string }) => r.id)).toEqual([rest, held, refused, partial]);
    expect(all.body.data[0]).toMatchObject({
      object: 'refund',
      amount: 200,
      status: 'succeeded',
      order_id: mug,
      invoice_id: null,
      customer_email: 'ada@example.com',
      product_name: 'Tea mug',
      created_at: '2026-03-15T02:00:00.000Z',
    });
    expect(all.body.data[1]).toMatchObject({
      amount: 120,
      status: 'pending',
      order_id: null,
      invoice_id: 'in_0renewal0000000000001',
      customer_id: null,
      customer_email: null,
      product_name: null,
    });
    expect(all.body.data[2]).toMatchObject({
      status: 'failed',
      failure_reason: 'The charge cannot be refunded',
      order_id: second,
      customer_email: 'bob@example.com',
    });
  });

  it('filters by status and creation range, and pages by the last refund seen with the filters kept', async () => {
    expect(await ids(org, 'status=succeeded')).toEqual([rest, partial]);
    expect(await ids(org, 'status=failed')).toEqual([refused]);
    expect(await ids(org, 'status=pending')).toEqual([held]);
    expect(await ids(org, `from=${taipei('2026-03-05')}&to=${taipei('2026-03-11')}`)).toEqual([held, refused]);
    expect(await ids(org, `to=${taipei('2026-03-05')}`)).toEqual([partial]);
    expect(await ids(org, `from=${taipei('2026-03-16')}`)).toEqual([]);
    expect(await ids(org, `status=succeeded&from=${taipei('2026-03-03')}`)).toEqual([rest]);
    const first = await list(org, 'limit=3');
    expect([first.body.data.map((r: { id: string }) => r.id), first.body.has_more]).toEqual([
      [rest, held, refused],
      true,
    ]);
    const next = await list(org, `limit=3&starting_after=${refused}`);
    expect([next.body.data.map((r: { id: string }) => r.id), next.body.has_more]).toEqual([[partial], false]);
    const succeeded = await list(org, `status=succeeded&limit=1&starting_after=${rest}`);
    expect([succeeded.body.data.map((r: { id: string }) => r.id), succeeded.body.has_more]).toEqual([[partial], false]);
  });

  it("never shows another organization's or environment's refunds", async () => {
    expect(await ids(other, '')).toEqual([stranger]);
    const production = await call(url(), 'GET', '/admin/refunds?environment=PRODUCTION', admin(org));
    expect(production.body.data).toEqual([]);
    const cursor = await list(org, `starting_after=${stranger}`);
    expect([cursor.status, cursor.body.error.details[0].path]).toEqual([400, 'starting_after']);
  });

  it('answers 400 in the error envelope naming the parameter for bad input, and changes nothing', async () => {
    const before = await list(org, '');
    for (const [path, parameter] of [
      ['/admin/refunds', 'environment'],
      ['/admin/refunds?environment=TEST', 'environment'],
      ['/admin/refunds?environment=SANDBOX&status=refunded', 'status'],
      ['/admin/refunds?environment=SANDBOX&from=2026-03-01', 'from'],
      ['/admin/refunds?environment=SANDBOX&to=later', 'to'],
      ['/admin/refunds?environment=SANDBOX&limit=0', 'limit'],
      ['/admin/refunds?environment=SANDBOX&starting_after=re_nope', 'starting_after'],
    ]) {
      const reply = await call(url(), 'GET', path!, admin(org));
      expect({
        path,
        status: reply.status,
        code: reply.body.error?.code,
        parameter: reply.body.error?.details?.[0]?.path,
      }).toEqual({ path, status: 400, code: 'bad_request', parameter });
    }
    expect((await list(org, '')).body).toEqual(before.body);
  });
});
