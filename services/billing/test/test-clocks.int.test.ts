import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingService } from '../src';
import { caller, client, feeds, newOrg } from './helpers';

jest.setTimeout(120000);

const DAY = 24 * 3600 * 1000;
let running: ServiceUnderTest;
beforeAll(async () => {
  // The service clock stays in 2026-11; subscriptions on a test clock live on its time instead.
  running = await startServiceForTest(billingService, {
    now: () => new Date('2026-11-21T08:00:00.000Z'),
    config: { BILLING_TRIAL_SWEEP_INTERVAL_MS: '100' },
  });
});
afterAll(() => running.stop());

const { call } = client(() => running);
const { product, paid } = feeds(() => running);

/** Events of one subscription's stream, with the time each occurred. */
async function streamOf(id: string) {
  return running.service.context.store.readStream(`subscription-${id}`);
}

describe('Sandbox test clocks', () => {
  it('lists the organization’s clocks newest first, in pages, and refuses bad cursors and Production', async () => {
    const org = newOrg();
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      ids.push(
        (await call('POST', '/v1/test_clocks', caller(org), { frozen_time: '2026-01-01T00:00:00Z', name })).body.id,
      );
    }
    const first = await call('GET', '/v1/test_clocks?limit=2', caller(org));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', has_more: true, livemode: false });
    const second = await call('GET', `/v1/test_clocks?limit=2&starting_after=${first.body.data[1].id}`, caller(org));
    expect(second.body.has_more).toBe(false);
    const listed = [...first.body.data, ...second.body.data];
    expect(listed.map((c: { id: string }) => c.id).sort()).toEqual([...ids].sort());
    expect(listed[0]).toMatchObject({ object: 'test_clock', frozen_time: '2026-01-01T00:00:00.000Z', status: 'ready' });
    const unknown = await call('GET', '/v1/test_clocks?starting_after=clock_missing', caller(org));
    expect([unknown.status, unknown.body.error.details[0].code]).toEqual([400, 'unknown_cursor']);
    expect((await call('GET', '/v1/test_clocks?limit=0', caller(org))).status).toBe(400);
    expect((await call('GET', '/v1/test_clocks', caller(newOrg()))).body.data).toEqual([]);
    expect((await call('GET', `/v1/test_clocks?starting_after=${ids[0]}`, caller(newOrg()))).status).toBe(400);
    expect((await call('GET', '/v1/test_clocks', caller(org, 'PRODUCTION'))).status).toBe(400);
  });

  it('start a subscription at the clock time and run its trial end and period-end cancellation in order on advance', async () => {
    const org = newOrg();
    const clock = await call('POST', '/v1/test_clocks', caller(org), {
      frozen_time: '2026-01-31T10:00:00+00:00',
      name: 'January',
    });
    expect(clock.status).toBe(201);
    expect(clock.body).toEqual({
      object: 'test_clock',
      id: expect.stringMatching(/^clock_/),
      frozen_time: '2026-01-31T10:00:00.000Z',
      status: 'ready',
      name: 'January',
      created_at: '2026-11-21T08:00:00.000Z',
      livemode: false,
    });
    const clockId = clock.body.id;
    const trialPlan = await product(org, { trial_days: 7 });
    await paid(org, { product_id: trialPlan, customer_email: 'clock@example.com', test_clock: clockId });
    const subscription = await eventually(async () => {
      const list = await call('GET', '/v1/subscriptions', caller(org));
      expect(list.body.subscriptions).toHaveLength(1);
      return list.body.subscriptions[0];
    });
    expect(subscription).toMatchObject({
      status: 'TRIAL',
      test_clock: clockId,
      created_at: '2026-01-31T10:00:00.000Z',
      trial_end: '2026-02-07T10:00:00.000Z',
      current_period_end: '2026-02-28T10:00:00.000Z',
    });
    const cancel = await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, caller(org), {});
    expect(cancel.body.cancel_at_period_end).toBe(true);

    // Forward only.
    const back = await call('POST', `/v1/test_clocks/${clockId}/advance`, caller(org), {
      frozen_time: '2026-01-01T00:00:00Z',
    });
    expect(back.status).toBe(422);

    const advanced = await call('POST', `/v1/test_clocks/${clockId}/advance`, caller(org), {
      frozen_time: new Date(Date.parse('2026-01-31T10:00:00Z') + 40 * DAY).toISOString(),
    });
    expect(advanced.body).toMatchObject({ status: 'advancing', frozen_time: '2026-01-31T10:00:00.000Z' });
    const ready = await eventually(async () => {
      const read = await call('GET', `/v1/test_clocks/${clockId}`, caller(org));
      expect(read.body.status).toBe('ready');
      return read.body;
    });
    expect(ready.frozen_time).toBe('2026-03-12T10:00:00.000Z');

    const ended = (await call('GET', `/v1/subscriptions/${subscription.id}`, caller(org))).body;
    expect(ended).toMatchObject({ status: 'CANCELED', updated_at: '2026-02-28T10:00:00.000Z' });
    const events = await streamOf(subscription.id);
    expect(events.map((e) => [e.type, e.occurred_at])).toEqual([
      ['SubscriptionActivated', '2026-01-31T10:00:00.000Z'],
      ['SubscriptionUpdated', '2026-01-31T10:00:00.000Z'], // the merchant's cancel, on the subscription's clock
      ['SubscriptionTrialWillEnd', '2026-02-04T10:00:00.000Z'], // 3 days before trial_end, on the clock
      ['SubscriptionUpdated', '2026-02-07T10:00:00.000Z'], // the trial ends on the clock
      ['SubscriptionCanceled', '2026-02-28T10:00:00.000Z'],
    ]);
  });

  it('leave subscriptions on real time alone, and refuse Production keys, a second advance and deleted clocks', async () => {
    const org = newOrg();
    const production = await call('POST', '/v1/test_clocks', caller(org, 'PRODUCTION'), {
      frozen_time: '2026-01-01T00:00:00Z',
    });
    expect(production.status).toBe(400);
    const clock = (await call('POST', '/v1/test_clocks', caller(org), { frozen_time: '2026-01-01T00:00:00Z' })).body;
    expect((await call('GET', `/v1/test_clocks/${clock.id}`, caller(org, 'PRODUCTION'))).status).toBe(400);
    expect((await call('GET', `/v1/test_clocks/${clock.id}`, caller(newOrg()))).status).toBe(404);

    const plan = await product(org, { trial_days: 1 });
    await paid(org, { product_id: plan, customer_email: 'real@example.com' });
    const real = await eventually(async () => {
      const list = await call('GET', '/v1/subscriptions', caller(org));
      expect(list.body.subscriptions).toHaveLength(1);
      return list.body.subscriptions[0];
    });
    expect(real.test_clock).toBeNull();
    await call('POST', `/v1/test_clocks/${clock.id}/advance`, caller(org), { frozen_time: '2027-01-01T00:00:00Z' });
    await eventually(async () =>
      expect((await call('GET', `/v1/test_clocks/${clock.id}`, caller(org))).body.status).toBe('ready'),
    );
    // Its trial ends by the service clock (2026-11-22), not the test clock's 2027.
    expect((await call('GET', `/v1/subscriptions/${real.id}`, caller(org))).body.status).toBe('TRIAL');

    expect((await call('DELETE', `/v1/test_clocks/${clock.id}`, caller(org))).body).toEqual({
      id: clock.id,
      object: 'test_clock',
      deleted: true,
    });
    expect((await call('GET', `/v1/test_clocks/${clock.id}`, caller(org))).status).toBe(404);
    expect(
      (await call('POST', `/v1/test_clocks/${clock.id}/advance`, caller(org), { frozen_time: '2028-01-01T00:00:00Z' }))
        .status,
    ).toBe(404);
  });
});
