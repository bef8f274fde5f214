import { type CouponTerms, type Discount, discountOf } from '@billing/contracts';
import { formatTwd } from '@billing/service';

type Terms = Pick<CouponTerms, 'discount_type' | 'discount_amount' | 'bonus_trial_days' | 'bonus_months'>;

/** The rounding rule lives in the contracts, so that billing's renewals apply it too. */
export { discountOf };

export function labelOf(terms: Terms): string {
  switch (terms.discount_type) {
    case 'PERCENTAGE':
      return `${terms.discount_amount}% off`;
    case 'FIXED_AMOUNT':
      return `${formatTwd(terms.discount_amount)} off`;
    case 'FIRST_PERIOD_PRICE':
      return `First period ${formatTwd(terms.discount_amount)}`;
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
