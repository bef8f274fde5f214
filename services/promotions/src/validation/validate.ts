import type { ApplicableProduct, CouponTerms, PromoErrorCode, ValidationResult } from '@billing/contracts';

/** What the code's facts decide; the environment's `livemode` is added where it is answered. */
export type CodeValidation = Omit<ValidationResult, 'livemode'>;
import { discountFor, discountOf } from './discount';
import { PROMO_MESSAGES } from './errors';

/** What the validation needs to know about the code; the loader reads it from the read models. */
export interface CodeFacts {
  code: string;
  active: boolean;
  valid_from: string | null;
  valid_until: string | null;
  max_redemptions: number | null;
  max_redemptions_per_customer: number;
  minimum_amount: number | null;
  customer_eligibility: 'ALL' | 'NEW_CUSTOMERS' | 'EXISTING_CUSTOMERS';
  restricted_to_customer_id: string | null;
  /** ACTIVE redemptions. */
  current_redemptions: number;
  /** RESERVED + ACTIVE redemptions: what counts against `max_redemptions`. */
  held_redemptions: number;
}

export type CouponFacts = Pick<
  CouponTerms,
  | 'name'
  | 'discount_type'
  | 'discount_amount'
  | 'duration'
  | 'duration_in_months'
  | 'applies_to_all_products'
  | 'product_ids'
  | 'bonus_trial_days'
  | 'bonus_months'
  | 'active'
>;

export interface ProductFacts {
  id: string;
  name: string;
  price: number;
  interval: string | null;
  interval_count: number;
}

export interface ValidationInput {
  now: Date;
  /** Publishable Key: every failure but ALREADY_USED is reported as PROMO_CODE_INVALID. */
  masked: boolean;
  /** The customer under every name known for them (`customerNames`), the product and amount. */
  request: {
    customerId: string | null;
    externalId: string | null;
    email: string | null;
    productId: string | null;
    amount?: number;
  };
  /** Undefined when no such code exists in the caller's organization and environment. */
  promotionCode?: CodeFacts;
  coupon?: CouponFacts;
  /** The caller's customer: redemptions of this code that count (RESERVED + ACTIVE), and whether they have completed orders. */
  customer: { redemptions: number; hasCompletedOrders: boolean };
  /** The coupon's products as the catalog replica knows them (unknown ones are left out). */
  products: ProductFacts[];
}

/**
 * Checks a promotion code, in this order, and reports the first failure:
 * NOT_FOUND, INACTIVE (code or coupon), NOT_STARTED, EXPIRED, EXHAUSTED, RESTRICTED,
 * NEW_CUSTOMERS_ONLY / EXISTING_CUSTOMERS_ONLY, ALREADY_USED, PRODUCT_MISMATCH, MINIMUM_NOT_MET.
 * Pure: time, counts and products come in with the input.
 */
export function validatePromotionCode(input: ValidationInput): CodeValidation {
  const failure = firstFailure(input);
  if (failure) return invalid(failure, input.masked);
  const code = input.promotionCode!;
  const coupon = input.coupon!;
  const result: CodeValidation = {
    valid: true,
    applies_to_all_products: coupon.applies_to_all_products,
    discount: discountFor(coupon, input.request.amount),
    coupon: {
      name: coupon.name,
      discount_type: coupon.discount_type,
      discount_amount: coupon.discount_amount,
      duration: coupon.duration,
      applies_to_all_products: coupon.applies_to_all_products,
    },
    promotion_code: {
      code: code.code,
      valid_until: code.valid_until,
      max_redemptions: code.max_redemptions,
      current_redemptions: code.current_redemptions,
    },
  };
  if (!coupon.applies_to_all_products) result.applicable_products = applicableProducts(coupon, input.products);
  return result;
}

function firstFailure({ now, request, promotionCode: code, coupon, customer }: ValidationInput): PromoErrorCode | null {
  if (!code || !coupon) return 'PROMO_CODE_NOT_FOUND';
  if (!code.active || !coupon.active) return 'PROMO_CODE_INACTIVE';
  if (code.valid_from !== null && now.getTime() < Date.parse(code.valid_from)) return 'PROMO_CODE_NOT_STARTED';
  if (code.valid_until !== null && now.getTime() >= Date.parse(code.valid_until)) return 'PROMO_CODE_EXPIRED';
  if (code.max_redemptions !== null && code.held_redemptions >= code.max_redemptions) return 'PROMO_CODE_EXHAUSTED';
  const restricted = code.restricted_to_customer_id;
  if (restricted !== null && restricted !== request.customerId && restricted !== request.externalId) {
    return 'PROMO_CODE_RESTRICTED';
  }
  if (code.customer_eligibility === 'NEW_CUSTOMERS' && customer.hasCompletedOrders) {
    return 'PROMO_CODE_NEW_CUSTOMERS_ONLY';
  }
  if (code.customer_eligibility === 'EXISTING_CUSTOMERS' && !customer.hasCompletedOrders) {
    return 'PROMO_CODE_EXISTING_CUSTOMERS_ONLY';
  }
  const identified = request.customerId !== null || request.externalId !== null || request.email !== null;
  if (identified && customer.redemptions >= code.max_redemptions_per_customer) return 'PROMO_CODE_ALREADY_USED';
  if (
    request.productId !== null &&
    !coupon.applies_to_all_products &&
    !coupon.product_ids.includes(request.productId)
  ) {
    return 'PROMO_CODE_PRODUCT_MISMATCH';
  }
  if (request.amount !== undefined && code.minimum_amount !== null && request.amount < code.minimum_amount) {
    return 'PROMO_CODE_MINIMUM_NOT_MET';
  }
  return null;
}

function invalid(code: PromoErrorCode, masked: boolean): CodeValidation {
  const reported: PromoErrorCode = masked && code !== 'PROMO_CODE_ALREADY_USED' ? 'PROMO_CODE_INVALID' : code;
  return { valid: false, error_code: reported, error_message: PROMO_MESSAGES[reported] };
}

function applicableProducts(coupon: CouponFacts, products: ProductFacts[]): ApplicableProduct[] {
  const byId = new Map(products.map((p) => [p.id, p]));
  return coupon.product_ids.flatMap((id) => {
    const p = byId.get(id);
    if (!p) return [];
    return [
      {
        id: p.id,
        name: p.name,
        price: p.price,
        price_after_discount: p.price - discountOf(coupon, p.price),
        interval: p.interval,
        interval_count: p.interval_count,
      },
    ];
  });
}
