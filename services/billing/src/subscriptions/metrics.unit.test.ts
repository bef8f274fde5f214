import { type SubscriptionFigures, subscriptionMetrics, subscriptionMetricsChange } from './metrics';

/** Created 2026-03-01 10:00 in Taipei, 300 a month, no trial. */
const monthly = (changes: Partial<SubscriptionFigures> = {}): SubscriptionFigures => ({
  status: 'ACTIVE',
  price: 300,
  interval: 'month',
  interval_count: 1,
  trial_end: null,
  created_at: '2026-03-01T02:00:00.000Z',
  updated_at: '2026-03-01T02:00:00.000Z',
  ...changes,
});

describe('a subscription in the daily metrics', () => {
  it('is new, active and in MRR from the Taipei day it starts', () => {
    // 23:30 UTC on 02-28 is 07:30 on 03-01 in Taipei.
    const late = monthly({ created_at: '2026-02-28T23:30:00.000Z', updated_at: '2026-02-28T23:30:00.000Z' });
    expect(subscriptionMetrics(late)).toEqual([
      { date: '2026-03-01', active_subscriptions: 1, new_subscriptions: 1 },
      { date: '2026-03-01', mrr: 300 },
    ]);
  });

  it('adds to MRR from the day its trial ends, at its monthly equivalent', () => {
    const trial = monthly({ status: 'TRIAL', price: 2990, interval: 'year', trial_end: '2026-03-15T02:00:00.000Z' });
    expect(subscriptionMetrics(trial)).toEqual([
      { date: '2026-03-01', active_subscriptions: 1, new_subscriptions: 1 },
      { date: '2026-03-15', mrr: 249 },
    ]);
  });

  it('ends and churns on the day it is canceled, and is never in MRR if that is in its trial', () => {
    const canceledInTrial = monthly({
      status: 'CANCELED',
      trial_end: '2026-03-15T02:00:00.000Z',
      updated_at: '2026-03-10T02:00:00.000Z',
    });
    expect(subscriptionMetrics(canceledInTrial)).toEqual([
      { date: '2026-03-01', active_subscriptions: 1, new_subscriptions: 1 },
      { date: '2026-03-10', active_subscriptions: -1, churned_subscriptions: 1 },
    ]);
  });
});

describe('a change of a subscription', () => {
  it('given none before, records its whole life', () => {
    expect(subscriptionMetricsChange(null, monthly())).toEqual([
      { date: '2026-03-01', active_subscriptions: 1, new_subscriptions: 1, mrr: 300 },
    ]);
  });

  it('given a switch to a dearer plan, moves MRR from the day of the switch, not before', () => {
    const switched = monthly({ price: 500, updated_at: '2026-03-15T04:00:00.000Z' });
    expect(subscriptionMetricsChange(monthly(), switched)).toEqual([{ date: '2026-03-15', mrr: 200 }]);
  });

  it('given a cancellation in the trial, takes back the MRR the trial end would have added', () => {
    const trial = monthly({ status: 'TRIAL', trial_end: '2026-03-15T02:00:00.000Z' });
    const canceled = { ...trial, status: 'CANCELED' as const, updated_at: '2026-03-10T02:00:00.000Z' };
    expect(subscriptionMetricsChange(trial, canceled)).toEqual([
      { date: '2026-03-10', active_subscriptions: -1, churned_subscriptions: 1 },
      { date: '2026-03-15', mrr: -300 },
    ]);
  });

  it('given a cancellation after the trial, ends its MRR that day', () => {
    const canceled = monthly({ status: 'CANCELED', updated_at: '2026-04-02T02:00:00.000Z' });
    expect(subscriptionMetricsChange(monthly({ updated_at: '2026-04-01T02:00:00.000Z' }), canceled)).toEqual([
      { date: '2026-04-02', active_subscriptions: -1, churned_subscriptions: 1, mrr: -300 },
    ]);
  });

  it('given a renewal or the same state again, records nothing', () => {
    const renewed = monthly({ updated_at: '2026-04-01T02:00:00.000Z' });
    expect(subscriptionMetricsChange(monthly(), renewed)).toEqual([]);
    expect(subscriptionMetricsChange(renewed, renewed)).toEqual([]);
  });
});
