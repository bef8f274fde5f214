import { MrrLedger, type SubscriptionObject, monthlyAmount } from '../src/mrr';

const subscription = (overrides: Partial<SubscriptionObject> = {}): SubscriptionObject => ({
  id: 'sub_1',
  customer_id: 'cus_1',
  status: 'ACTIVE',
  price: 299,
  interval: 'month',
  interval_count: 1,
  ...overrides,
});

let version = 0;
const event = (type: string, object: SubscriptionObject, occurredAt: string, id = `evt_${++version}`) => ({
  id,
  type,
  stream: `subscription-${object.id}`,
  stream_version: ++version,
  occurred_at: occurredAt,
  organization: 'org_1',
  data: { subscription_id: object.id, object },
});

describe('monthlyAmount', () => {
  it('brings yearly, weekly and multi-month prices to a month, and counts no trial or canceled one', () => {
    expect(monthlyAmount(subscription({ interval: 'year', price: 1200 }))).toBe(100);
    expect(monthlyAmount(subscription({ interval: 'month', interval_count: 3, price: 900 }))).toBe(300);
    expect(monthlyAmount(subscription({ interval: 'week', price: 12 }))).toBeCloseTo(52);
    expect(monthlyAmount(subscription({ status: 'TRIAL' }))).toBe(0);
    expect(monthlyAmount(subscription({ status: 'CANCELED' }))).toBe(0);
    expect(monthlyAmount(subscription({ status: 'PAST_DUE' }))).toBe(299);
  });
});

describe('MrrLedger', () => {
  it('given two paying subscriptions, when one is canceled next month, then MRR drops and that month churns one of two', () => {
    const ledger = new MrrLedger();
    const a = subscription({ id: 'sub_a' });
    const b = subscription({ id: 'sub_b', interval: 'year', price: 1200 });
    ledger.apply(event('subscription.activated', a, '2026-10-03T00:00:00.000Z'));
    ledger.apply(event('subscription.activated', b, '2026-10-04T00:00:00.000Z'));
    ledger.apply(event('subscription.canceled', { ...a, status: 'CANCELED' }, '2026-11-02T00:00:00.000Z'));

    const report = ledger.report();
    expect(report.mrr).toBe(100);
    expect(report.months).toEqual([
      expect.objectContaining({ month: '2026-10', new_mrr: 399, churned_mrr: 0, paying_at_start: 0 }),
      expect.objectContaining({
        month: '2026-11',
        churned_mrr: 299,
        churned_subscriptions: 1,
        paying_at_start: 2,
        churn_rate: 0.5,
      }),
    ]);
  });

  it('given a trial, when it converts, then it is new MRR in the month it first pays', () => {
    const ledger = new MrrLedger();
    const trial = subscription({ status: 'TRIAL' });
    ledger.apply(event('subscription.activated', trial, '2026-10-20T00:00:00.000Z'));
    ledger.apply(event('subscription.updated', { ...trial, status: 'ACTIVE' }, '2026-11-03T00:00:00.000Z'));
    expect(ledger.report().months.map((m) => [m.month, m.new_mrr])).toEqual([
      ['2026-10', 0],
      ['2026-11', 299],
    ]);
  });

  it('given a redelivered event, when applied twice, then it counts once', () => {
    const ledger = new MrrLedger();
    const activated = event('subscription.activated', subscription(), '2026-10-03T00:00:00.000Z');
    ledger.apply(activated);
    ledger.apply(activated);
    expect(ledger.report()).toMatchObject({ mrr: 299, paying_subscriptions: 1 });
  });

  it('given a plan switch, when the price changes, then the difference is expansion', () => {
    const ledger = new MrrLedger();
    const s = subscription();
    ledger.apply(event('subscription.activated', s, '2026-10-03T00:00:00.000Z'));
    ledger.apply(event('subscription.updated', { ...s, price: 499 }, '2026-10-10T00:00:00.000Z'));
    expect(ledger.report().months[0]).toMatchObject({ new_mrr: 299, expansion_mrr: 200 });
    expect(ledger.report().mrr).toBe(499);
  });
});
