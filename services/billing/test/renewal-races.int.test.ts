import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingService } from '../src';
import { renewDue } from '../src/engine/renewals/renew';
import { caller, client, eventsOf, feeds, newOrg } from './helpers';

/**
 * Renewals of one subscription started several times at once (two engines, or an advance and
 * the sweep): one invoice, one attempt recorded, and the invoice numbers of the organization
 * stay without a gap (a renewal that lost the race gives its number back).
 */
jest.setTimeout(60_000);

let running: ServiceUnderTest;
beforeAll(async () => {
  running = await startServiceForTest(billingService, { config: { BILLING_TRIAL_SWEEP_INTERVAL_MS: '3600000' } });
});
afterAll(() => running.stop());

const { call } = client(() => running);
const { product, paid } = feeds(() => running);

it('opens one invoice, records one attempt and takes one number when five renewals of a subscription race', async () => {
  const org = newOrg();
  // No saved card: the renewal is declined without a charge (checkout is not needed here).
  await paid(org, { product_id: await product(org), customer_email: 'race@example.com' });
  const subscription = await eventually(async () => {
    const list = await call('GET', '/v1/subscriptions', caller(org));
    expect(list.body.subscriptions).toHaveLength(1);
    return list.body.subscriptions[0];
  });
  const item = {
    id: subscription.id,
    organization: org,
    environment: 'SANDBOX' as const,
    due_at: new Date(subscription.current_period_end),
  };
  const at = new Date(subscription.current_period_end);
  const results = await Promise.allSettled(
    Array.from({ length: 5 }, () => renewDue(running.service.context, item, at)),
  );
  expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : r.status))).toEqual(
    Array(5).fill('fulfilled'),
  );

  const invoices = (await call('GET', `/v1/invoices?subscription_id=${subscription.id}`, caller(org))).body.data;
  expect(invoices.map((i: any) => [i.number, i.status, i.attempt_count])).toEqual([
    ['INV-000002', 'open', 1],
    ['INV-000001', 'paid', 1],
  ]);
  expect((await eventsOf(running, 'InvoicePaymentFailed', org)).length).toBe(1);
  expect((await eventsOf(running, 'SubscriptionPastDue', org)).length).toBe(1);
  // The next invoice of the organization takes the next number: none was lost to the race.
  await paid(org, { product_id: await product(org), customer_email: 'next@example.com' });
  await eventually(async () => {
    const all = (await call('GET', '/v1/invoices', caller(org))).body.data;
    expect(all.map((i: any) => i.number).sort()).toEqual(['INV-000001', 'INV-000002', 'INV-000003']);
  });
});
