import type { Subscription } from '@billing/contracts';
import { discountFor, isBonusPeriod, periodDiscount, priceAfterCoupon } from './discount';

describe('a coupon on renewal invoices', () => {
  const starts = '2026-02-14T10:00:00.000Z';
  const subscriptionWith = (discount: Partial<NonNullable<Subscription['discount']>>): Subscription =>
    ({
      price: 300,
      discount: {
        coupon_id: 'cpn_1',
        discount_type: 'PERCENTAGE',
        discount_amount: 20,
        duration: 'once',
        duration_in_months: null,
        starts_at: starts,
        ...discount,
      },
    }) as Subscription;
  const periods = [
    '2026-02-14T10:00:00.000Z',
    '2026-03-14T10:00:00.000Z',
    '2026-04-14T10:00:00.000Z',
    '2026-05-14T10:00:00.000Z',
  ];

  it('takes 20% off the first paid period only when once', () =>
    expect(periods.map((p) => discountFor(subscriptionWith({}), p))).toEqual([60, 0, 0, 0]));
  it('takes it off the periods that start within 3 months when repeating 3', () =>
    expect(
      periods.map((p) => discountFor(subscriptionWith({ duration: 'repeating', duration_in_months: 3 }), p)),
    ).toEqual([60, 60, 60, 0]));
  it('takes it off every period when forever, rounding down', () =>
    expect(discountFor(subscriptionWith({ duration: 'forever', discount_amount: 33 }), periods[3]!)).toBe(99));
  it('charges a first-period price once', () =>
    expect(
      periods.map((p) =>
        discountFor(
          subscriptionWith({ discount_type: 'FIRST_PERIOD_PRICE', discount_amount: 1, duration: 'forever' }),
          p,
        ),
      ),
    ).toEqual([299, 0, 0, 0]));
  it('is nothing without a coupon', () =>
    expect(discountFor({ price: 300, discount: null } as Subscription, starts)).toBe(0));
  it("takes the coupon off another plan's price as it would off this one's (a switch's target)", () => {
    const repeating = subscriptionWith({ duration: 'repeating', duration_in_months: 3 });
    expect(priceAfterCoupon(repeating, 500, periods[1]!)).toBe(400);
    expect(priceAfterCoupon(repeating, 500, periods[3]!)).toBe(500);
  });
});

describe('bonus months', () => {
  const anchored = (interval: Subscription['interval'], count: number, bonus: number | undefined): Subscription =>
    ({
      price: 300,
      interval,
      interval_count: count,
      discount: {
        coupon_id: 'cpn_1',
        discount_type: 'PERCENTAGE',
        discount_amount: 10,
        duration: 'once',
        duration_in_months: null,
        bonus_months: bonus,
        starts_at: '2026-01-31T10:00:00.000Z',
      },
    }) as Subscription;
  const monthly = [
    ['2026-01-31T10:00:00.000Z', '2026-02-28T10:00:00.000Z'],
    ['2026-02-28T10:00:00.000Z', '2026-03-31T10:00:00.000Z'],
    ['2026-03-31T10:00:00.000Z', '2026-04-30T10:00:00.000Z'],
    ['2026-04-30T10:00:00.000Z', '2026-05-31T10:00:00.000Z'],
  ] as const;

  it('makes the periods after the first paid one free, as many as the bonus months (month ends clamp)', () =>
    expect(monthly.map(([s, e]) => isBonusPeriod(anchored('month', 1, 2), s, e))).toEqual([false, true, true, false]));
  it('is none without bonus months or a coupon', () => {
    expect(monthly.map(([s, e]) => isBonusPeriod(anchored('month', 1, 0), s, e))).toEqual([false, false, false, false]);
    expect(monthly.map(([s, e]) => isBonusPeriod(anchored('month', 1, undefined), s, e))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(isBonusPeriod({ discount: null } as Subscription, monthly[1][0], monthly[1][1])).toBe(false);
  });
  it("makes a bonus period's invoice take off the whole price, any other the coupon's discount", () =>
    expect(monthly.map(([s, e]) => periodDiscount(anchored('month', 1, 2), s, e))).toEqual([30, 300, 300, 0]));
  it('frees whole periods only: a yearly plan needs 12 bonus months for a free year', () => {
    const second = ['2027-01-31T10:00:00.000Z', '2028-01-31T10:00:00.000Z'] as const;
    expect(isBonusPeriod(anchored('year', 1, 11), ...second)).toBe(false);
    expect(isBonusPeriod(anchored('year', 1, 12), ...second)).toBe(true);
  });
  it('frees the weeks that fit in the months after the first paid week', () => {
    const week = 7 * 24 * 3600 * 1000;
    const start = Date.parse('2026-01-31T10:00:00.000Z');
    const weeks = Array.from({ length: 7 }, (_, i) => [
      new Date(start + i * week).toISOString(),
      new Date(start + (i + 1) * week).toISOString(),
    ]);
    // First paid week ends 7 Feb; one bonus month runs to 7 Mar: the weeks ending by then (4 of them).
    expect(weeks.map(([s, e]) => isBonusPeriod(anchored('week', 1, 1), s!, e!))).toEqual([
      false,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});
