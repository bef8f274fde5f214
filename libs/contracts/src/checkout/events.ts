import { z } from 'zod';
import { ChargeTrade } from './charges';
import { CheckoutSession, PaymentInstructions } from './sessions';
import { Environment } from '../events/envelope';
import { MeteredPrice, ProductCredits, ProductInterval, ProductType } from '../catalog/products';
import { RefundCreatedData, RefundFailedData, RefundSucceededData } from './refunds';
import { CouponDiscount } from '../promotions/promotions';

/**
 * Events the checkout service publishes on `checkout.events` that other services consume
 * (promotions: redemptions and completed-order replica; billing later). Defined here ahead of
 * checkout (issue 5) so that both sides build on one schema. Streams: `checkout_session-<id>`
 * and `order-<id>`; `organization` and `environment` are on the envelope; schema version 1.
 */
export const CHECKOUT_TOPIC = 'checkout.events';

/** The product as the session copied it at creation: later catalog changes do not move a sale. */
export const SoldProduct = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string().nullable(),
    type: ProductType,
    price: z.int(),
    interval: ProductInterval.nullable(),
    interval_count: z.int(),
    trial_days: z.int().nullable(),
    credits: ProductCredits.nullable()
      .optional()
      .describe('What the purchase grants, as sold (CREDITS products); absent in events before credits existed'),
    metered_prices: z
      .array(MeteredPrice)
      .nullable()
      .optional()
      .describe("A plan's metered prices, as sold; absent when it has none"),
  })
  .meta({ id: 'SoldProduct' });
export type SoldProduct = z.infer<typeof SoldProduct>;

/** Occurs when a checkout session's payment succeeded and its order exists. */
export const CheckoutSessionCompletedData = z
  .object({
    session_id: z.string(),
    order_id: z.string(),
    customer_id: z
      .string()
      .nullable()
      .describe('The customer billing resolved before the charge (docs/customer-identity.md)'),
    customer_email: z.string().nullable(),
    locale: z
      .enum(['zh-TW', 'en'])
      .nullable()
      .optional()
      .describe(
        "The language the buyer paid in, which their emails are written in: the page's when the merchant chose one, else the buyer's browser's; null: none said (a payment through the API)",
      ),
    external_customer_id: z.string().nullable(),
    product_id: z.string(),
    amount_subtotal: z.int().min(0).describe('TWD before discount'),
    amount_total: z.int().min(0).describe('TWD charged'),
    promotion_code_id: z.string().nullable(),
    redemption_id: z.string().nullable().describe('The redemption reserved for the session; confirmed by this event'),
    discount_amount: z.int().min(0),
    metadata: z.record(z.string(), z.string()).nullable(),
    completed_at: z.iso.datetime().optional(),
    // Added by checkout (issue 5) for billing and notifications; optional so that events
    // written before them (and other producers' test fixtures) still parse.
    organization: z.string().optional(),
    environment: Environment.optional(),
    customer_name: z.string().nullable().optional(),
    mode: z.enum(['PAYMENT', 'SUBSCRIPTION', 'SETUP']).optional(),
    currency: z.literal('TWD').optional(),
    payment_intent_id: z.string().nullable().optional(),
    setup_intent_id: z.string().nullable().optional(),
    einvoice: z.record(z.string(), z.unknown()).nullable().optional().describe('The buyer e-invoice choice'),
    object: CheckoutSession.optional().describe('The session as `GET /checkout/sessions/{id}` shows it once complete'),
    product: SoldProduct.optional().describe('What billing needs to start a subscription, as sold'),
    subscription_id: z
      .string()
      .nullable()
      .optional()
      .describe('SUBSCRIPTION mode: the id billing gives the subscription it starts; null in other modes'),
    test_clock: z
      .string()
      .nullable()
      .optional()
      .describe('Sandbox: the test clock the session was created on; its subscription lives on it'),
    trial_days: z
      .int()
      .min(0)
      .optional()
      .describe('SUBSCRIPTION mode: free days before the first charge (plan and code); nothing was charged when > 0'),
    coupon: CouponDiscount.nullable().optional().describe('The coupon of the redeemed code, for later invoices'),
    payment_method: z
      .object({
        id: z.string().optional().describe('The processor reference (pm_) for later charges'),
        brand: z.string(),
        last4: z.string(),
        exp_month: z.int(),
        exp_year: z.int(),
      })
      .nullable()
      .optional()
      .describe('The card paid with, never its number'),
    charge: ChargeTrade.optional().describe('Who charged it and under what trade; absent when nothing was charged'),
  })
  .meta({ id: 'CheckoutSessionCompletedData' });
export type CheckoutSessionCompletedData = z.infer<typeof CheckoutSessionCompletedData>;

/** Occurs when a checkout session expires (30 minutes) or is abandoned unpaid. */
export const CheckoutSessionExpiredData = z
  .object({
    session_id: z.string(),
    redemption_id: z.string().nullable(),
    order_id: z.string().optional(),
    expired_at: z.iso.datetime().optional(),
    object: CheckoutSession.optional().describe('The session as `GET /checkout/sessions/{id}` shows it once expired'),
  })
  .meta({ id: 'CheckoutSessionExpiredData' });
export type CheckoutSessionExpiredData = z.infer<typeof CheckoutSessionExpiredData>;

/** The refunded order as the public events show it. */
export const RefundedOrder = z
  .object({
    object: z.literal('order'),
    id: z.string().describe('prefix ord_'),
    status: z.literal('REFUNDED'),
    checkout_session_id: z.string(),
    product_id: z.string(),
    amount_total: z.int(),
    amount_refunded: z.int(),
    currency: z.literal('TWD'),
    refund_reason: z
      .string()
      .nullable()
      .describe('duplicate_subscription, or the reason of the refund that completed it (null when none was given)'),
    metadata: z.record(z.string(), z.string()).nullable(),
    refunded_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    livemode: z.boolean(),
  })
  .meta({ id: 'RefundedOrder' });
export type RefundedOrder = z.infer<typeof RefundedOrder>;

/** Occurs when an order is refunded or voided; its redemption, if any, becomes VOIDED. */
export const OrderRefundedData = z
  .object({
    order_id: z.string(),
    redemption_id: z.string().nullable(),
    session_id: z.string().optional(),
    reason: z.string().optional().describe('`duplicate_subscription` when billing found a live one after payment'),
    refunded_at: z.iso.datetime().optional(),
    object: RefundedOrder.optional(),
  })
  .meta({ id: 'OrderRefundedData' });
export type OrderRefundedData = z.infer<typeof OrderRefundedData>;

/** The processors whose pages take ATM and convenience-store payments (docs/payments.md). */
export const AsyncPaymentProcessor = z.enum(['ecpay', 'payuni']);
export type AsyncPaymentProcessor = z.infer<typeof AsyncPaymentProcessor>;

/** Occurs when the processor opened an ATM account or a convenience-store code the buyer will pay. */
export const CheckoutAsyncPaymentPendingData = z
  .object({
    session_id: z.string(),
    attempt_id: z.string(),
    charge_key: z.string().describe("The platform's idempotency key of the payment at the processor"),
    processor: AsyncPaymentProcessor,
    trade_no: z.string().describe("The processor's trade: ECPay's MerchantTradeNo, PAYUNi's MerTradeNo"),
    instructions: PaymentInstructions,
    issued_at: z.iso.datetime(),
    customer_email: z
      .string()
      .nullable()
      .optional()
      .describe('Who pays: the address the merchant gave or the buyer typed (the instructions are emailed to it)'),
    locale: z
      .enum(['zh-TW', 'en'])
      .nullable()
      .optional()
      .describe("The language the buyer paid in: the page's when the merchant chose one, else the buyer's browser's"),
    object: CheckoutSession.optional().describe(
      'The session as `GET /checkout/sessions/{id}` shows it, with the instructions',
    ),
  })
  .meta({ id: 'CheckoutAsyncPaymentPendingData' });
export type CheckoutAsyncPaymentPendingData = z.infer<typeof CheckoutAsyncPaymentPendingData>;

/** Occurs when an ATM or convenience-store payment passed its deadline unpaid; the session expires with it. */
export const CheckoutAsyncPaymentExpiredData = z
  .object({
    session_id: z.string(),
    trade_no: z.string(),
    expired_at: z.iso.datetime(),
    object: CheckoutSession.optional(),
  })
  .meta({ id: 'CheckoutAsyncPaymentExpiredData' });
export type CheckoutAsyncPaymentExpiredData = z.infer<typeof CheckoutAsyncPaymentExpiredData>;

/**
 * Why a payment and the processor disagree: the processor was paid for a checkout that expired
 * first, or under a trade the checkout no longer waited for, or a period of a card plan that no
 * invoice took before the plan was stopped, or a renewal's transfer made after the platform gave
 * up on it at its deadline (money to give back by hand); or a checkout or a renewal recorded a
 * payment the processor does not show as paid, or shows another amount (to check in the
 * processor's site before anything ships).
 */
export const UnmatchedPaymentReason = z.enum([
  'paid_after_expiry',
  'paid_other_trade',
  'not_paid_at_processor',
  'period_not_invoiced',
  'paid_after_deadline',
]);
export type UnmatchedPaymentReason = z.infer<typeof UnmatchedPaymentReason>;

/**
 * A processor and a checkout disagree about a payment (`UnmatchedPaymentReason`): for the
 * operator, once per trade. Internal.
 */
export const CheckoutPaymentUnmatchedData = z
  .object({
    session_id: z.string(),
    order_id: z.string(),
    processor: AsyncPaymentProcessor,
    trade_no: z.string(),
    amount: z.int(),
    reason: UnmatchedPaymentReason,
    detected_at: z.iso.datetime(),
  })
  .meta({ id: 'CheckoutPaymentUnmatchedData' });
export type CheckoutPaymentUnmatchedData = z.infer<typeof CheckoutPaymentUnmatchedData>;

/** A payment the processor took that no checkout recorded, for the operator (`GET .../unmatched_payments`). */
export const UnmatchedPayment = z
  .object({
    object: z.literal('unmatched_payment'),
    id: z.string().describe('<session id>:<trade number>, or <invoice id>:<trade number> for a renewal'),
    checkout_session_id: z.string().nullable().describe('The checkout paid; null for a renewal'),
    order_id: z.string().nullable().describe("The checkout's order; null for a renewal"),
    invoice_id: z.string().nullable().describe('The renewal invoice paid; null for a checkout'),
    processor: AsyncPaymentProcessor,
    trade_no: z.string().describe("The processor's trade (ECPay's MerchantTradeNo, PAYUNi's MerTradeNo)"),
    amount: z.int().describe('TWD the processor says was paid'),
    reason: UnmatchedPaymentReason,
    created_at: z.iso.datetime(),
    livemode: z.boolean(),
  })
  .meta({ id: 'UnmatchedPayment' });
export type UnmatchedPayment = z.infer<typeof UnmatchedPayment>;

export const CHECKOUT_EVENT_SCHEMAS = {
  CheckoutPaymentUnmatched: CheckoutPaymentUnmatchedData,
  CheckoutAsyncPaymentPending: CheckoutAsyncPaymentPendingData,
  CheckoutAsyncPaymentExpired: CheckoutAsyncPaymentExpiredData,
  CheckoutSessionCompleted: CheckoutSessionCompletedData,
  CheckoutSessionExpired: CheckoutSessionExpiredData,
  OrderRefunded: OrderRefundedData,
  RefundCreated: RefundCreatedData,
  RefundSucceeded: RefundSucceededData,
  RefundFailed: RefundFailedData,
} as const;
export type CheckoutEventType = keyof typeof CHECKOUT_EVENT_SCHEMAS;
