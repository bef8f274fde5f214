import { z } from 'zod';
import { CheckoutMode, CreateCheckoutSessionFields, Einvoice, exactlyOneProduct } from './sessions';
import { ErrorEnvelope } from '../shared/errors';
import type { OpenApiRegistry } from '../shared/openapi';
import { Discount, DiscountType } from '../promotions/promotions';
import { idText } from '../shared/text';

/**
 * Embedded checkouts (docs/embedded-checkout.md): a checkout session with `ui_mode`
 * `embedded`, paid on the merchant's own page through the payment provider's card form, read
 * and paid with its `client_secret`. Request bodies take snake_case and the camelCase names the
 * recur-tw SDK sends (`productId`, `customerEmail`, ...), as session bodies do.
 */
export const CreateCheckoutBody = CreateCheckoutSessionFields.extend({
  success_url: z
    .string()
    .min(1)
    .max(2048)
    .optional()
    .describe('Optional: the page completes in place; HTTPS; may contain {CHECKOUT_SESSION_ID}'),
  cancel_url: z.string().min(1).max(2048).optional().describe('Optional; HTTPS'),
})
  .refine(exactlyOneProduct.check, exactlyOneProduct.params)
  .meta({ id: 'CreateCheckoutBody' });
export type CreateCheckoutBody = z.infer<typeof CreateCheckoutBody>;

export const CheckoutIdParams = z.object({ id: idText().describe('prefix cs_') });
export type CheckoutIdParams = z.infer<typeof CheckoutIdParams>;

const clientSecret = z.string().min(1).max(255);

export const ClientSecretQuery = z
  .object({
    client_secret: clientSecret.optional().describe("The checkout's client_secret; required with a Publishable Key"),
  })
  .meta({ id: 'ClientSecretQuery' });
export type ClientSecretQuery = z.infer<typeof ClientSecretQuery>;

/** `POST /checkouts/{id}/pay`: the card comes from the provider's card form, never in this body. */
export const PayCheckoutBody = z
  .strictObject({
    client_secret: clientSecret.optional(),
    credit_token: clientSecret
      .optional()
      .describe("The SDK posts the checkout's credit_token (its client_secret) back here"),
    timestamp: z
      .union([z.string().max(64), z.number()])
      .optional()
      .describe('Sent by the SDK; ignored'),
    email: z.email().max(255).optional().describe('When the checkout was created without customer_email'),
    name: z.string().trim().min(1).max(255).optional(),
    einvoice: Einvoice.optional().describe(
      "The buyer's e-invoice choice, in place of one given at creation; a bad tax-id check digit or malformed carrier answers 422 and nothing is charged",
    ),
  })
  .meta({ id: 'PayCheckoutBody' });
export type PayCheckoutBody = z.infer<typeof PayCheckoutBody>;

export const ApplyPromotionCodeBody = z
  .strictObject({ code: z.string().min(1).max(100), client_secret: clientSecret.optional() })
  .meta({ id: 'ApplyPromotionCodeBody' });
export type ApplyPromotionCodeBody = z.infer<typeof ApplyPromotionCodeBody>;

/** The embedded checkout's own status, in the words the SDK polls for. */
export const EmbeddedCheckoutStatus = z
  .enum(['PENDING', 'SUCCEEDED', 'CANCELED'])
  .describe('PENDING while open; SUCCEEDED once paid (session COMPLETE); CANCELED once expired')
  .meta({ id: 'EmbeddedCheckoutStatus' });
export type EmbeddedCheckoutStatus = z.infer<typeof EmbeddedCheckoutStatus>;

export const EmbeddedCheckout = z
  .object({
    object: z.literal('checkout'),
    id: z.string().describe('prefix cs_: the checkout session it is'),
    ui_mode: z.literal('embedded'),
    status: EmbeddedCheckoutStatus,
    session_status: z.enum(['OPEN', 'COMPLETE', 'EXPIRED']),
    mode: CheckoutMode,
    product_id: z.string(),
    product_type: z.string(),
    amount: z.int().describe('TWD charged today, after discount; 0 when a trial or SETUP saves the card only'),
    amount_subtotal: z.int(),
    discount_amount: z.int(),
    currency: z.literal('TWD'),
    trial_days: z.int(),
    requires_payment_method: z.boolean(),
    discount: Discount.nullable(),
    promotion_code: z.string().nullable(),
    customer_id: z.string().nullable(),
    customer_email: z.string().nullable(),
    customer_name: z.string().nullable(),
    external_customer_id: z.string().nullable(),
    order_id: z.string(),
    subscription_id: z.string().nullable(),
    payment_intent_id: z.string().nullable(),
    setup_intent_id: z.string().nullable(),
    client_secret: z.string(),
    expires_at: z.iso.datetime(),
    created_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
    livemode: z.boolean(),
  })
  .meta({ id: 'EmbeddedCheckout' });
export type EmbeddedCheckout = z.infer<typeof EmbeddedCheckout>;

export const EmbeddedCheckoutProduct = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.string(),
    price: z.int(),
    interval: z.string().nullable(),
    interval_count: z.int(),
    trial_days: z.int().nullable(),
  })
  .meta({ id: 'EmbeddedCheckoutProduct' });

/** Every embedded-checkout answer: the checkout, its product, and what the page's card form needs. */
export const EmbeddedCheckoutAnswer = z
  .object({
    object: z.literal('checkout'),
    checkout: EmbeddedCheckout,
    product: EmbeddedCheckoutProduct,
    client_secret: z.string().describe('Reads and pays this checkout only'),
    sdk_token: z.string().describe("The payment provider's card-form session for this checkout"),
    sdk_timestamp: z.string().describe('When the card-form session began, Unix seconds'),
    credit_token: z.string().describe('The SDK posts it back when paying; the client_secret'),
    card_form_script: z.string().describe("URL of the payment provider's card-form script (sandbox: the simulator's)"),
    livemode: z.boolean(),
  })
  .meta({ id: 'EmbeddedCheckoutAnswer' });
export type EmbeddedCheckoutAnswer = z.infer<typeof EmbeddedCheckoutAnswer>;

export const PaidCheckoutAnswer = EmbeddedCheckoutAnswer.extend({
  success: z.boolean(),
  subscription: z
    .object({ id: z.string(), status: z.string(), billing_period: z.string().nullable() })
    .nullable()
    .describe('SUBSCRIPTION mode: the subscription the payment starts (billing creates it)'),
  charge: z.object({ id: z.string(), status: z.literal('SUCCEEDED'), amount: z.int() }).nullable(),
  payment_intent: z.object({ id: z.string() }).nullable(),
  redirect_url: z
    .string()
    .nullable()
    .describe("success_url with the id filled, when one was given; with `requires3D`, the bank's 3-D Secure page"),
  requires3D: z
    .literal(true)
    .optional()
    .describe(
      "The card's bank asks for 3-D Secure (PAYUNi): `success` is false, nothing is charged yet; send the buyer to `redirect_url` and read the checkout's status until it is SUCCEEDED. Spelled as the recur-tw SDK reads it",
    ),
}).meta({ id: 'PaidCheckoutAnswer' });
export type PaidCheckoutAnswer = z.infer<typeof PaidCheckoutAnswer>;

/**
 * The applied code as the recur-tw SDK's coupon box reads it (0.11): camelCase, at the top of the
 * coupon answers. The box shows `couponName (code)`, `-NT$ discountAmount` and a line made from
 * the type, duration and product; it takes the new total as the created amount less `discountAmount`.
 */
export const SdkCouponDiscount = z
  .object({
    code: z.string(),
    couponName: z.string().nullable(),
    discountType: DiscountType,
    discountAmount: z.int().describe('TWD off what is charged today'),
    duration: z.enum(['ONCE', 'REPEATING', 'FOREVER']),
    durationMonths: z.int().nullable(),
    bonusTrialDays: z.int(),
    bonusMonths: z.int(),
    productInterval: z.string().nullable(),
    productIntervalCount: z.int(),
    productPrice: z.int(),
  })
  .meta({ id: 'SdkCouponDiscount' });
export type SdkCouponDiscount = z.infer<typeof SdkCouponDiscount>;

export const CouponAnswer = EmbeddedCheckoutAnswer.extend({
  discount: SdkCouponDiscount.nullable().describe("The applied code in the SDK's words; null once removed"),
}).meta({ id: 'CouponAnswer' });
export type CouponAnswer = z.infer<typeof CouponAnswer>;

export function registerEmbeddedCheckoutRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const both: Array<'secretKey' | 'publishableKey'> = ['secretKey', 'publishableKey'];
  const tags = ['Embedded checkout'];
  const read = {
    200: { description: 'The checkout', schema: EmbeddedCheckoutAnswer },
    400: error('Bad parameters'),
    401: error('API key invalid or missing'),
    404: error('No such checkout, or a client_secret that is not its own'),
  };
  return registry
    .route({
      method: 'post',
      path: '/checkouts',
      summary: 'Create an embedded checkout (a checkout session with ui_mode embedded)',
      tags,
      security: both,
      body: CreateCheckoutBody,
      responses: {
        201: { description: 'The checkout with its client_secret and card-form token', schema: EmbeddedCheckoutAnswer },
        400: error('Malformed JSON, or metadata with a Publishable Key'),
        401: error('API key invalid or missing'),
        404: error('Product absent, inactive or of another organization'),
        409: error('The customer already has a live subscription to the product'),
        422: error('Body validation failed, promotion code refused'),
      },
    })
    .route({
      method: 'get',
      path: '/checkouts/{id}',
      summary: 'Retrieve an embedded checkout (client_secret required with a Publishable Key)',
      tags,
      security: both,
      params: CheckoutIdParams,
      query: ClientSecretQuery,
      responses: read,
    })
    .route({
      method: 'get',
      path: '/checkouts/{id}/status',
      summary: "An embedded checkout's status, for polling",
      tags,
      security: both,
      params: CheckoutIdParams,
      query: ClientSecretQuery,
      responses: read,
    })
    .route({
      method: 'post',
      path: '/checkouts/{id}/pay',
      summary: 'Pay an embedded checkout with the card entered in its card form',
      tags,
      security: both,
      params: CheckoutIdParams,
      body: PayCheckoutBody,
      responses: {
        200: {
          description: 'Paid: the same order, subscription and checkout.completed as a hosted checkout',
          schema: PaidCheckoutAnswer,
        },
        401: error('API key invalid or missing'),
        402: error('Declined; the checkout stays open for another card'),
        404: error('No such checkout, or a client_secret that is not its own'),
        409: error('Paid already, expired, or a payment under way'),
        422: error('No card entered in the card form, or email missing'),
      },
    })
    .route({
      method: 'post',
      path: '/checkouts/{id}/coupon',
      summary: 'Apply a promotion code to an open embedded checkout',
      tags,
      security: both,
      params: CheckoutIdParams,
      body: ApplyPromotionCodeBody,
      responses: {
        200: { description: 'The checkout with its new amount and discount', schema: CouponAnswer },
        401: error('API key invalid or missing'),
        404: error('No such checkout, or a client_secret that is not its own'),
        409: error('Paid already, expired, or a payment under way'),
        422: error('Promotion code refused'),
      },
    })
    .route({
      method: 'delete',
      path: '/checkouts/{id}/coupon',
      summary: 'Remove the promotion code of an open embedded checkout',
      tags,
      security: both,
      params: CheckoutIdParams,
      query: ClientSecretQuery,
      responses: {
        200: { description: 'The checkout at its full price', schema: CouponAnswer },
        401: error('API key invalid or missing'),
        404: error('No such checkout, or a client_secret that is not its own'),
        409: error('Paid already, expired, or a payment under way'),
      },
    });
}
