import type { ProductInterval } from '@billing/contracts';

// The money rules of plan switching, pure (docs/plan-switching.md). Amounts are integer TWD.

const DAY_MS = 24 * 60 * 60 * 1000;

/** A price over one billing period: `price` TWD every `interval_count` `interval`s. */
export type PlanPrice = { price: number; interval: ProductInterval; interval_count: number };

/**
 * Months in one unit of each interval, as a fraction `[numerator, denominator]`: a year is 12
 * months, a month 1, a week 12/52 (52 weeks a year), a day 12/365 (365 days a year).
 */
const MONTHS_PER_UNIT: Record<ProductInterval, readonly [number, number]> = {
  day: [12, 365],
  week: [12, 52],
  month: [1, 1],
  year: [12, 1],
};

/**
 * The plan's price per month as an exact fraction `[numerator, denominator]`:
 * `price / (interval_count * months per unit)`.
 */
export function monthlyEquivalentExact(plan: PlanPrice): readonly [number, number] {
  const [months, per] = MONTHS_PER_UNIT[plan.interval];
  return [plan.price * per, plan.interval_count * months];
}

/**
 * The plan's `monthly_equivalent` as shown: its price per month rounded DOWN to a whole TWD.
 * 299 a month: 299; 2990 a year: floor(2990 / 12) = 249; 100 a week: floor(100 * 52 / 12) = 433;
 * 10 a day: floor(10 * 365 / 12) = 304; 897 every 3 months: 299.
 */
export function monthlyEquivalent(plan: PlanPrice): number {
  const [numerator, denominator] = monthlyEquivalentExact(plan);
  return Math.floor(numerator / denominator);
}

/**
 * Compares two plans' monthly equivalents exactly (as fractions, never the rounded values, so
 * that 300 and 301 a year are not taken for the same price): negative when `a` costs less per
 * month than `b`, 0 when the same, positive when more.
 */
export function compareMonthly(a: PlanPrice, b: PlanPrice): number {
  const [an, ad] = monthlyEquivalentExact(a);
  const [bn, bd] = monthlyEquivalentExact(b);
  return Math.sign(an * bd - bn * ad);
}

/**
 * The one day rule: a period's days are whole 24-hour days from its start (`calendar/period.ts`
 * makes every period a whole number of them, in UTC); the day in progress counts as used, so
 * the unused days are the whole days left before the period's end. Both clamped to
 * `0 <= unused_days <= total_days_in_period`.
 */
export function periodDays(
  periodStart: string | Date,
  periodEnd: string | Date,
  now: Date,
): { unused_days: number; total_days_in_period: number } {
  const start = new Date(periodStart).getTime();
  const end = new Date(periodEnd).getTime();
  const total = Math.max(0, Math.round((end - start) / DAY_MS));
  const left = Math.floor((end - now.getTime()) / DAY_MS);
  return { unused_days: Math.min(total, Math.max(0, left)), total_days_in_period: total };
}

/**
 * The credit for the unused days of what was paid for the current period:
 * `floor(paid * unused_days / total_days_in_period)`, rounded DOWN (the merchant's favour, as
 * every discount), so it is never more than `paid`; 0 when nothing was paid or the period has
 * no days.
 */
export function unusedCredit(paid: number, unusedDays: number, totalDays: number): number {
  if (paid <= 0 || totalDays <= 0 || unusedDays <= 0) return 0;
  const days = Math.min(unusedDays, totalDays);
  return Math.min(paid, Math.floor((paid * days) / totalDays));
}

/** The amounts of one prorated switch; `net_amount` negative is the customer's credit. */
export type ProrationAmounts = {
  credit_amount: number;
  charge_amount: number;
  net_amount: number;
  unused_days: number;
  total_days_in_period: number;
};

/**
 * Proration of an immediate switch at `now`: the credit for the unused days of `paid` (what
 * the customer paid for the current period, after discounts and refunds), the charge of the new
 * plan's full period (`charge`, after a coupon still valid), and `net_amount = charge - credit`.
 */
export function prorate(input: {
  paid: number;
  charge: number;
  periodStart: string | Date;
  periodEnd: string | Date;
  now: Date;
}): ProrationAmounts {
  const days = periodDays(input.periodStart, input.periodEnd, input.now);
  const credit = unusedCredit(input.paid, days.unused_days, days.total_days_in_period);
  const charge = Math.max(0, input.charge);
  return { credit_amount: credit, charge_amount: charge, net_amount: charge - credit, ...days };
}
