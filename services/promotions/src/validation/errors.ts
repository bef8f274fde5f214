import { ApiError, type PromoErrorCode } from '@billing/contracts';

/** The message each validation error code carries with a Secret Key. */
export const PROMO_MESSAGES: Record<PromoErrorCode, string> = {
  PROMO_CODE_NOT_FOUND: 'This promotion code does not exist',
  PROMO_CODE_INACTIVE: 'This promotion code is not active',
  PROMO_CODE_NOT_STARTED: 'This promotion code is not valid yet',
  PROMO_CODE_EXPIRED: 'This promotion code has expired',
  PROMO_CODE_EXHAUSTED: 'This promotion code has reached its redemption limit',
  PROMO_CODE_RESTRICTED: 'This promotion code is restricted to another customer',
  PROMO_CODE_NEW_CUSTOMERS_ONLY: 'This promotion code is for new customers only',
  PROMO_CODE_EXISTING_CUSTOMERS_ONLY: 'This promotion code is for existing customers only',
  PROMO_CODE_ALREADY_USED: 'This customer has already used this promotion code',
  PROMO_CODE_PRODUCT_MISMATCH: 'This promotion code does not apply to this product',
  PROMO_CODE_MINIMUM_NOT_MET: 'The amount does not reach the minimum of this promotion code',
  PROMO_CODE_INVALID: 'This promotion code is not valid',
};

/** Cap failures are conflicts with other redemptions (409); every other failure is 422. */
const CONFLICTS: ReadonlySet<PromoErrorCode> = new Set(['PROMO_CODE_EXHAUSTED', 'PROMO_CODE_ALREADY_USED']);

/** The internal reserve API's error: the validation error code in the spec's envelope. */
export function promoCodeError(code: PromoErrorCode, message = PROMO_MESSAGES[code]): ApiError {
  return new ApiError(CONFLICTS.has(code) ? 409 : 422, code, message);
}
