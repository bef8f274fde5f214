import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describeWithServer, eventually } from '@billing/testing';
import { type AnalyticsConsumer, EventContract, startAnalyticsConsumer } from '../src';
// The platform as the gateway's tests run it: real services on the real broker.
import {
  type CreatedOrganization,
  type Platform,
  clientOf,
  jsonApi,
  plan,
  startPlatform,
} from '../../../tests/platform/src/platform';

jest.setTimeout(240000);

const ASYNCAPI = join(__dirname, '..', '..', '..', 'docs', 'asyncapi.json');

/**
 * Buyers pay checkouts through the gateway; the consumer, which knows only docs/asyncapi.json,
 * reads checkout.events and billing.events from Kafka, validates every message and folds MRR.
 */
describeWithServer('KAFKA_BROKERS', 'the analytics example on the real broker', (brokers) => {
  const topicPrefix = `test-mrr-${randomBytes(4).toString('hex')}.`;
  let platform: Platform;
  let org: CreatedOrganization;
  let consumer: AnalyticsConsumer;
  const send = jsonApi(
    () => platform.gatewayUrl,
    () => org.api_keys.sandbox.secret_key,
  );
  const urls = { success_url: 'https://shop.example/ok', cancel_url: 'https://shop.example/no' };

  async function buy(slug: string, email: string): Promise<string> {
    const session = await send('POST', '/checkout/sessions', { product_slug: slug, ...urls, customer_email: email });
    expect(session.status).toBe(201);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    return eventually(async () => {
      const read = await send('GET', `/checkout/sessions/${session.body.id}`);
      expect(read.body.subscription_id).toEqual(expect.any(String));
      return read.body.subscription_id as string;
    });
  }

  beforeAll(async () => {
    process.env.KAFKA_TOPIC_PREFIX = topicPrefix;
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    for (const [slug, fields] of [
      ['monthly', { price: 299 }],
      ['yearly', { price: 1200, interval: 'year' }],
      ['trial', { price: 500, trial_days: 14 }],
    ] as const) {
      expect((await client.createProduct(org.id, plan({ slug, name: slug, ...fields }))).status).toBe(201);
    }
    consumer = await startAnalyticsConsumer({
      brokers: brokers.split(','),
      groupId: `analytics-mrr-${randomBytes(4).toString('hex')}`,
      contract: EventContract.fromFile(ASYNCAPI),
      topicPrefix,
      organization: org.id,
    });
  });
  afterAll(async () => {
    await consumer?.stop();
    await platform?.stop();
    delete process.env.KAFKA_TOPIC_PREFIX;
  });

  it('validates checkout.completed and the subscription events, and folds them into MRR and churn', async () => {
    const kept = await buy('monthly', 'kept@example.com');
    const churned = await buy('monthly', 'churned@example.com');
    await buy('yearly', 'yearly@example.com');
    await buy('trial', 'trial@example.com');
    const canceled = await send('POST', `/subscriptions/${churned}/cancel`, { at_period_end: false });
    expect(canceled.status).toBe(200);
    expect(kept).not.toBe(churned);

    const report = await eventually(async () => {
      expect(consumer.validated.get('checkout.completed')).toBe(4);
      expect(consumer.validated.get('subscription.canceled')).toBe(1);
      // billing.events is its own topic: its activations may trail the checkouts read above.
      expect(consumer.validated.get('subscription.activated')).toBe(4);
      const current = consumer.ledger.report();
      expect(current).toMatchObject({ mrr: 299 + 100, paying_subscriptions: 2 });
      return current;
    }, 60000);
    expect(consumer.rejected).toEqual([]);
    const month = report.months.at(-1)!;
    expect(month).toMatchObject({
      new_mrr: 299 * 2 + 100,
      churned_mrr: 299,
      churned_subscriptions: 1,
      checkouts_completed: 4,
      checkout_revenue: 299 * 2 + 1200 + 0,
    });
  });

  it('rejects a message that breaks its schema instead of folding it', () => {
    const contract = EventContract.fromFile(ASYNCAPI);
    const result = contract.validate(
      'checkout.events',
      { ce_type: 'checkout.completed' },
      {
        id: 'not-a-uuid',
        type: 'checkout.completed',
        data: { amount_total: 'a lot' },
      },
    );
    expect(result).toMatchObject({ known: true, valid: false });
    expect(result.errors.length).toBeGreaterThan(0);
  });
});
