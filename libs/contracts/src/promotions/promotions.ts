import { z } from 'zod';
import { ErrorEnvelope } from '../shared/errors';
import { Environment } from '../events/envelope';
import { cursorListEnvelope, limitParam, startingAfterParam } from '../shared/list';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import { idText } from '../shared/text';

// Coupons (designed after Stripe's; the spec shows none), promotion codes, validation and
// redemptions. Rules and decisions: services/promotions/README.md.

export const PROMOTION_LIMITS = { name: 255, metadataKeys: 50, metadataKey: 40, metadataValue: 500 } as const;

/** 3-20 uppercase letters and digits; validation takes any case and upper-cases it. */
export const PROMOTION_CODE_PATTERN = /^[A-Z0-9]{3,20}$/;

const limits = PROMOTION_LIMITS;
const timestamp = z.iso.datetime();
/** ISO 8601 with `Z` or an offset; stored as UTC. */
const instant = z.iso.datetime({ offset: true });

const Metadata = z
  .record(
    z.string().min(1).max(limits.metadataKey),
    z.string().max(limits.metadataValue, `metadata values are at most ${limits.metadataValue} characters`),
  )
  .refine((m) => Object.keys(m).length <= limits.metadataKeys, {
    message: `metadata holds at most ${limits.metadataKeys} keys`,
  })
  .describe(`String keys (1-${limits.metadataKey} characters) to string values (up to ${limits.metadataValue})`);

// ---------------------------------------------------------------- coupons

export const DiscountType = z.enum(['PERCENTAGE', 'FIXED_AMOUNT', 'FIRST_PERIOD_PRICE']).meta({ id: 'DiscountType' });
export type DiscountType = z.infer<typeof DiscountType>;
export const CouponDuration = z.enum(['once', 'repeating', 'forever']).meta({ id: 'CouponDuration' });
export type CouponDuration = z.infer<typeof CouponDuration>;

const couponField = {
  name: z.string().min(1, { abort: true }).max(limits.name).regex(/\S/, 'name must not be blank'),
  discount_type: DiscountType,
  discount_amount: z
    .int()
    .min(0)
    .describe('PERCENTAGE: 1-100; FIXED_AMOUNT: TWD >= 1; FIRST_PERIOD_PRICE: the first period price in TWD, >= 0'),
  duration: CouponDuration,
  duration_in_months: z.int().min(1).nullable().describe('Required for `repeating`, null otherwise'),
  applies_to_all_products: z.boolean(),
  product_ids: z.array(idText().regex(/^prod_[0-9A-Za-z]+$/, 'product ids start with prod_')).max(100),
  bonus_trial_days: z.int().min(0),
  bonus_months: z.int().min(0),
  active: z.boolean(),
  metadata: Metadata.nullable(),
};

/** The fields of a coupon that never change after creation, with the rules between them. */
export const CouponTerms = z.strictObject(couponField);
export type CouponTerms = z.infer<typeof CouponTerms>;

/** The rules between coupon fields, reported at the offending field's path. */
export function checkCouponRules(c: CouponTerms, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) =>
    ctx.addIssue({ code: 'custom', path: [path], message, input: (c as Record<string, unknown>)[path] });
  if (c.discount_type === 'PERCENTAGE' && (c.discount_amount < 1 || c.discount_amount > 100)) {
    issue('discount_amount', 'a PERCENTAGE discount_amount is 1-100');
  }
  if (c.discount_type === 'FIXED_AMOUNT' && c.discount_amount < 1) {
    issue('discount_amount', 'a FIXED_AMOUNT discount_amount is at least 1 TWD');
  }
  if (c.duration === 'repeating' && c.duration_in_months === null) {
    issue('duration_in_months', 'duration_in_months is required when duration is repeating');
  }
  if (c.duration !== 'repeating' && c.duration_in_months !== null) {
    issue('duration_in_months', 'duration_in_months is only for repeating coupons');
  }
  if (!c.applies_to_all_products && c.product_ids.length === 0) {
    issue('product_ids', 'product_ids must list at least one product when applies_to_all_products is false');
  }
  if (c.applies_to_all_products && c.product_ids.length > 0) {
    issue('product_ids', 'product_ids must be empty when applies_to_all_products is true');
  }
}

const createCouponShape = {
  name: couponField.name,
  discount_type: couponField.discount_type,
  discount_amount: couponField.discount_amount,
  duration: couponField.duration.default('once'),
  duration_in_months: couponField.duration_in_months.default(null),
  applies_to_all_products: couponField.applies_to_all_products.default(true),
  product_ids: couponField.product_ids.default([]),
  bonus_trial_days: couponField.bonus_trial_days.default(0),
  bonus_months: couponField.bonus_months.default(0),
  active: couponField.active.default(true),
  metadata: couponField.metadata.default(null),
};

/** `POST /v1/coupons`. */
export const CreateCouponBody = z
  .strictObject(createCouponShape)
  .superRefine(checkCouponRules)
  .meta({ id: 'CreateCouponBody' });
export type CreateCouponBody = z.infer<typeof CreateCouponBody>;

/** Admin API: `POST /admin/coupons` (the organization comes from the admin path). */
export const AdminCreateCouponBody = z
  .strictObject({ environment: Environment, ...createCouponShape })
  .superRefine(checkCouponRules)
  .meta({ id: 'AdminCreateCouponBody' });

/** `PATCH /v1/coupons/{id}`: only these; every other field is immutable (422 unrecognized_keys). */
export const UpdateCouponBody = z
  .strictObject({ name: couponField.name, active: couponField.active, metadata: couponField.metadata })
  .partial()
  .meta({ id: 'UpdateCouponBody' });
export type UpdateCouponBody = z.infer<typeof UpdateCouponBody>;

export const Coupon = z
  .object({
    object: z.literal('coupon'),
    id: z.string().describe('prefix cpn_'),
    ...couponField,
    created_at: timestamp,
    updated_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'Coupon' });
export type Coupon = z.infer<typeof Coupon>;

export const CouponList = cursorListEnvelope(Coupon).meta({ id: 'CouponList' });

export const ListCouponsQuery = z.object({
  limit: limitParam(20),
  starting_after: startingAfterParam('coupon'),
});
export const CouponIdParams = z.object({ id: idText().describe('Coupon id, prefix cpn_') });

// ---------------------------------------------------------------- promotion codes

export const CustomerEligibility = z.enum(['ALL', 'NEW_CUSTOMERS', 'EXISTING_CUSTOMERS']).meta({
  id: 'CustomerEligibility',
});
export type CustomerEligibility = z.infer<typeof CustomerEligibility>;

const codeField = {
  valid_from: instant.nullable(),
  valid_until: instant.nullable(),
  max_redemptions: z.int().min(1).nullable().describe('Global cap; null is unlimited'),
  max_redemptions_per_customer: z.int().min(1),
  minimum_amount: z.int().min(0).nullable().describe('TWD'),
  customer_eligibility: CustomerEligibility,
  restricted_to_customer_id: idText().min(1).nullable(),
  active: z.boolean(),
  metadata: Metadata.nullable(),
};

/** `valid_until` must be later than `valid_from`; for a new code and for one merged with a change. */
export function checkValidityWindow(
  c: { valid_from?: string | null; valid_until?: string | null },
  ctx: z.RefinementCtx,
): void {
  if (c.valid_from && c.valid_until && Date.parse(c.valid_until) <= Date.parse(c.valid_from)) {
    ctx.addIssue({
      code: 'custom',
      path: ['valid_until'],
      message: 'valid_until must be later than valid_from',
      input: c.valid_until,
    });
  }
}

/** `POST /v1/promotion-codes`. */
export const CreatePromotionCodeBody = z
  .strictObject({
    coupon_id: idText().min(1),
    code: z.string().max(20).regex(PROMOTION_CODE_PATTERN, 'code is 3-20 uppercase letters and digits'),
    valid_from: codeField.valid_from.default(null),
    valid_until: codeField.valid_until.default(null),
    max_redemptions: codeField.max_redemptions.default(null),
    max_redemptions_per_customer: codeField.max_redemptions_per_customer.default(1),
    minimum_amount: codeField.minimum_amount.default(null),
    customer_eligibility: codeField.customer_eligibility.default('ALL'),
    restricted_to_customer_id: codeField.restricted_to_customer_id.default(null),
    active: codeField.active.default(true),
    metadata: codeField.metadata.default(null),
  })
  .superRefine(checkValidityWindow)
  .meta({ id: 'CreatePromotionCodeBody' });
export type CreatePromotionCodeBody = z.infer<typeof CreatePromotionCodeBody>;

/** `PATCH /v1/promotion-codes/{id}`: `code` and `coupon_id` are immutable (422 unrecognized_keys). */
export const UpdatePromotionCodeBody = z
  .strictObject(codeField)
  .partial()
  .superRefine(checkValidityWindow)
  .meta({ id: 'UpdatePromotionCodeBody' });
export type UpdatePromotionCodeBody = z.infer<typeof UpdatePromotionCodeBody>;

export const PromotionCode = z
  .object({
    object: z.literal('promotion_code'),
    id: z.string().describe('prefix promo_'),
    code: z.string(),
    coupon_id: z.string(),
    ...codeField,
    current_redemptions: z.int().describe('Confirmed (ACTIVE) redemptions'),
    created_at: timestamp,
    updated_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'PromotionCode' });
export type PromotionCode = z.infer<typeof PromotionCode>;

export const PromotionCodeResponse = z
  .object({ success: z.literal(true), data: PromotionCode })
  .meta({ id: 'PromotionCodeResponse' });

const offsetPaging = {
  limit: limitParam(20),
  offset: z.coerce.number().int().min(0).default(0).describe('0 or more, default 0'),
};

export const ListPromotionCodesQuery = z.object({
  coupon_id: idText().optional(),
  active: z.enum(['true', 'false']).optional(),
  ...offsetPaging,
});

export const PromotionCodeList = z
  .object({
    success: z.literal(true),
    data: z.object({
      promotion_codes: z.array(PromotionCode),
      total: z.int(),
      limit: z.int(),
      offset: z.int(),
    }),
  })
  .meta({ id: 'PromotionCodeList' });

export const PromotionCodeIdParams = z.object({ id: idText().describe('Promotion code id, prefix promo_') });

// ---------------------------------------------------------------- redemptions

export const RedemptionStatus = z.enum(['ACTIVE', 'VOIDED']).meta({ id: 'RedemptionStatus' });

export const Redemption = z
  .object({
    id: z.string().describe('prefix red_'),
    promotion_code_id: z.string(),
    customer_id: z.string().nullable(),
    order_id: z.string().nullable(),
    discount_amount: z.int(),
    status: RedemptionStatus,
    redeemed_at: timestamp,
  })
  .meta({ id: 'Redemption' });
export type Redemption = z.infer<typeof Redemption>;

export const ListRedemptionsQuery = z.object({
  status: RedemptionStatus.optional(),
  customerId: idText().optional(),
  ...offsetPaging,
});

export const RedemptionList = z
  .object({
    success: z.literal(true),
    data: z.object({
      redemptions: z.array(Redemption),
      total: z.int().describe('Redemptions matching the filters'),
      active_count: z.int().describe('ACTIVE redemptions of the code, whatever the filters'),
      voided_count: z.int().describe('VOIDED redemptions of the code, whatever the filters'),
    }),
    livemode: z.boolean(),
  })
  .meta({ id: 'RedemptionList' });

// ---------------------------------------------------------------- validation

export const PROMO_ERROR_CODES = [
  'PROMO_CODE_NOT_FOUND',
  'PROMO_CODE_INACTIVE',
  'PROMO_CODE_NOT_STARTED',
  'PROMO_CODE_EXPIRED',
  'PROMO_CODE_EXHAUSTED',
  'PROMO_CODE_RESTRICTED',
  'PROMO_CODE_NEW_CUSTOMERS_ONLY',
  'PROMO_CODE_EXISTING_CUSTOMERS_ONLY',
  'PROMO_CODE_ALREADY_USED',
  'PROMO_CODE_PRODUCT_MISMATCH',
  'PROMO_CODE_MINIMUM_NOT_MET',
  'PROMO_CODE_INVALID',
] as const;
export const PromoErrorCode = z.enum(PROMO_ERROR_CODES).meta({ id: 'PromoErrorCode' });
export type PromoErrorCode = z.infer<typeof PromoErrorCode>;

/** `POST /v1/promotion-codes/validate`. */
export const ValidatePromotionCodeBody = z
  .strictObject({
    code: z.string().min(1).max(100).describe('Case-insensitive'),
    external_id: idText().min(1).optional(),
    customer_id: idText().min(1).optional(),
    product_id: idText().min(1).optional(),
    amount: z.int().min(0).optional().describe('Integer TWD; the discount is computed from it'),
  })
  .meta({ id: 'ValidatePromotionCodeBody' });
export type ValidatePromotionCodeBody = z.infer<typeof ValidatePromotionCodeBody>;

export const Discount = z
  .object({
    type: DiscountType,
    amount: z.int().optional().describe('The discount in TWD; only when `amount` was given'),
    discounted_amount: z.int().optional().describe('`amount` after the discount; only when `amount` was given'),
    label: z.string().describe('"20% off", "NT$100 off", "First period NT$1"'),
    bonus_trial_days: z.int(),
    bonus_months: z.int(),
  })
  .meta({ id: 'Discount' });
export type Discount = z.infer<typeof Discount>;

export const ApplicableProduct = z.object({
  id: z.string(),
  name: z.string(),
  price: z.int(),
  price_after_discount: z.int(),
  interval: z.string().nullable(),
  interval_count: z.int(),
});
export type ApplicableProduct = z.infer<typeof ApplicableProduct>;

export const ValidationResult = z
  .object({
    valid: z.boolean(),
    applies_to_all_products: z.boolean().optional(),
    applicable_products: z.array(ApplicableProduct).optional().describe('Only when restricted to products'),
    discount: Discount.optional(),
    coupon: z
      .object({
        name: z.string(),
        discount_type: DiscountType,
        discount_amount: z.int(),
        duration: CouponDuration,
        applies_to_all_products: z.boolean(),
      })
      .optional(),
    promotion_code: z
      .object({
        code: z.string(),
        valid_until: z.string().nullable(),
        max_redemptions: z.int().nullable(),
        current_redemptions: z.int(),
      })
      .optional(),
    error_code: PromoErrorCode.optional(),
    error_message: z.string().optional(),
    livemode: z.boolean(),
  })
  .meta({ id: 'PromotionCodeValidation' });
export type ValidationResult = z.infer<typeof ValidationResult>;

// ---------------------------------------------------------------- internal API (checkout)

/** `POST /internal/promotion-codes/reserve`: validate with Secret semantics and hold a redemption. */
export const ReserveRedemptionBody = z.strictObject({
  code: z.string().min(1).max(100),
  checkout_session_id: idText().min(1),
  amount: z.int().min(0),
  product_id: idText().min(1).optional(),
  customer_id: idText().min(1).optional(),
  external_id: idText().min(1).optional(),
  email: z.string().min(1).max(320).optional(),
});
export type ReserveRedemptionBody = z.infer<typeof ReserveRedemptionBody>;

/** Internal: checkout names the customer who pays for a reserved redemption (limits checked again). */
export const AssignRedemptionBody = z.strictObject({
  customer_id: z.string().min(1).max(255),
  external_id: z.string().min(1).max(255).optional(),
  email: z.string().min(1).max(320).optional(),
});
export type AssignRedemptionBody = z.infer<typeof AssignRedemptionBody>;

/**
 * What a subscription needs of the coupon to discount its later invoices (billing applies it
 * by `duration`: `once`, the first paid invoice; `repeating`, invoices of periods that start
 * within `duration_in_months` of the first paid one; `forever`, every one).
 */
export const CouponDiscount = z
  .object({
    coupon_id: z.string(),
    discount_type: DiscountType,
    discount_amount: z.int().min(0),
    duration: CouponDuration,
    duration_in_months: z.int().min(1).nullable(),
    bonus_months: z
      .int()
      .min(0)
      .optional()
      .describe('Free months after the first paid period (whole billing periods that fit in them); absent: 0'),
  })
  .meta({ id: 'CouponDiscount' });
export type CouponDiscount = z.infer<typeof CouponDiscount>;

/**
 * The one rounding rule of discounts, shared by promotions (checkout prices) and billing
 * (renewal invoices): amounts are integer TWD and a percentage discount is rounded DOWN
 * (floor), in the merchant's favour, so the price after discount is rounded up. A discount is
 * never negative and never more than the amount.
 *
 * - PERCENTAGE p:          discount = floor(amount * p / 100)
 * - FIXED_AMOUNT f:        discount = min(amount, f)
 * - FIRST_PERIOD_PRICE x:  discount = max(0, amount - x)   (the first period costs min(amount, x))
 */
export function discountOf(terms: Pick<CouponDiscount, 'discount_type' | 'discount_amount'>, amount: number): number {
  switch (terms.discount_type) {
    case 'PERCENTAGE':
      return Math.floor((amount * terms.discount_amount) / 100);
    case 'FIXED_AMOUNT':
      return Math.min(amount, terms.discount_amount);
    case 'FIRST_PERIOD_PRICE':
      return Math.max(0, amount - terms.discount_amount);
  }
}

export const ReservedRedemption = z.object({
  redemption_id: z.string(),
  promotion_code_id: z.string(),
  status: z.enum(['RESERVED', 'ACTIVE']),
  discount: Discount,
  amount_after_discount: z.int(),
  coupon: CouponDiscount.optional().describe('For billing to discount later invoices'),
  coupon_name: z.string().describe("The coupon's name, which the hosted checkout page shows beside the code"),
});
export type ReservedRedemption = z.infer<typeof ReservedRedemption>;

// ---------------------------------------------------------------- OpenAPI

export function registerPromotionRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const unauthorized = error('API key invalid, missing or not allowed here');
  const invalid = error('Body failed validation');
  const tags = ['Promotions'];
  const secret: Array<'secretKey'> = ['secretKey'];
  return registry
    .route({
      method: 'post',
      path: '/coupons',
      summary: 'Create a coupon',
      tags,
      security: secret,
      body: CreateCouponBody,
      responses: { 201: { description: 'The coupon', schema: Coupon }, 401: unauthorized, 422: invalid },
    })
    .route({
      method: 'get',
      path: '/coupons',
      summary: 'List coupons, newest first',
      tags,
      security: secret,
      query: ListCouponsQuery,
      responses: {
        200: { description: 'A page of coupons', schema: CouponList },
        400: invalidParametersResponse,
        401: unauthorized,
      },
    })
    .route({
      method: 'get',
      path: '/coupons/{id}',
      summary: 'Retrieve a coupon',
      tags,
      security: secret,
      params: CouponIdParams,
      responses: {
        200: { description: 'The coupon', schema: Coupon },
        401: unauthorized,
        404: error('No such coupon'),
      },
    })
    .route({
      method: 'patch',
      path: '/coupons/{id}',
      summary: 'Update a coupon (name, active, metadata)',
      tags,
      security: secret,
      params: CouponIdParams,
      body: UpdateCouponBody,
      responses: {
        200: { description: 'The coupon', schema: Coupon },
        401: unauthorized,
        404: error('No such coupon'),
        422: invalid,
      },
    })
    .route({
      method: 'post',
      path: '/promotion-codes',
      summary: 'Create a promotion code',
      tags,
      security: secret,
      body: CreatePromotionCodeBody,
      responses: {
        201: { description: 'The promotion code', schema: PromotionCodeResponse },
        401: unauthorized,
        409: error('Code already used in this organization and environment'),
        422: invalid,
      },
    })
    .route({
      method: 'get',
      path: '/promotion-codes',
      summary: 'List promotion codes, newest first',
      tags,
      security: secret,
      query: ListPromotionCodesQuery,
      responses: {
        200: { description: 'A page', schema: PromotionCodeList },
        400: invalidParametersResponse,
        401: unauthorized,
      },
    })
    .route({
      method: 'get',
      path: '/promotion-codes/{id}',
      summary: 'Retrieve a promotion code',
      tags,
      security: secret,
      params: PromotionCodeIdParams,
      responses: {
        200: { description: 'The promotion code', schema: PromotionCodeResponse },
        401: unauthorized,
        404: error('No such promotion code'),
      },
    })
    .route({
      method: 'patch',
      path: '/promotion-codes/{id}',
      summary: 'Update a promotion code',
      tags,
      security: secret,
      params: PromotionCodeIdParams,
      body: UpdatePromotionCodeBody,
      responses: {
        200: { description: 'The promotion code', schema: PromotionCodeResponse },
        401: unauthorized,
        404: error('No such promotion code'),
        422: invalid,
      },
    })
    .route({
      method: 'delete',
      path: '/promotion-codes/{id}',
      summary: 'Deactivate a promotion code (redemptions are kept)',
      tags,
      security: secret,
      params: PromotionCodeIdParams,
      responses: {
        200: { description: 'The deactivated promotion code', schema: PromotionCodeResponse },
        401: unauthorized,
        404: error('No such promotion code'),
      },
    })
    .route({
      method: 'get',
      path: '/promotion-codes/{id}/redemptions',
      summary: "List a promotion code's redemptions",
      tags,
      security: secret,
      params: PromotionCodeIdParams,
      query: ListRedemptionsQuery,
      responses: {
        200: { description: 'Redemptions with counts', schema: RedemptionList },
        400: invalidParametersResponse,
        401: unauthorized,
        404: error('No such promotion code'),
      },
    })
    .route({
      method: 'post',
      path: '/promotion-codes/validate',
      summary: 'Validate a promotion code and compute its discount',
      tags,
      security: ['secretKey', 'publishableKey'],
      body: ValidatePromotionCodeBody,
      responses: {
        200: { description: 'The validation result; `valid: false` also answers 200', schema: ValidationResult },
        400: error('Publishable Key without external_id or customer_id'),
        401: unauthorized,
        422: invalid,
        429: error('Validation rate limit exceeded'),
      },
    });
}

// ---------------------------------------------------------------- events (promotions.events)

/** Occurs when a coupon is created; carries every field. */
export const CouponCreatedData = z
  .object({
    coupon_id: z.string(),
    organization: z.string(),
    environment: Environment,
    ...couponField,
    created_at: timestamp,
  })
  .meta({ id: 'CouponCreatedData' });
export type CouponCreatedData = z.infer<typeof CouponCreatedData>;

/** Occurs when a coupon's name, active flag or metadata change; only the changed fields. */
export const CouponUpdatedData = z
  .object({
    coupon_id: z.string(),
    changes: z.object({ name: couponField.name, active: couponField.active, metadata: couponField.metadata }).partial(),
    updated_at: timestamp,
  })
  .meta({ id: 'CouponUpdatedData' });
export type CouponUpdatedData = z.infer<typeof CouponUpdatedData>;

/** Occurs when a promotion code is created. */
export const PromotionCodeCreatedData = z
  .object({
    promotion_code_id: z.string(),
    organization: z.string(),
    environment: Environment,
    code: z.string(),
    coupon_id: z.string(),
    ...codeField,
    created_at: timestamp,
  })
  .meta({ id: 'PromotionCodeCreatedData' });
export type PromotionCodeCreatedData = z.infer<typeof PromotionCodeCreatedData>;

/** Occurs when a promotion code's settings change (DELETE records `active: false`). */
export const PromotionCodeUpdatedData = z
  .object({ promotion_code_id: z.string(), changes: z.object(codeField).partial(), updated_at: timestamp })
  .meta({ id: 'PromotionCodeUpdatedData' });
export type PromotionCodeUpdatedData = z.infer<typeof PromotionCodeUpdatedData>;

/** Occurs when checkout holds a redemption for a session; it counts against the caps. */
export const RedemptionReservedData = z
  .object({
    promotion_code_id: z.string(),
    redemption_id: z.string(),
    checkout_session_id: z.string(),
    customer_id: z.string().nullable(),
    external_id: z.string().nullable(),
    email: z.string().nullable().optional().describe('Lowercased; absent in events before customer identity'),
    discount_amount: z.int(),
    reserved_at: timestamp,
  })
  .meta({ id: 'RedemptionReservedData' });
export type RedemptionReservedData = z.infer<typeof RedemptionReservedData>;

/** Occurs when the buyer of a reserved redemption is known, before they are charged. */
export const RedemptionAssignedData = z
  .object({
    promotion_code_id: z.string(),
    redemption_id: z.string(),
    customer_id: z.string(),
    external_id: z.string().nullable(),
    email: z.string().nullable(),
    assigned_at: timestamp,
  })
  .meta({ id: 'RedemptionAssignedData' });
export type RedemptionAssignedData = z.infer<typeof RedemptionAssignedData>;

/** Occurs when the session of a reserved redemption completes: the redemption becomes ACTIVE. */
export const PromotionCodeRedeemedData = z
  .object({
    promotion_code_id: z.string(),
    redemption_id: z.string(),
    code: z.string(),
    coupon_id: z.string(),
    checkout_session_id: z.string(),
    order_id: z.string().nullable(),
    customer_id: z.string().nullable(),
    external_id: z.string().nullable(),
    discount_amount: z.int(),
    redeemed_at: timestamp,
    object: Redemption.optional().describe('The redemption as the API shows it, now ACTIVE'),
  })
  .meta({ id: 'PromotionCodeRedeemedData' });
export type PromotionCodeRedeemedData = z.infer<typeof PromotionCodeRedeemedData>;

/** Occurs when a reserved redemption is given back (session expired or abandoned). */
export const RedemptionReleasedData = z
  .object({ promotion_code_id: z.string(), redemption_id: z.string(), released_at: timestamp })
  .meta({ id: 'RedemptionReleasedData' });
export type RedemptionReleasedData = z.infer<typeof RedemptionReleasedData>;

/** Occurs when a redemption is voided (its order refunded); it stops counting against the caps. */
export const RedemptionVoidedData = z
  .object({ promotion_code_id: z.string(), redemption_id: z.string(), voided_at: timestamp })
  .meta({ id: 'RedemptionVoidedData' });
export type RedemptionVoidedData = z.infer<typeof RedemptionVoidedData>;
