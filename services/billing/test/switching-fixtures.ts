import type { ScheduledPlan, Subscription } from '@billing/contracts';

/** What the plan-switching unit tests share: a Pro subscription (299 a month, April 2026) and two plans to switch to. */
export const subscription: Subscription = {
  object: 'subscription',
  id: 'sub_1',
  customer_id: 'cus_1',
  product: { id: 'prod_pro', name: 'Pro', slug: 'pro' },
  status: 'ACTIVE',
  price: 299,
  currency: 'TWD',
  interval: 'month',
  interval_count: 1,
  current_period_start: '2026-04-01T00:00:00.000Z',
  current_period_end: '2026-05-01T00:00:00.000Z',
  trial_end: null,
  cancel_at_period_end: false,
  canceled_at: null,
  checkout_session_id: 'cs_1',
  test_clock: null,
  billing_cycle_anchor: '2026-04-01T00:00:00.000Z',
  discount: null,
  created_at: '2026-04-01T00:00:00.000Z',
  updated_at: '2026-04-01T00:00:00.000Z',
  livemode: false,
};
export const business: ScheduledPlan = {
  id: 'prod_biz',
  name: 'Business',
  slug: 'biz',
  price: 599,
  interval: 'month',
  interval_count: 1,
};
export const basic: ScheduledPlan = {
  id: 'prod_basic',
  name: 'Basic',
  slug: 'basic',
  price: 199,
  interval: 'month',
  interval_count: 1,
};
