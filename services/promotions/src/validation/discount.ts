import type { CouponTerms, Discount } from '@billing/contracts';

type Terms = Pick<CouponTerms, 'discount_type' | 'discount_amount' | 'bonus_trial_days' | 'bonus_months'>;

/**
 * The one rounding rule: amounts are integer TWD and a percentage discount is rounded DOWN
 * (floor), in the merchant's favour, so the price after discount is rounded up. A discount is
 * never negative and never more than the amount.
 *
 * - PERCENTAGE p:          discount = floor(amount * p / 100)
 * - FIXED_AMOUNT f:        discount = min(amount, f)
 * - FIRST_PERIOD_PRICE x:  discount = max(0, amount - x)   (the first period costs min(amount, x))
 */
export function discountOf(terms: Terms, amount: number): number {
  switch (terms.discount_type) {
    case 'PERCENTAGE':
      return Math.floor((amount * terms.discount_amount) / 100);
    case 'FIXED_AMOUNT':
      return Math.min(amount, terms.discount_amount);
    case 'FIRST_PERIOD_PRICE':
      return Math.max(0, amount - terms.discount_amount);
  }
}

const twd = (n: number) => `NT$${n.toLocaleString('en-US')}`;

export function labelOf(terms: Terms): string {
  switch (terms.discount_type) {
    case 'PERCENTAGE':
      return `${terms.discount_amount}% off`;
    case 'FIXED_AMOUNT':
      return `${twd(terms.discount_amount)} off`;
    case 'FIRST_PERIOD_PRICE':
      return `First period ${twd(terms.discount_amount)}`;
  }
}

/** The validation response's `discount`; `amount` and `discounted_amount` only when an amount is given. */
export function discountFor(terms: Terms, amount?: number): Discount {
  const discount: Discount = {
    type: terms.discount_type,
    label: labelOf(terms),
    bonus_trial_days: terms.bonus_trial_days,
    bonus_months: terms.bonus_months,
  };
  if (amount === undefined) return discount;
  const off = discountOf(terms, amount);
  return { ...discount, amount: off, discounted_amount: amount - off };
}
