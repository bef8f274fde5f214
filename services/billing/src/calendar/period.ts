import type { ProductInterval } from '@billing/contracts';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The one calendar rule of billing periods, in UTC:
 * - `day` and `week` add whole 24-hour days (7 per week);
 * - `month` and `year` (12 months) move the calendar month and keep the day of the month and
 *   the time of day; a day that the target month lacks clamps to its last day
 *   (31 Jan + 1 month = 28 Feb, or 29 Feb in a leap year; 29 Feb + 1 year = 28 Feb).
 *
 * Later periods are counted from the subscription's anchor (`addInterval(anchor, unit,
 * count * n)`), never from the previous clamped end, so 31 Jan renews on 28 Feb and then on
 * 31 Mar, not on 28 Mar.
 */
export function addInterval(start: Date, interval: ProductInterval, count: number): Date {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`interval count must be a whole number: ${count}`);
  switch (interval) {
    case 'day':
      return new Date(start.getTime() + count * DAY_MS);
    case 'week':
      return new Date(start.getTime() + count * 7 * DAY_MS);
    case 'month':
      return addMonths(start, count);
    case 'year':
      return addMonths(start, count * 12);
    default: {
      const unknown: never = interval;
      throw new RangeError(`Unknown interval ${String(unknown)}`);
    }
  }
}

/** The end of the `n`-th period (1 is the first) of a subscription anchored at `anchor`. */
export function periodEnd(anchor: Date, interval: ProductInterval, count: number, n = 1): Date {
  return addInterval(anchor, interval, count * n);
}

/** The first period end of the subscription anchored at `anchor` that comes after `end`: the next period's end. */
export function nextPeriodEnd(anchor: Date, interval: ProductInterval, count: number, end: Date): Date {
  for (let n = 1; ; n++) {
    const candidate = periodEnd(anchor, interval, count, n);
    if (candidate.getTime() > end.getTime()) return candidate;
  }
}

function addMonths(start: Date, months: number): Date {
  const monthIndex = start.getUTCMonth() + months;
  const year = start.getUTCFullYear() + Math.floor(monthIndex / 12);
  const month = monthIndex % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(
      year,
      month,
      Math.min(start.getUTCDate(), lastDay),
      start.getUTCHours(),
      start.getUTCMinutes(),
      start.getUTCSeconds(),
      start.getUTCMilliseconds(),
    ),
  );
}

/** Trials are whole 24-hour days from the start. */
export const trialEnd = (start: Date, trialDays: number): Date => new Date(start.getTime() + trialDays * DAY_MS);
