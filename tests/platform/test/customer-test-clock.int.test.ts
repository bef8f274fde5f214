import { lifecycleOrganization, startLifecyclePlatform } from '../src/lifecycle-helpers';
import { type Platform, plan } from '../src/platform';

jest.setTimeout(240000);

/**
 * A customer made by a checkout session with `test_clock` lives on that clock (as Stripe's
 * customers on a test clock): the customer shows it, and its later subscriptions, even from
 * sessions that name no clock, start at the clock's time and renew when it advances.
 */
describe('a customer on a test clock', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startLifecyclePlatform();
  });
  afterAll(() => platform?.stop());

  it('is made on the session’s clock, and its later subscriptions use it', async () => {
    const { org, client, send, subscribeOnClock, subscribe, advance } = await lifecycleOrganization(platform);
    await client.createProduct(org.id, plan({ slug: 'extra', price: 100 }));
    const first = await subscribeOnClock('clocked@example.com', '4242424242424242');
    expect(first.subscription.test_clock).toBe(first.clock);

    const customer = await send('GET', `/customers/${first.subscription.customer_id}`);
    expect(customer.status).toBe(200);
    expect(customer.body).toMatchObject({
      email: 'clocked@example.com',
      test_clock: first.clock,
      created_at: '2026-01-31T10:00:00.000Z',
    });

    // The clock moves on; a later session without test_clock still starts on it.
    await advance(first.clock, '2026-02-10T00:00:00Z');
    const later = await subscribe('clocked@example.com', '4242424242424242', { product_slug: 'extra' });
    expect(later.subscription).toMatchObject({
      customer_id: first.subscription.customer_id,
      test_clock: first.clock,
      current_period_start: '2026-02-10T00:00:00.000Z',
      current_period_end: '2026-03-10T00:00:00.000Z',
    });

    await advance(first.clock, '2026-03-11T00:00:00Z');
    for (const [id, end] of [
      [first.subscription.id, '2026-03-31T10:00:00.000Z'],
      [later.subscription.id, '2026-04-10T00:00:00.000Z'],
    ]) {
      expect((await send('GET', `/subscriptions/${id}`)).body).toMatchObject({
        status: 'ACTIVE',
        current_period_end: end,
      });
    }

    // A customer made without a clock is on none.
    const plain = await subscribe('plain@example.com', '4242424242424242');
    expect(plain.subscription.test_clock).toBeNull();
    expect((await send('GET', `/customers/${plain.subscription.customer_id}`)).body.test_clock).toBeNull();
  });
});
