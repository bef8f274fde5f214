import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

/** Sandbox test clocks through the gateway: a checkout on a clock, and time moved by advancing it. */
describe('test clocks through the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;

  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );
  const session = (fields: Record<string, unknown>, key = sk) =>
    send(
      'POST',
      '/checkout/sessions',
      {
        product_slug: 'trial',
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/no',
        ...fields,
      },
      key,
    );

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    await client.createProduct(org.id, plan({ slug: 'trial', price: 299, trial_days: 14 }));
  });
  afterAll(() => platform.stop());

  it('puts a checkout’s subscription on the clock, and ends its trial when the clock passes trial_end', async () => {
    const clock = await send('POST', '/test_clocks', { frozen_time: '2026-01-31T10:00:00Z', name: 'trial run' });
    expect(clock.body).toMatchObject({
      object: 'test_clock',
      status: 'ready',
      frozen_time: '2026-01-31T10:00:00.000Z',
    });
    const created = await session({ test_clock: clock.body.id, customer_email: 'clocked@example.com' });
    expect(created.status).toBe(201);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${created.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    const subscription = await eventually(async () => {
      const read = await send('GET', `/checkout/sessions/${created.body.id}`);
      const found = await send('GET', `/subscriptions/${read.body.subscription_id}`);
      expect(found.status).toBe(200);
      return found.body;
    });
    expect(subscription).toMatchObject({
      status: 'TRIAL',
      test_clock: clock.body.id,
      created_at: '2026-01-31T10:00:00.000Z',
      trial_end: '2026-02-14T10:00:00.000Z',
    });

    const advancing = await send('POST', `/test_clocks/${clock.body.id}/advance`, {
      frozen_time: '2026-02-15T00:00:00Z',
    });
    expect(advancing.body.status).toBe('advancing');
    await eventually(async () =>
      expect((await send('GET', `/test_clocks/${clock.body.id}`)).body.status).toBe('ready'),
    );
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toMatchObject({
      status: 'ACTIVE',
      updated_at: '2026-02-14T10:00:00.000Z',
    });
  });

  it('refuses test clocks to Production and Publishable keys, and unknown clocks', async () => {
    expect(
      (await send('POST', '/test_clocks', { frozen_time: '2026-01-01T00:00:00Z' }, org.api_keys.production.secret_key))
        .status,
    ).toBe(400);
    expect(
      (
        await send(
          'POST',
          '/test_clocks',
          { frozen_time: '2026-01-01T00:00:00Z' },
          org.api_keys.sandbox.publishable_key,
        )
      ).status,
    ).toBe(401);
    expect((await session({ test_clock: 'clock_000000000000000000000000' })).status).toBe(404);
    const clock = await send('POST', '/test_clocks', { frozen_time: '2026-01-01T00:00:00Z' });
    expect((await session({ test_clock: clock.body.id }, org.api_keys.sandbox.publishable_key)).status).toBe(400);
    const production = await session({ test_clock: clock.body.id }, org.api_keys.production.secret_key);
    expect(production.status).toBe(400);
    expect((await send('POST', '/test_clocks', { frozen_time: 'yesterday' })).status).toBe(422);
  });
});
