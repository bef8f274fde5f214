import { randomUUID } from 'node:crypto';
import { CHECKOUT_TOPIC, type DomainEventEnvelope } from '@billing/contracts';
import { catalogService } from '@billing/catalog';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { eventually, uniqueName } from '@billing/testing';
import { BILLING_TOPIC, DUPLICATE_SUBSCRIPTION_PAID, checkoutService } from '../src';
import { admin, call, caller, card, monthly, newOrg, urls } from './helpers';

jest.setTimeout(120_000);

let infrastructure: Infrastructure;
let catalog: ServiceUnderTest;
let promotions: ServiceUnderTest;
let checkout: ServiceUnderTest;
const published: DomainEventEnvelope[] = [];
let stopListening: () => Promise<void>;

beforeAll(async () => {
  infrastructure = await testInfrastructure('checkout-billing-test');
  catalog = await startServiceForTest(catalogService, { infrastructure });
  promotions = await startServiceForTest(promotionsService, { infrastructure });
  checkout = await startServiceForTest(checkoutService, {
    infrastructure,
    config: { CATALOG_SERVICE_URL: catalog.service.url, PROMOTIONS_SERVICE_URL: promotions.service.url },
  });
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
const read = (org: string, id: string) => call(url(), 'GET', `/v1/checkout/sessions/${id}`, caller(org));

/** A paid SUBSCRIPTION session, as a buyer leaves it. */
async function paidSession(org: string) {
  const product = await call(catalog.service.url, 'POST', '/admin/products', admin(org), monthly());
  const created = await call(url(), 'POST', '/v1/checkout/sessions', caller(org), {
    product_id: product.body.id,
    ...urls,
    metadata: { ref: 'newsletter', utm_source: 'mail' },
  });
  expect(created.status).toBe(201);
  const paid = await call(
    url(),
    'POST',
    `/checkout/${created.body.id}/pay`,
    {},
    card(undefined, { email: 'b@example.com' }),
  );
  expect(paid.status).toBe(200);
  return created.body.id as string;
}

/** What billing publishes on `billing.events`. */
const fromBilling = (org: string, type: string, data: Record<string, unknown>, environment = 'SANDBOX' as const) => {
  const stream = `subscription-${randomUUID()}`;
  const event: DomainEventEnvelope = {
    id: randomUUID(),
    type,
    schema_version: 1,
    stream,
    stream_version: 1,
    global_position: 1,
    occurred_at: new Date().toISOString(),
    organization: org,
    environment,
    data,
  };
  return infrastructure.bus.publish(BILLING_TOPIC, [{ key: stream, value: event }]);
};

const publishedOf = (type: string, sessionId: string) =>
  published.filter((e) => e.type === type && e.data.session_id === sessionId);

describe('checkout.events', () => {
  it('carries checkout.completed under its public type with the session as the API shows it', async () => {
    const org = newOrg();
    const id = await paidSession(org);
    await eventually(() => expect(publishedOf('checkout.completed', id)).toHaveLength(1));
    const [event] = publishedOf('checkout.completed', id);
    expect(event!.data.object).toEqual((await read(org, id)).body);
    expect(event!.data.object).toMatchObject({
      status: 'COMPLETE',
      metadata: { ref: 'newsletter', utm_source: 'mail' },
    });
  });
});

describe('events from billing', () => {
  it('fills the session subscription_id from subscription.activated, once, and only in its organization', async () => {
    const org = newOrg();
    const id = await paidSession(org);
    const activated = (subscriptionId: string, organization = org) =>
      fromBilling(organization, 'subscription.activated', {
        checkout_session_id: id,
        object: { id: subscriptionId, object: 'subscription', status: 'ACTIVE' },
      });
    await activated('sub_other_org', newOrg());
    await activated('sub_1');
    await activated('sub_1');
    await eventually(async () => expect((await read(org, id)).body.subscription_id).toBe('sub_1'));
    const stream = await checkout.service.context.store.readStream(`checkout_session-${id}`);
    expect(stream.filter((e) => e.type === 'SubscriptionLinked')).toHaveLength(1);
  });

  it('refunds a payment billing found duplicating a live subscription, and says so on checkout.events', async () => {
    const org = newOrg();
    const id = await paidSession(org);
    const { order_id } = (await read(org, id)).body;
    const duplicate = { checkout_session_id: id, order_id, existing_subscription_id: 'sub_live', status: 'ACTIVE' };
    await fromBilling(org, DUPLICATE_SUBSCRIPTION_PAID, duplicate);
    await fromBilling(org, DUPLICATE_SUBSCRIPTION_PAID, duplicate);
    await eventually(() => expect(publishedOf('order.refunded', id)).toHaveLength(1));
    expect(publishedOf('order.refunded', id)[0]!.data).toMatchObject({
      order_id,
      reason: 'duplicate_subscription',
      object: {
        object: 'order',
        id: order_id,
        status: 'REFUNDED',
        amount_refunded: 299,
        metadata: { ref: 'newsletter', utm_source: 'mail' },
      },
    });
    const stream = await checkout.service.context.store.readStream(`checkout_session-${id}`);
    expect(stream.filter((e) => e.type === 'OrderRefunded')).toHaveLength(1);
    expect((await read(org, id)).body.status).toBe('COMPLETE');
  });
});
