import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingService } from '../src';
import { runDueWork } from '../src/engine/due-work';
import { caller, client, eventsOf, feeds, newOrg } from './helpers';

jest.setTimeout(120000);

const DAY = 24 * 3600 * 1000;
let clock = Date.parse('2026-11-21T08:00:00.000Z');
let running: ServiceUnderTest;
beforeAll(async () => {
  running = await startServiceForTest(billingService, { now: () => new Date(clock) });
});
afterAll(() => running.stop());

const { call } = client(() => running);
const { product, paid } = feeds(() => running);

describe('the end of a trial', () => {
  it('turns TRIAL into ACTIVE at trial_end on the injected clock, with subscription.updated', async () => {
    const org = newOrg();
    const productId = await product(org, { trial_days: 7 });
    await paid(org, { product_id: productId, customer_email: 'trial@example.com' });
    const trial = await eventually(async () => {
      const res = await call('GET', '/v1/subscriptions', caller(org));
      expect(res.body.subscriptions).toHaveLength(1);
      return res.body.subscriptions[0];
    });
    expect(trial).toMatchObject({ status: 'TRIAL', trial_end: new Date(clock + 7 * DAY).toISOString() });

    clock += 4 * DAY - 1000;
    expect(await runDueWork(running.service.context)).not.toContain(trial.id);
    clock += 1000;
    // Three days before trial_end: subscription.trial_will_end, once, however many sweeps run at once.
    const sweeps = await Promise.all([1, 2, 3].map(() => runDueWork(running.service.context)));
    expect(sweeps.filter((changed) => changed.includes(trial.id))).toHaveLength(1);
    const told = await eventsOf(running, 'SubscriptionTrialWillEnd', org);
    expect(told.map((e) => [e.data.trial_end, new Date(e.occurred_at).toISOString()])).toEqual([
      [trial.trial_end, new Date(clock).toISOString()],
    ]);

    clock += 3 * DAY - 1000;
    expect(await runDueWork(running.service.context)).not.toContain(trial.id);
    expect((await call('GET', `/v1/subscriptions/${trial.id}`, caller(org))).body.status).toBe('TRIAL');

    clock += 1000;
    // Contain, not equal: with Kafka this test's consumer group also provisions trials that other runs left on the topic.
    expect(await runDueWork(running.service.context)).toContain(trial.id);
    const ended = (await call('GET', `/v1/subscriptions/${trial.id}`, caller(org))).body;
    // The first period was paid at checkout: only the status changes.
    expect(ended).toEqual({ ...trial, status: 'ACTIVE', updated_at: new Date(clock).toISOString() });
    const entitlements = await call('GET', '/v1/customers/entitlements?email=trial@example.com', caller(org));
    expect(entitlements.body.entitlements).toEqual([expect.objectContaining({ status: 'active' })]);
    const updates = await eventsOf(running, 'SubscriptionUpdated', org);
    expect(updates.map((e) => e.data.object)).toEqual([ended]);

    // Again, or concurrently: nothing more.
    expect(await runDueWork(running.service.context)).not.toContain(trial.id);
    expect(await eventsOf(running, 'SubscriptionUpdated', org)).toHaveLength(1);
  });
});
