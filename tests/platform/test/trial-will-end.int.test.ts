import { eventually } from '@billing/testing';
import { type Receiver, lifecycleOrganization, startLifecyclePlatform, startReceiver } from '../src/lifecycle-helpers';
import { type Platform, plan } from '../src/platform';

jest.setTimeout(240000);

/**
 * `subscription.trial_will_end` through the gateway on a test clock, to a webhook receiver:
 * 3 days before `trial_end` on the subscription's clock, once; at once for a trial shorter
 * than 3 days (as Stripe).
 */
/**
 * How long a webhook may take to reach the receiver: it crosses billing, Kafka and notifications,
 * and under CI's load (two cores, four suites each with its services) that outlasted 20 s, for
 * the renewal's and the warning's alike. As the other lifecycle tests give a delivery.
 */
const DELIVERY_MS = 60_000;

describe('subscription.trial_will_end', () => {
  let platform: Platform;
  let receiver: Receiver;
  let lifecycle: Awaited<ReturnType<typeof lifecycleOrganization>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startLifecyclePlatform();
    lifecycle = await lifecycleOrganization(platform, receiver);
    await lifecycle.client.createProduct(lifecycle.org.id, plan({ slug: 'trial', price: 500, trial_days: 14 }));
    await lifecycle.client.createProduct(lifecycle.org.id, plan({ slug: 'short', price: 500, trial_days: 2 }));
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  const toldFor = (subscriptionId: string) =>
    receiver.events.filter((e) => e.type === 'subscription.trial_will_end' && e.data.object.id === subscriptionId);

  it('is sent 3 days before trial_end on the subscription’s clock, once', async () => {
    const { clock, subscription } = await lifecycle.subscribeOnClock('trial@example.com', '4242424242424242', {
      product_slug: 'trial',
    });
    expect(subscription).toMatchObject({ status: 'TRIAL', trial_end: '2026-02-14T10:00:00.000Z' });

    await lifecycle.advance(clock, '2026-02-11T09:00:00Z');
    await eventually(
      () =>
        expect(
          receiver.events.some((e) => e.type === 'subscription.activated' && e.data.object.id === subscription.id),
        ).toBe(true),
      DELIVERY_MS,
    );
    expect(toldFor(subscription.id)).toEqual([]);

    await lifecycle.advance(clock, '2026-02-12T00:00:00Z');
    await eventually(() => expect(toldFor(subscription.id)).toHaveLength(1), DELIVERY_MS);
    expect(toldFor(subscription.id)[0]).toMatchObject({
      created_at: '2026-02-11T10:00:00.000Z',
      data: { object: { status: 'TRIAL', trial_end: '2026-02-14T10:00:00.000Z' } },
    });

    // The trial ends (charged), and later advances send nothing more.
    await lifecycle.advance(clock, '2026-02-20T00:00:00Z');
    expect((await lifecycle.send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE');
    await eventually(
      () =>
        expect(
          receiver.events.some((e) => e.type === 'subscription.renewed' && e.data.object.id === subscription.id),
        ).toBe(true),
      DELIVERY_MS,
    );
    expect(toldFor(subscription.id)).toHaveLength(1);
  });

  it('is sent at once for a trial shorter than 3 days', async () => {
    const { clock, subscription } = await lifecycle.subscribeOnClock('short@example.com', '4242424242424242', {
      product_slug: 'short',
    });
    expect(subscription).toMatchObject({ status: 'TRIAL', trial_end: '2026-02-02T10:00:00.000Z' });
    await eventually(() => expect(toldFor(subscription.id)).toHaveLength(1), DELIVERY_MS);
    expect(toldFor(subscription.id)[0]).toMatchObject({ created_at: '2026-01-31T10:00:00.000Z' });
    await lifecycle.advance(clock, '2026-02-03T00:00:00Z');
    expect((await lifecycle.send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE');
    expect(toldFor(subscription.id)).toHaveLength(1);
  });
});
