import type { Subscription } from '@billing/contracts';
import { usageAmount, usageLines, usageWindowOf } from './usage-lines';

const subscription = {
  id: 'sub_1',
  current_period_start: '2026-03-01T00:00:00.000Z',
  current_period_end: '2026-04-01T00:00:00.000Z',
  metered_prices: [
    { meter: 'api_calls', unit_amount: 1, package_size: 100 },
    { meter: 'seats', unit_amount: 50, package_size: 1 },
  ],
} as Subscription;

describe('usage lines of a renewal invoice', () => {
  it('rounds a period up to whole packages', () => {
    const per100 = { meter: 'api_calls', unit_amount: 1, package_size: 100 };
    expect(usageAmount(per100, 1234)).toBe(13);
    expect(usageAmount(per100, 1200)).toBe(12);
    expect(usageAmount(per100, 1)).toBe(1);
    expect(usageAmount(per100, 0)).toBe(0);
    expect(usageAmount({ meter: 'seats', unit_amount: 50, package_size: 1 }, 7)).toBe(350);
    expect(() => usageAmount({ meter: 'm', unit_amount: 1_000_000, package_size: 1 }, 2 ** 52)).toThrow(/beyond/);
  });

  it('bills the period that ends, or from where a switch left the unbilled usage', () => {
    expect(usageWindowOf(subscription)).toMatchObject({
      meters: ['api_calls', 'seats'],
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-04-01T00:00:00.000Z',
    });
    expect(usageWindowOf({ ...subscription, usage_since: '2026-02-15T00:00:00.000Z' })?.from).toBe(
      '2026-02-15T00:00:00.000Z',
    );
    expect(usageWindowOf({ ...subscription, metered_prices: null })).toBeNull();
    expect(usageWindowOf({ ...subscription, metered_prices: undefined })).toBeNull();
  });

  it('gives a line per meter with usage, in the order of the prices, none for a meter without', () => {
    const window = usageWindowOf(subscription)!;
    expect(
      usageLines(
        window,
        new Map([
          ['seats', 3],
          ['api_calls', 1234],
        ]),
      ),
    ).toEqual([
      {
        description: 'api_calls × 1,234 (NT$1 per 100)',
        amount: 13,
        period: { start: '2026-03-01T00:00:00.000Z', end: '2026-04-01T00:00:00.000Z' },
        kind: 'usage',
        meter: 'api_calls',
        quantity: 1234,
      },
      {
        description: 'seats × 3 (NT$50 each)',
        amount: 150,
        period: { start: '2026-03-01T00:00:00.000Z', end: '2026-04-01T00:00:00.000Z' },
        kind: 'usage',
        meter: 'seats',
        quantity: 3,
      },
    ]);
    expect(usageLines(window, new Map([['api_calls', 0]]))).toEqual([]);
  });
});
