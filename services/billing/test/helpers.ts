import {
  CHECKOUT_TOPIC,
  type DomainEventEnvelope,
  type Environment,
  newId,
  type SoldProduct,
} from '@billing/contracts';
import type { ServiceUnderTest } from '@billing/runtime';
import { callService, envelope } from '@billing/testing';

export { type Reply, admin, caller, envelope, newOrg } from '@billing/testing';

/** `refund.updated` as checkout publishes it: a succeeded refund of `amount` TWD of an order, at `at`. */
export function refundSucceeded(org: string, orderId: string, amount: number, at: Date = new Date()) {
  const id = newId('refund');
  return envelope('refund.updated', `refund-${id}`, org, {
    refund_id: id,
    processor_refund_id: `pr_${id}`,
    succeeded_at: at.toISOString(),
    object: {
      object: 'refund',
      id,
      amount,
      currency: 'TWD',
      reason: null,
      status: 'succeeded',
      failure_reason: null,
      order_id: orderId,
      invoice_id: null,
      checkout_session_id: null,
      created_at: at.toISOString(),
      livemode: false,
    },
  });
}

/** Calls the service under test. */
export function client(running: () => ServiceUnderTest) {
  const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    callService(running().service.url, method, path, headers, body);
  return { call };
}

/**
 * Publishes what checkout would: paid sessions, each carrying the product as sold. `product`
 * only makes up a product (as the catalog would have it) for `paid` to sell.
 */
export function feeds(running: () => ServiceUnderTest) {
  const publish = (topic: string, event: DomainEventEnvelope) =>
    running().infrastructure.bus.publish(topic, [{ key: event.stream, value: event }]);
  const products = new Map<string, SoldProduct>();

  async function product(_org: string, fields: Record<string, unknown> = {}) {
    const id = newId('product');
    products.set(id, {
      id,
      name: 'Pro',
      slug: `pro-${id.slice(-6).toLowerCase()}`,
      type: 'SUBSCRIPTION',
      interval: 'month',
      interval_count: 1,
      price: 299,
      trial_days: null,
      ...fields,
    } as SoldProduct);
    return id;
  }

  async function paid(org: string, fields: Record<string, unknown> = {}, environment: Environment = 'SANDBOX') {
    const session = newId('checkoutSession');
    const order = newId('order');
    const event = envelope(
      'checkout.completed',
      `checkout_session-${session}`,
      org,
      {
        session_id: session,
        order_id: order,
        organization: org,
        environment,
        mode: 'SUBSCRIPTION',
        customer_id: null,
        customer_email: 'ada@example.com',
        customer_name: 'Ada',
        external_customer_id: null,
        product_id: 'prod_missing',
        amount_subtotal: 299,
        amount_total: 299,
        discount_amount: 0,
        currency: 'TWD',
        promotion_code_id: null,
        redemption_id: null,
        metadata: null,
        completed_at: new Date().toISOString(),
        product: products.get(String(fields.product_id)),
        ...fields,
      },
      1,
      environment,
    );
    await publish(CHECKOUT_TOPIC, event);
    return { session, order, event };
  }

  return { product, paid, publish };
}

/** The service's own events of a type, read from its store. */
export async function eventsOf(running: ServiceUnderTest, type: string, organization: string) {
  const { rows } = await running.infrastructure.database.query<{ data: any; stream_id: string; occurred_at: Date }>(
    `SELECT data, stream_id, occurred_at FROM ${running.service.context.store.tables.events}
     WHERE type = $1 AND organization = $2 ORDER BY global_position`,
    [type, organization],
  );
  return rows;
}
