import { z } from 'zod';
import { ErrorEnvelope } from '../shared/errors';
import type { OpenApiRegistry } from '../shared/openapi';
import { Discount } from '../promotions/promotions';
import { idText } from '../shared/text';

export const CheckoutMode = z.enum(['PAYMENT', 'SUBSCRIPTION', 'SETUP']).meta({ id: 'CheckoutMode' });
export type CheckoutMode = z.infer<typeof CheckoutMode>;

export const CheckoutSessionStatus = z.enum(['OPEN', 'COMPLETE', 'EXPIRED']).meta({ id: 'CheckoutSessionStatus' });
export type CheckoutSessionStatus = z.infer<typeof CheckoutSessionStatus>;

/**
 * The buyer's electronic-invoice choice (Taiwan). The spec names the field only; the shape
 * follows the MOF e-invoice carriers. Formats (tax-id check digit, barcode, certificate,
 * donation code) are checked by checkout and answer 422 with the field's path.
 */
export const Einvoice = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z
        .literal('MEMBER')
        .describe("The e-invoice provider's member carrier, found by the buyer's email (the default)"),
    }),
    z.strictObject({
      type: z.literal('B2B').describe('Company invoice'),
      tax_id: z.string().max(8).describe('統一編號: 8 digits with a valid check digit'),
      company_name: z.string().min(1).max(255).optional(),
    }),
    z.strictObject({
      type: z.literal('MOBILE_BARCODE'),
      carrier: z.string().max(8).describe('"/" followed by 7 of 0-9 A-Z . + -'),
    }),
    z.strictObject({
      type: z.literal('CITIZEN_CERTIFICATE'),
      carrier: z.string().max(16).describe('2 uppercase letters followed by 14 digits'),
    }),
    z.strictObject({
      type: z.literal('DONATION'),
      donation_code: z.string().max(7).describe('3-7 digits'),
    }),
  ])
  .meta({ id: 'Einvoice' });
export type Einvoice = z.infer<typeof Einvoice>;

export const CHECKOUT_METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 } as const;

const CheckoutMetadata = z
  .record(
    z.string().min(1).max(CHECKOUT_METADATA_LIMITS.keyLength),
    z.string().max(CHECKOUT_METADATA_LIMITS.valueLength),
  )
  .refine((m) => Object.keys(m).length <= CHECKOUT_METADATA_LIMITS.keys, {
    message: `at most ${CHECKOUT_METADATA_LIMITS.keys} keys`,
  });

/**
 * `POST /checkout/sessions`, after the legacy camelCase names were turned into snake_case
 * (`normalizeCheckoutSessionBody`). URL rules that depend on the environment are checked by
 * checkout, not here.
 */
export const CreateCheckoutSessionFields = z.strictObject({
  product_id: idText().min(1).optional(),
  product_slug: idText().min(1).optional(),
  success_url: z.string().min(1).max(2048).describe('HTTPS; may contain {CHECKOUT_SESSION_ID}'),
  cancel_url: z.string().min(1).max(2048).describe('HTTPS'),
  mode: CheckoutMode.optional().describe('Derived from the product type when omitted'),
  customer_email: z.email().max(255).optional(),
  customer_name: z.string().trim().min(1).max(255).optional(),
  external_customer_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ and - only')
    .max(255)
    .optional(),
  customer_id: z
    .string()
    .regex(/^cus_[A-Za-z0-9]+$/, 'a customer id (cus_...)')
    .max(255)
    .optional()
    .describe('An existing customer (Secret Key only); the session sells to them'),
  test_clock: z
    .string()
    .regex(/^clock_[A-Za-z0-9]+$/, 'a test clock id (clock_...)')
    .max(255)
    .optional()
    .describe('Sandbox, Secret Key only: the subscription it starts lives on this test clock'),
  promotion_code: z.string().min(1).max(100).optional(),
  collect_payment_method: z.enum(['always', 'if_required']).default('always'),
  metadata: CheckoutMetadata.optional().describe('Secret Key only'),
  einvoice: Einvoice.optional(),
  locale: z
    .enum(['zh-TW', 'en'])
    .optional()
    .describe("The hosted page's language; else the buyer's browser language (Accept-Language)"),
});

export const exactlyOneProduct = {
  check: (b: { product_id?: string; product_slug?: string }) =>
    (b.product_id === undefined) !== (b.product_slug === undefined),
  params: { message: 'exactly one of product_id and product_slug is required', path: ['product_id'] },
};

export const CreateCheckoutSessionBody = CreateCheckoutSessionFields.extend({
  allow_promotion_codes: z
    .boolean()
    .default(false)
    .describe('The hosted page offers a field for a promotion code while none is applied; refused in SETUP mode.'),
})
  .refine(exactlyOneProduct.check, exactlyOneProduct.params)
  .meta({ id: 'CreateCheckoutSessionBody' });
export type CreateCheckoutSessionBody = z.infer<typeof CreateCheckoutSessionBody>;

/** Legacy camelCase request names and the snake_case name each one stands for. */
export const CHECKOUT_SESSION_ALIASES = {
  productId: 'product_id',
  productSlug: 'product_slug',
  successUrl: 'success_url',
  cancelUrl: 'cancel_url',
  customerEmail: 'customer_email',
  customerName: 'customer_name',
  externalCustomerId: 'external_customer_id',
  customerId: 'customer_id',
  testClock: 'test_clock',
  promotionCode: 'promotion_code',
  allowPromotionCodes: 'allow_promotion_codes',
  collectPaymentMethod: 'collect_payment_method',
} as const;

/**
 * Moves camelCase names to their snake_case ones. Both given with different values is a
 * conflict: returns the paths (snake_case) for a 422; both given equal is accepted.
 */
export function normalizeCheckoutSessionBody(body: unknown): { body: unknown; conflicts: string[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { body, conflicts: [] };
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  const conflicts: string[] = [];
  for (const [camel, snake] of Object.entries(CHECKOUT_SESSION_ALIASES)) {
    if (!(camel in out)) continue;
    const value = out[camel];
    delete out[camel];
    if (snake in out && JSON.stringify(out[snake]) !== JSON.stringify(value)) conflicts.push(snake);
    else out[snake] = value;
  }
  return { body: out, conflicts };
}

export const CheckoutSessionCreated = z
  .object({
    object: z.literal('checkout.session'),
    id: z.string().describe('prefix cs_'),
    url: z.string().describe('Hosted checkout page'),
    expires_at: z.iso.datetime().describe('30 minutes after creation'),
    amount: z.int().describe('TWD after discount; 0 in SETUP mode'),
    requires_payment_method: z.boolean(),
    client_secret: z.string().describe('<pi_ or seti_ id>_secret_<random>'),
    discount: Discount.nullable(),
    einvoice_enabled: z.boolean(),
    livemode: z.boolean(),
  })
  .meta({ id: 'CheckoutSessionCreated' });
export type CheckoutSessionCreated = z.infer<typeof CheckoutSessionCreated>;

/**
 * How a buyer pays an ATM or convenience-store payment the processor opened: the account or
 * code (or the page where the buyer gets them), the amount and the deadline (Taiwan time shown
 * on the page; ISO here).
 */
export const PaymentInstructions = z
  .object({
    type: z
      .enum(['atm', 'cvs'])
      .describe('atm: a virtual bank account (虛擬帳號); cvs: a convenience-store payment code (超商代碼)'),
    bank_code: z.string().nullable().describe('atm: the bank code to transfer to'),
    account: z.string().nullable().describe('atm: the virtual account number'),
    payment_code: z.string().nullable().describe('cvs: the code to pay at a store kiosk or counter'),
    amount: z.int().describe('TWD to pay, exactly'),
    expires_at: z.iso
      .datetime()
      .describe("Unpaid by then, the payment expires: a checkout expires, an invoice's attempt fails"),
    hosted_instructions_url: z
      .string()
      .nullish()
      .describe(
        'A page where the buyer gets the account or code: ECPay issues them only on its own page, with the buyer, so an invoice paid through ECPay shows this link and no account or code until the buyer has opened it',
      ),
  })
  .meta({ id: 'PaymentInstructions' });
export type PaymentInstructions = z.infer<typeof PaymentInstructions>;

export const CheckoutSession = z
  .object({
    object: z.literal('checkout.session'),
    id: z.string(),
    status: CheckoutSessionStatus,
    mode: CheckoutMode,
    customer_id: z
      .string()
      .nullable()
      .describe('The customer (cus_): known at creation for a returning buyer, always once paid'),
    customer_email: z.string().nullable(),
    customer_name: z.string().nullable(),
    external_customer_id: z.string().nullable(),
    order_id: z.string(),
    subscription_id: z
      .string()
      .nullable()
      .describe(
        'SUBSCRIPTION mode, once paid: the subscription billing starts (null again if it refunded a duplicate)',
      ),
    payment_intent_id: z.string().nullable(),
    setup_intent_id: z.string().nullable(),
    amount_subtotal: z.int(),
    amount_total: z.int(),
    currency: z.literal('TWD'),
    discount: Discount.nullable(),
    allow_promotion_codes: z
      .boolean()
      .default(false)
      .describe(
        'The hosted page offers a field for a promotion code while none is applied; absent from sessions made before it existed (false)',
      ),
    product: z.object({ id: z.string(), name: z.string() }),
    metadata: z.record(z.string(), z.string()).nullable(),
    expires_at: z.iso.datetime(),
    created_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
    payment_instructions: PaymentInstructions.nullable()
      .optional()
      .describe(
        'Present only while an ATM or convenience-store payment waits to be paid (checkout.async_payment_pending)',
      ),
    livemode: z.boolean(),
  })
  .meta({ id: 'CheckoutSession' });
export type CheckoutSession = z.infer<typeof CheckoutSession>;

export const CheckoutSessionIdParams = z.object({ id: idText().describe('prefix cs_') });

/** The hosted page's pay call: `POST /checkout/{session_id}/pay` (the session id is the capability). */
export const PayCheckoutSessionBody = z
  .strictObject({
    email: z.email().max(255).optional(),
    name: z.string().trim().min(1).max(255).optional(),
    card_number: z
      .string()
      .max(23)
      .regex(/^[0-9 ]{12,23}$/, 'card number digits')
      .optional(),
    exp: z
      .string()
      .max(16)
      .regex(/^(0[1-9]|1[0-2])\s*\/\s*([0-9]{2})$/, 'MM/YY')
      .optional(),
    cvc: z
      .string()
      .max(4)
      .regex(/^[0-9]{3,4}$/, '3 or 4 digits')
      .optional(),
    challenge: z.enum(['pass', 'fail']).optional().describe('Answer to a 3-D Secure challenge'),
  })
  .meta({ id: 'PayCheckoutSessionBody' });
export type PayCheckoutSessionBody = z.infer<typeof PayCheckoutSessionBody>;

/** The public checkout-session endpoints (spec: Checkout sessions), under the /v1 server URL. */
export function registerCheckoutRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  return registry
    .route({
      method: 'post',
      path: '/checkout/sessions',
      summary: 'Create a checkout session',
      tags: ['Checkout'],
      security: ['secretKey', 'publishableKey'],
      body: CreateCheckoutSessionBody,
      responses: {
        201: { description: 'The session, its hosted page and amount', schema: CheckoutSessionCreated },
        400: error('Malformed JSON, or metadata with a Publishable Key'),
        401: error('API key invalid or missing'),
        404: error('Product absent, inactive or of another organization'),
        409: error('Conflict'),
        422: error('Body validation failed, mode mismatch, e-invoice format, promotion code refused'),
      },
    })
    .route({
      method: 'get',
      path: '/checkout/sessions/{id}',
      summary: 'Retrieve a checkout session',
      tags: ['Checkout'],
      security: ['secretKey', 'publishableKey'],
      params: CheckoutSessionIdParams,
      responses: {
        200: { description: 'The session', schema: CheckoutSession },
        401: error('API key invalid or missing'),
        404: error('No such session in this organization and environment'),
      },
    });
}
