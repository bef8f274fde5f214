import { type Subscription, discountOf } from '@billing/contracts';
import { addInterval } from '../calendar/period';

// The coupon's rules over a subscription's periods, pure: what each period's invoice takes off.
// Renewals, plan switches and the portal's "next invoice" all ask here.

/**
 * The coupon's discount of the invoice for the period starting at `periodStart`, by its
 * duration counted from the first paid period (`discount.starts_at`): `once` and
 * `FIRST_PERIOD_PRICE`, that period only; `repeating`, periods that start within
 * `duration_in_months`; `forever`, all. The rounding rule is `discountOf`'s.
 */
export function discountFor(subscription: Subscription, periodStart: string): number {
  const discount = subscription.discount;
  if (!discount) return 0;
  const first = discount.starts_at === periodStart;
  const applies =
    discount.discount_type === 'FIRST_PERIOD_PRICE' || discount.duration === 'once'
      ? first
      : discount.duration === 'forever' ||
        Date.parse(periodStart) <
          addInterval(new Date(discount.starts_at), 'month', discount.duration_in_months ?? 0).getTime();
  return applies ? discountOf(discount, subscription.price) : 0;
}

/**
 * Whether the period `[periodStart, periodEnd)` is one of the coupon's bonus months: free
 * billing periods right after the first paid period (`discount.starts_at`). A period is free
 * when it lies wholly within `bonus_months` calendar months after the first paid period ends,
 * so a monthly plan gets `bonus_months` free periods, a plan billed every 3 months one per 3
 * bonus months, a yearly plan one free year per 12 (a shorter bonus gives it nothing), a
 * weekly plan the weeks that fit. Months are counted from the anchor by the calendar rule
 * (`calendar/period.ts`), so 31 Jan + 1 paid + 2 bonus months ends on 30 Apr. The coupon's
 * `duration` keeps counting calendar months from `starts_at` through them, as a Stripe
 * `repeating` coupon counts months, not invoices.
 */
export function isBonusPeriod(subscription: Subscription, periodStart: string, periodEnd: string): boolean {
  const bonusMonths = subscription.discount?.bonus_months ?? 0;
  if (!subscription.discount || bonusMonths <= 0) return false;
  const { interval, interval_count: count } = subscription;
  const anchor = new Date(subscription.discount.starts_at);
  const firstPaidEnd = addInterval(anchor, interval, count);
  const bonusEnd =
    interval === 'month' || interval === 'year'
      ? addInterval(anchor, 'month', (interval === 'year' ? 12 : 1) * count + bonusMonths)
      : addInterval(firstPaidEnd, 'month', bonusMonths);
  return Date.parse(periodStart) >= firstPaidEnd.getTime() && Date.parse(periodEnd) <= bonusEnd.getTime();
}

/**
 * What the invoice of the period `[periodStart, periodEnd)` takes off the plan's price: all of
 * it in one of the coupon's bonus periods (`isBonusPeriod`), else the coupon's discount
 * (`discountFor`).
 */
export function periodDiscount(subscription: Subscription, periodStart: string, periodEnd: string): number {
  return isBonusPeriod(subscription, periodStart, periodEnd)
    ? subscription.price
    : discountFor(subscription, periodStart);
}

/**
 * `price` (another plan's: a switch's target) after the subscription's coupon, as the coupon
 * would take it off a period starting at `periodStart` (`discountFor`, on that price).
 */
export function priceAfterCoupon(subscription: Subscription, price: number, periodStart: string): number {
  return price - discountFor({ ...subscription, price }, periodStart);
}
