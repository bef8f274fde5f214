import { catalogService } from '@billing/catalog';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { checkoutService } from '../src';
import { dependenciesOf } from '../src/dependencies';
import { sandboxRefundsTable } from '../src/payments/ledger';
import type { PaymentProcessor, RefundRequest } from '../src/payments/processor';
import { STALE_REFUND_MS, settlePendingRefunds } from '../src/refunds/sweep';
import { admin, call, caller, card, ebook, newOrg, urls } from './helpers';

/**
 * Refunds when the processor does not answer (docs/decisions/0009-refunds.md): the amount
 * stays held, the sweep asks again under the same key and records the first refund, so the
 * money goes back once; a refusal frees the amount.
 */
jest.setTimeout(120_000);

let infrastructure: Infrastructure;
let catalog: ServiceUnderTest;
let promotions: ServiceUnderTest;
let checkout: ServiceUnderTest;
let clock = new Date();
const advance = (ms: number) => (clock = new Date(clock.getTime() + ms));

const asked: RefundRequest[] = [];
/** `lost`: the processor refunds but its answer never comes; `refused`: it says no. */
let next: 'lost' | 'refused' | null = null;

beforeAll(async () => {
  infrastructure = await testInfrastructure('checkout-refunds');
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
  const wrapped: PaymentProcessor = {
    name: sandbox.name,
    refusal: (environment) => sandbox.refusal(environment),
    lookup: (key) => sandbox.lookup(key),
    release: (key) => sandbox.release(key),
    charge: (request) => sandbox.charge(request),
    chargeSavedCard: (request) => sandbox.chargeSavedCard(request),
    refund: async (request) => {
      asked.push(request);
      const fault = next;
      next = null;
      if (fault === 'refused') return { status: 'failed', message: 'The charge cannot be refunded' };
      const result = await sandbox.refund(request);
      if (fault === 'lost') throw new Error('injected: the processor refunded, but its answer was lost');
      return result;
    },
  };
  deps.processor = wrapped;
});
afterAll(async () => {
  await checkout?.stop();
  await promotions?.stop();
  await catalog?.stop();
  await infrastructure?.close();
});
beforeEach(() => {
  asked.length = 0;
  next = null;
});

const url = () => checkout.service.url;
const refund = (org: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(url(), 'POST', '/v1/refunds', { ...caller(org), ...headers }, body);

/** A paid order of 300 TWD. */
async function paidOrder(org: string): Promise<string> {
  const p = await call(catalog.service.url, 'POST', '/admin/products', admin(org), ebook());
  const created = await call(url(), 'POST', '/v1/checkout/sessions', caller(org), { product_id: p.body.id, ...urls });
  const paid = await call(
    url(),
    'POST',
    `/checkout/${created.body.id}/pay`,
    {},
    card(undefined, { email: 'b@example.com' }),
  );
  expect(paid.status).toBe(200);
  return (await call(url(), 'GET', `/v1/checkout/sessions/${created.body.id}`, caller(org))).body.order_id;
}

async function processorRefunds(refundId: string) {
  const store = checkout.service.context.store;
  const { rows } = await store.database.query<{ amount: number }>(
    `SELECT amount FROM ${sandboxRefundsTable(store.tables.schema)} WHERE idempotency_key = $1`,
    [refundId],
  );
  return rows.map((r) => r.amount);
}

describe('refunds the processor does not answer', () => {
  it('hold their amount while pending, and the sweep records the first refund under the same key', async () => {
    const org = newOrg();
    const order = await paidOrder(org);
    next = 'lost';
    const first = await refund(org, { order_id: order, amount: 100 });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ amount: 100, status: 'pending' });
    expect(await processorRefunds(first.body.id)).toEqual([100]);

    // Held: only 200 are left while the processor's answer is unknown.
    expect((await refund(org, { order_id: order, amount: 201 })).body.error.details[0].code).toBe('amount_too_large');
    // Too young for the sweep: the request that holds it may still be asking.
    expect(await settlePendingRefunds(checkout.service.context)).toEqual([]);

    advance(STALE_REFUND_MS + 1000);
    expect(await settlePendingRefunds(checkout.service.context)).toEqual([first.body.id]);
    expect(asked.map((r) => r.idempotencyKey)).toEqual([first.body.id, first.body.id]);
    expect(await processorRefunds(first.body.id)).toEqual([100]);
    const read = await call(url(), 'GET', `/v1/refunds/${first.body.id}`, caller(org));
    expect(read.body).toMatchObject({ status: 'succeeded', amount: 100 });
    expect(await settlePendingRefunds(checkout.service.context)).toEqual([]);
  });

  it('finds the held refund again when the request is sent again with its Idempotency-Key', async () => {
    const org = newOrg();
    const order = await paidOrder(org);
    const key = { 'idempotency-key': `again-${org}` };
    next = 'lost';
    const first = await refund(org, { order_id: order, amount: 300 }, key);
    expect(first.body.status).toBe('pending');
    // The gateway forgets a claim answered 5xx; here the service is asked again directly.
    const again = await refund(org, { order_id: order, amount: 300 }, key);
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: first.body.id, status: 'succeeded', amount: 300 });
    expect(await processorRefunds(first.body.id)).toEqual([300]);
    const list = await call(url(), 'GET', `/v1/refunds?order_id=${order}`, caller(org));
    expect(list.body.data).toHaveLength(1);
  });

  it('frees the amount of a refund the processor refused', async () => {
    const org = newOrg();
    const order = await paidOrder(org);
    next = 'refused';
    const refused = await refund(org, { order_id: order });
    expect(refused.body).toMatchObject({
      amount: 300,
      status: 'failed',
      failure_reason: 'The charge cannot be refunded',
    });
    const whole = await refund(org, { order_id: order });
    expect(whole.body).toMatchObject({ amount: 300, status: 'succeeded' });
  });
});
