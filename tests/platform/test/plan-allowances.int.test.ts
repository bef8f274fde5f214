import { lifecycleOrganization, startLifecyclePlatform } from '../src/lifecycle-helpers';
import { type Platform, plan } from '../src/platform';

jest.setTimeout(240000);

/**
 * A plan's monthly allowance on Kafka with a test clock (docs/credits.md, "Plan allowances"):
 * bought on the hosted page, renewed by the engine on the saved card when the clock passes the
 * period's end; reset each period, or rolled over.
 */
describe("a plan's credit allowance on a test clock", () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startLifecyclePlatform();
  });
  afterAll(() => platform?.stop());

  it('is granted on subscribing and on each renewal, expiring at the period end unless it rolls over', async () => {
    const { org, client, send, subscribeOnClock, advance } = await lifecycleOrganization(platform);
    await client.createProduct(org.id, plan({ slug: 'reset', price: 199, credits: { amount: 100 } }));
    await client.createProduct(org.id, plan({ slug: 'rolling', price: 199, credits: { amount: 100, rollover: true } }));
    // The hosted page tells the buyer what the plan grants.
    const opened = await send('POST', '/checkout/sessions', {
      product_slug: 'rolling',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    const page = await fetch(`${platform.gatewayUrl}/checkout/${opened.body.id}`, {
      headers: { 'accept-language': 'en' },
    });
    expect(await page.text()).toContain('Includes 100 credits each paid period; unused credits carry over');
    const reset = await subscribeOnClock('reset@example.com', '4242424242424242', { product_slug: 'reset' });
    const rolling = await subscribeOnClock('rolling@example.com', '4242424242424242', { product_slug: 'rolling' });
    const creditsOf = async (customerId: string) => (await send('GET', `/customers/${customerId}/credits`)).body;
    const ledgerOf = async (customerId: string) =>
      (await send('GET', `/customers/${customerId}/credits/ledger?limit=100`)).body.data
        .map((e: { type: string; amount: number; created_at: string }) => [e.type, e.amount, e.created_at])
        .reverse();

    const resetCustomer = reset.subscription.customer_id;
    expect(reset.subscription.credit_allowance).toEqual({ amount: 100, expires_after_days: null, rollover: false });
    expect(await creditsOf(resetCustomer)).toMatchObject({
      balance: 100,
      grants: [
        { amount: 100, source: 'allowance', source_id: reset.subscription.id, expires_at: '2026-02-28T10:00:00.000Z' },
      ],
    });
    expect((await creditsOf(rolling.subscription.customer_id)).balance).toBe(100);

    await advance(reset.clock, '2026-03-02T00:00:00Z');
    await advance(rolling.clock, '2026-03-02T00:00:00Z');
    const renewed = (await send('GET', `/subscriptions/${reset.subscription.id}`)).body;
    expect(renewed).toMatchObject({ status: 'ACTIVE', current_period_start: '2026-02-28T10:00:00.000Z' });

    expect(await creditsOf(resetCustomer)).toMatchObject({
      balance: 100,
      grants: [{ amount: 100, remaining: 100, expires_at: '2026-03-31T10:00:00.000Z' }],
    });
    expect(await ledgerOf(resetCustomer)).toEqual([
      ['grant', 100, '2026-01-31T10:00:00.000Z'],
      ['expiry', -100, '2026-02-28T10:00:00.000Z'],
      ['grant', 100, '2026-02-28T10:00:00.000Z'],
    ]);
    expect(await creditsOf(rolling.subscription.customer_id)).toMatchObject({
      balance: 200,
      grants: [{ expires_at: null }, { expires_at: null }],
    });
  });

  it("ends what is left of the old period's allowance when an upgrade starts a new period", async () => {
    const { org, client, send, subscribeOnClock, advance } = await lifecycleOrganization(platform);
    await client.createProduct(org.id, plan({ slug: 'small', price: 199, credits: { amount: 100 } }));
    const big = await client.createProduct(org.id, plan({ slug: 'big', price: 499, credits: { amount: 300 } }));
    const { subscription, clock } = await subscribeOnClock('upgrade@example.com', '4242424242424242', {
      product_slug: 'small',
    });
    await advance(clock, '2026-02-10T10:00:00Z');
    const customer = subscription.customer_id;
    expect(
      (await send('POST', `/customers/${customer}/credits/spend`, { amount: 40, idempotency_key: 'before-switch' }))
        .status,
    ).toBe(200);

    const switched = await send('POST', `/subscriptions/${subscription.id}/switch`, {
      target_product_id: big.body.id,
    });
    expect(switched.status).toBe(200);
    expect(switched.body.subscription.current_period_start).toBe('2026-02-10T10:00:00.000Z');
    const credits = (await send('GET', `/customers/${customer}/credits`)).body;
    // The 60 left of the small plan's period end with it; the big plan's 300 last its new period.
    expect(credits).toMatchObject({ balance: 300, grants: [{ amount: 300, remaining: 300 }] });
    const ledger = (await send('GET', `/customers/${customer}/credits/ledger?limit=10`)).body.data;
    expect(ledger.map((e: { type: string; amount: number }) => [e.type, e.amount]).reverse()).toEqual([
      ['grant', 100],
      ['spend', -40],
      ['expiry', -60],
      ['grant', 300],
    ]);
  });

  it("grants the new plan's allowance, and ends the old one, when the upgrade comes at the very instant of subscribing", async () => {
    const { org, client, send, subscribeOnClock } = await lifecycleOrganization(platform);
    await client.createProduct(org.id, plan({ slug: 'starter', price: 199, credits: { amount: 100 } }));
    const growth = await client.createProduct(org.id, plan({ slug: 'growth', price: 499, credits: { amount: 300 } }));
    const scale = await client.createProduct(org.id, plan({ slug: 'scale', price: 999, credits: { amount: 700 } }));
    // The clock stays frozen at the start: each switch restarts the period at the same instant.
    const { subscription } = await subscribeOnClock('at-once@example.com', '4242424242424242', {
      product_slug: 'starter',
    });
    const customer = subscription.customer_id;
    for (const target of [growth, scale]) {
      const switched = await send('POST', `/subscriptions/${subscription.id}/switch`, {
        target_product_id: target.body.id,
      });
      expect(switched.status).toBe(200);
      expect(switched.body.subscription.current_period_start).toBe(subscription.current_period_start);
    }
    const credits = (await send('GET', `/customers/${customer}/credits`)).body;
    expect(credits).toMatchObject({ balance: 700, grants: [{ amount: 700, remaining: 700 }] });
    const ledger = (await send('GET', `/customers/${customer}/credits/ledger?limit=10`)).body.data;
    expect(ledger.map((e: { type: string; amount: number }) => [e.type, e.amount]).reverse()).toEqual([
      ['grant', 100],
      ['expiry', -100],
      ['grant', 300],
      ['expiry', -300],
      ['grant', 700],
    ]);
  });
});
