import { compareMonthly, monthlyEquivalent, periodDays, prorate, unusedCredit } from './proration';

const plan = (price: number, interval: 'day' | 'week' | 'month' | 'year', interval_count = 1) => ({
  price,
  interval,
  interval_count,
});

describe('monthly_equivalent', () => {
  it.each([
    [plan(299, 'month'), 299],
    [plan(897, 'month', 3), 299],
    [plan(898, 'month', 3), 299], // 299.33 rounds down
    [plan(2990, 'year'), 249], // 249.17
    [plan(3588, 'year'), 299],
    [plan(5980, 'year', 2), 249], // 249.17
    [plan(100, 'week'), 433], // 100 * 52 / 12 = 433.33
    [plan(200, 'week', 2), 433],
    [plan(10, 'day'), 304], // 10 * 365 / 12 = 304.17
    [plan(300, 'day', 30), 304],
    [plan(0, 'month'), 0],
    [plan(1, 'year'), 0],
  ])('%j is %i a month, rounded down', (p, expected) => {
    expect(monthlyEquivalent(p)).toBe(expected);
  });

  it('compares exactly, not by the rounded value', () => {
    expect(monthlyEquivalent(plan(300, 'year'))).toBe(monthlyEquivalent(plan(301, 'year')));
    expect(compareMonthly(plan(301, 'year'), plan(300, 'year'))).toBe(1);
    expect(compareMonthly(plan(300, 'year'), plan(301, 'year'))).toBe(-1);
    expect(compareMonthly(plan(3588, 'year'), plan(299, 'month'))).toBe(0);
    expect(compareMonthly(plan(897, 'month', 3), plan(299, 'month'))).toBe(0);
    // 365 days but 52 weeks (364 days) a year: 7 a day is a little more per month than 49 a week.
    expect(compareMonthly(plan(7, 'day'), plan(49, 'week'))).toBe(1);
    expect(compareMonthly(plan(100, 'week'), plan(433, 'month'))).toBe(1);
  });
});

describe('the day rule', () => {
  const start = '2026-04-01T00:00:00.000Z';
  const end = '2026-05-01T00:00:00.000Z';
  it('counts whole 24-hour days; the day in progress is used', () => {
    expect(periodDays(start, end, new Date('2026-04-01T00:00:00Z'))).toEqual({
      unused_days: 30,
      total_days_in_period: 30,
    });
    expect(periodDays(start, end, new Date('2026-04-01T00:00:01Z'))).toEqual({
      unused_days: 29,
      total_days_in_period: 30,
    });
    expect(periodDays(start, end, new Date('2026-04-10T12:00:00Z'))).toEqual({
      unused_days: 20,
      total_days_in_period: 30,
    });
    expect(periodDays(start, end, new Date('2026-04-30T23:59:59Z'))).toEqual({
      unused_days: 0,
      total_days_in_period: 30,
    });
  });
  it('clamps to the period', () => {
    expect(periodDays(start, end, new Date('2026-03-01T00:00:00Z'))).toEqual({
      unused_days: 30,
      total_days_in_period: 30,
    });
    expect(periodDays(start, end, new Date('2026-06-01T00:00:00Z'))).toEqual({
      unused_days: 0,
      total_days_in_period: 30,
    });
  });
  it('takes the calendar months and years as they are', () => {
    expect(periodDays('2026-01-31T10:00:00Z', '2026-02-28T10:00:00Z', new Date('2026-02-01T10:00:00Z'))).toEqual({
      unused_days: 27,
      total_days_in_period: 28,
    });
    expect(periodDays('2028-01-01T00:00:00Z', '2029-01-01T00:00:00Z', new Date('2028-01-01T00:00:00Z'))).toEqual({
      unused_days: 366,
      total_days_in_period: 366,
    });
  });
});

describe('the credit for unused days', () => {
  it('rounds down and never credits more than was paid', () => {
    expect(unusedCredit(299, 20, 30)).toBe(199); // 199.33
    expect(unusedCredit(299, 30, 30)).toBe(299);
    expect(unusedCredit(299, 31, 30)).toBe(299);
    expect(unusedCredit(100, 1, 3)).toBe(33);
    expect(unusedCredit(2, 2, 3)).toBe(1);
  });
  it('is 0 when nothing was paid, nothing is left, or the period has no days', () => {
    expect(unusedCredit(0, 20, 30)).toBe(0);
    expect(unusedCredit(299, 0, 30)).toBe(0);
    expect(unusedCredit(299, 5, 0)).toBe(0);
    expect(unusedCredit(-5, 5, 10)).toBe(0);
  });
});

describe('prorate', () => {
  const period = { periodStart: '2026-04-01T00:00:00.000Z', periodEnd: '2026-05-01T00:00:00.000Z' };
  it('upgrading 299 to 599 on day 10 of 30: credit 199, charge 599, net 400', () => {
    expect(prorate({ ...period, paid: 299, charge: 599, now: new Date('2026-04-10T12:00:00Z') })).toEqual({
      credit_amount: 199,
      charge_amount: 599,
      net_amount: 400,
      unused_days: 20,
      total_days_in_period: 30,
    });
  });
  it('credits what was paid after a discount', () => {
    expect(prorate({ ...period, paid: 239, charge: 599, now: new Date('2026-04-10T12:00:00Z') }).credit_amount).toBe(
      159,
    );
  });
  it('has a negative net when the credit is more than the charge', () => {
    expect(prorate({ ...period, paid: 599, charge: 299, now: new Date('2026-04-01T00:00:00Z') }).net_amount).toBe(-300);
  });
  it('never charges a negative amount', () => {
    expect(prorate({ ...period, paid: 0, charge: -5, now: new Date('2026-04-02T00:00:00Z') }).charge_amount).toBe(0);
  });
});
