import { eventually } from '@billing/testing';
import { type Receiver, lifecycleOrganization, startLifecyclePlatform, startReceiver } from '../src/lifecycle-helpers';
import { type Platform, plan } from '../src/platform';

jest.setTimeout(240000);

/**
 * What a merchant's webhook endpoint receives from plan switching (docs/plan-switching.md,
 * docs/webhooks.md): `subscription.updated` with `previous_attributes`, the proration invoice's
 * `invoice.paid`, and `subscription_schedule.created` / `.canceled` / `.completed`.
 */
describe('plan switching webhooks', () => {
  let platform: Platform;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startLifecyclePlatform();
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  it('sends the switch, the proration invoice and the schedule lifecycle', async () => {
    const { org, client, send, subscribeOnClock, advance } = await lifecycleOrganization(platform, receiver);
    const business = (await client.createProduct(org.id, plan({ slug: 'business', name: 'Business', price: 599 })))
      .body;
    const basic = (await client.createProduct(org.id, plan({ slug: 'basic', name: 'Basic', price: 199 }))).body;
    const { clock, subscription } = await subscribeOnClock('hooks@example.com', '4242424242424242');
    await advance(clock, '2026-02-05T10:00:00Z');

    const upgraded = await send('POST', `/subscriptions/${subscription.id}/switch`, { target_product_id: business.id });
    expect(upgraded.status).toBe(200);
    const ofSubscription = (type: string) =>
      receiver.events.filter(
        (e) =>
          e.type === type &&
          (e.data.object.id === subscription.id || e.data.object.subscription_id === subscription.id),
      );
    await eventually(() => {
      const updated = ofSubscription('subscription.updated').find((e) => e.data.object.price === 599);
      expect(updated).toBeDefined();
      expect((updated!.data as any).previous_attributes).toMatchObject({
        product: { id: subscription.product.id },
        price: 299,
        current_period_start: subscription.current_period_start,
      });
      expect(ofSubscription('invoice.paid').map((e) => e.data.object.id)).toContain(upgraded.body.invoice.id);
    });

    const first = await send('POST', `/subscriptions/${subscription.id}/switch`, { target_product_id: basic.id });
    expect(first.body.schedule.status).toBe('pending');
    expect((await send('DELETE', `/subscriptions/${subscription.id}/schedule`)).status).toBe(200);
    const second = await send('POST', `/subscriptions/${subscription.id}/switch`, { target_product_id: basic.id });
    await advance(clock, '2026-03-06T00:00:00Z');
    await eventually(() => {
      const schedules = ofSubscription('subscription_schedule.created')
        .concat(ofSubscription('subscription_schedule.canceled'), ofSubscription('subscription_schedule.completed'))
        .map((e) => [e.type, e.data.object.id, e.data.object.status]);
      expect(schedules).toEqual([
        ['subscription_schedule.created', first.body.schedule.id, 'pending'],
        ['subscription_schedule.created', second.body.schedule.id, 'pending'],
        ['subscription_schedule.canceled', first.body.schedule.id, 'canceled'],
        ['subscription_schedule.completed', second.body.schedule.id, 'completed'],
      ]);
      const downgraded = ofSubscription('subscription.updated').find((e) => e.data.object.price === 199);
      expect((downgraded!.data as any).previous_attributes).toMatchObject({ product: { id: business.id }, price: 599 });
      expect(ofSubscription('invoice.paid').map((e) => e.data.object.total)).toContain(199);
    }, 60000);
  });
});
