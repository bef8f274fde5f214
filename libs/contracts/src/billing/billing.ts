import { z } from 'zod';
import { ApiError, CUSTOMER_ERROR_STATUS, type CustomerErrorCode, ErrorEnvelope } from '../shared/errors';
import { Environment } from '../events/envelope';
import { ChargeTrade, SavedPaymentMethod } from '../checkout/charges';
import { PaymentInstructions } from '../checkout/sessions';
import { CouponDiscount } from '../promotions/promotions';
import { cursorListEnvelope, limitParam, startingAfterParam } from '../shared/list';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import { MeteredPrice, ProductCredits, ProductInterval } from '../catalog/products';
import { TEXT_LIMITS, idText } from '../shared/text';
import { EinvoiceIdParams, EinvoiceList, EinvoiceResource, ListEinvoicesQuery } from './einvoices';

// Billing's public resources, requests and events (issue 6): customers, subscriptions,
// invoices, entitlements. Rules and decisions: services/billing/README.md.

export const CUSTOMER_LIMITS = { name: 255, externalId: 255, metadataKeys: 50, metadataKey: 40, metadataValue: 500 };
/** Spec: external ids hold letters, digits, underscore and hyphen. */
export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9_-]+$/;
/** Spec: cursor pagination of customers and subscriptions. */
export const BILLING_PAGE = { defaultLimit: 10, maxLimit: 100 } as const;

const limits = CUSTOMER_LIMITS;
const timestamp = z.iso.datetime();

export const Metadata = z
  .record(z.string().min(1).max(limits.metadataKey), z.string().max(limits.metadataValue))
  .refine((m) => Object.keys(m).length <= limits.metadataKeys, {
    message: `metadata holds at most ${limits.metadataKeys} keys`,
  })
  .describe(`String keys (1-${limits.metadataKey} characters) to string values (up to ${limits.metadataValue})`);

export const ExternalId = z
  .string()
  .min(1)
  .max(limits.externalId)
  .regex(EXTERNAL_ID_PATTERN, 'external_id may hold letters, digits, underscore and hyphen only');

// ---------------------------------------------------------------- customers

/** Customer endpoints answer with their own codes (spec: Errors > Customer endpoints). */
export const customerError = (code: CustomerErrorCode, message: string, details?: unknown[]) =>
  new ApiError(CUSTOMER_ERROR_STATUS[code], code, message, details);

export const CustomerStatus = z.enum(['ACTIVE', 'BANNED']).meta({ id: 'CustomerStatus' });
export type CustomerStatus = z.infer<typeof CustomerStatus>;

export const Customer = z
  .object({
    object: z.literal('customer'),
    id: z.string().describe('Prefix cus_'),
    email: z.string().describe('Bound to the customer; immutable after creation'),
    name: z.string().nullable().describe('1-255 characters when set'),
    external_id: z.string().nullable().describe("The merchant's own id; unique per organization and environment"),
    email_verified: z.boolean(),
    status: CustomerStatus,
    metadata: z.record(z.string(), z.string()).nullable(),
    test_clock: z
      .string()
      .nullable()
      .default(null)
      .describe(
        'Sandbox: the test clock the customer lives on (made by a checkout session with test_clock); its later subscriptions use it',
      ),
    created_at: timestamp,
    updated_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'Customer' });
export type Customer = z.infer<typeof Customer>;

export const CustomerListItem = Customer.extend({
  subscriptions_count: z.int().min(0).describe('Subscriptions of the customer, in any status'),
  orders_count: z.int().min(0).describe('Completed checkout sessions of the customer'),
}).meta({ id: 'CustomerListItem' });
export type CustomerListItem = z.infer<typeof CustomerListItem>;

export const ProductSummary = z
  .object({ id: z.string(), name: z.string(), slug: z.string().nullable() })
  .meta({ id: 'SubscriptionProductSummary' });
export type ProductSummary = z.infer<typeof ProductSummary>;

export const SubscriptionStatus = z
  .enum(['ACTIVE', 'TRIAL', 'PAST_DUE', 'CANCELED'])
  .meta({ id: 'SubscriptionStatus' });
export type SubscriptionStatus = z.infer<typeof SubscriptionStatus>;
/** A live subscription gives access and blocks a second one to the same product. */
export const LIVE_SUBSCRIPTION_STATUSES: readonly SubscriptionStatus[] = ['ACTIVE', 'TRIAL', 'PAST_DUE'];

export const CustomerSubscriptionSummary = z
  .object({
    id: z.string(),
    status: SubscriptionStatus,
    current_period_start: timestamp,
    current_period_end: timestamp,
    product: ProductSummary,
  })
  .meta({ id: 'CustomerSubscriptionSummary' });
export type CustomerSubscriptionSummary = z.infer<typeof CustomerSubscriptionSummary>;

export const CustomerWithSubscriptions = Customer.extend({
  subscriptions: z.array(CustomerSubscriptionSummary),
}).meta({ id: 'CustomerWithSubscriptions' });
export type CustomerWithSubscriptions = z.infer<typeof CustomerWithSubscriptions>;

export const CustomerList = cursorListEnvelope(CustomerListItem)
  .extend({ next_cursor: z.string().nullable().describe('Pass as starting_after for the next page; null on the last') })
  .meta({ id: 'CustomerList' });
export type CustomerList = z.infer<typeof CustomerList>;

const limit = limitParam(BILLING_PAGE.defaultLimit, BILLING_PAGE.maxLimit);

export const ListCustomersQuery = z
  .object({
    limit,
    starting_after: startingAfterParam('customer'),
    email: z.string().max(TEXT_LIMITS.email).optional().describe('Exact match (case-insensitive)'),
    status: CustomerStatus.optional(),
  })
  .meta({ id: 'ListCustomersQuery' });
export type ListCustomersQuery = z.infer<typeof ListCustomersQuery>;

export const CustomerIdParams = z
  .object({
    id: idText().describe('Customer id, or external id with by_external_id=true'),
  })
  .meta({ id: 'CustomerIdParams' });
export const CustomerExternalIdParams = z.object({ external_id: idText() }).meta({ id: 'CustomerExternalIdParams' });
export const ByExternalIdQuery = z
  .object({
    by_external_id: z.enum(['true', 'false']).optional().describe('`true`: the path id is an external id'),
  })
  .meta({ id: 'ByExternalIdQuery' });

export const UpdateCustomerBody = z
  .object({
    name: z.string().min(1).max(limits.name).optional(),
    external_id: ExternalId.nullable().optional().describe('null unlinks'),
    metadata: Metadata.nullable().optional(),
  })
  .meta({ id: 'UpdateCustomerBody' });
export type UpdateCustomerBody = z.infer<typeof UpdateCustomerBody>;

// ---------------------------------------------------------------- subscriptions

export const Subscription = z
  .object({
    object: z.literal('subscription'),
    id: z.string().describe('Prefix sub_'),
    customer_id: z.string(),
    product: ProductSummary,
    status: SubscriptionStatus,
    price: z.int().min(0).describe('TWD per period'),
    currency: z.literal('TWD'),
    interval: ProductInterval,
    interval_count: z.int().min(1),
    current_period_start: timestamp,
    current_period_end: timestamp,
    trial_end: timestamp.nullable(),
    cancel_at_period_end: z.boolean(),
    canceled_at: timestamp.nullable(),
    checkout_session_id: z.string().nullable().describe('The checkout session that started it'),
    test_clock: z
      .string()
      .nullable()
      .default(null)
      .describe('Sandbox: the test clock (clock_) whose time the subscription lives on; null on real time'),
    billing_cycle_anchor: timestamp
      .nullable()
      .default(null)
      .describe('Periods are counted from it: the start, or the end of a free trial; null on older ones (created_at)'),
    discount: CouponDiscount.extend({
      starts_at: timestamp.describe('The start of the first paid period, from which the duration counts'),
    })
      .nullable()
      .default(null)
      .describe('The coupon of the code redeemed at checkout, applied to invoices by its duration'),
    credit_allowance: ProductCredits.nullable()
      .optional()
      .describe(
        "The credits each paid period grants the customer: the plan's `credits` when it was sold or switched to; null or absent: none (docs/credits.md)",
      ),
    metered_prices: z
      .array(MeteredPrice)
      .nullable()
      .optional()
      .describe(
        "The usage each renewal invoice bills: the plan's `metered_prices` when it was sold or switched to; null or absent: none (docs/usage.md)",
      ),
    usage_since: timestamp
      .nullable()
      .optional()
      .describe(
        "Set when a plan switch started a new period: where the usage the next renewal invoice bills starts (the period the switch ended is billed with it); null or absent: the current period's start (docs/usage.md)",
      ),
    created_at: timestamp,
    updated_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'Subscription' });
export type Subscription = z.infer<typeof Subscription>;

export const SubscriptionList = cursorListEnvelope(Subscription)
  .extend({ subscriptions: z.array(Subscription).describe('The same items as `data`') })
  .meta({ id: 'SubscriptionList' });
export type SubscriptionList = z.infer<typeof SubscriptionList>;

export const ListSubscriptionsQuery = z
  .object({
    limit,
    starting_after: startingAfterParam('subscription'),
    customer_id: idText().optional(),
  })
  .meta({ id: 'ListSubscriptionsQuery' });
export type ListSubscriptionsQuery = z.infer<typeof ListSubscriptionsQuery>;

export const SubscriptionIdParams = z
  .object({ id: idText().describe('Subscription id, prefix sub_') })
  .meta({ id: 'SubscriptionIdParams' });

/**
 * `POST /subscriptions/{id}/cancel`. `at_period_end` true (the default): access to the end of
 * the paid period, then CANCELED; false: CANCELED now, nothing refunded.
 */
export const CancelSubscriptionBody = z
  .strictObject({
    at_period_end: z.boolean().default(true),
    invoice_now: z
      .boolean()
      .default(false)
      .describe(
        "With at_period_end false: bill the period's metered usage not billed yet on a final invoice now, charged as a renewal is (Stripe's invoice_now)",
      ),
  })
  .refine((body) => !(body.invoice_now && body.at_period_end), {
    path: ['invoice_now'],
    message: 'invoice_now bills a cancellation now: send it with at_period_end false',
  })
  .meta({ id: 'CancelSubscriptionBody' });
export type CancelSubscriptionBody = z.infer<typeof CancelSubscriptionBody>;

// ---------------------------------------------------------------- invoices

export const InvoiceStatus = z.enum(['draft', 'open', 'paid', 'void', 'uncollectible']).meta({ id: 'InvoiceStatus' });
export type InvoiceStatus = z.infer<typeof InvoiceStatus>;

/** One charge of an invoice; the lines add up to `subtotal`. */
export const InvoiceLine = z
  .object({
    description: z.string(),
    amount: z.int().describe('TWD'),
    period: z.object({ start: timestamp, end: timestamp }),
    kind: z
      .enum(['subscription', 'proration', 'customer_balance', 'usage'])
      .describe(
        "What the line charges for: the plan; a plan switch's credit for unused days (negative); customer balance applied (negative: credit) or added; a meter's usage over `period`, in arrears",
      ),
    meter: z.string().optional().describe('usage lines: the meter the usage was measured by'),
    quantity: z.int().min(0).optional().describe("usage lines: the meter's quantity over the period"),
  })
  .meta({ id: 'InvoiceLine' });
export type InvoiceLine = z.infer<typeof InvoiceLine>;

export const Invoice = z
  .object({
    object: z.literal('invoice'),
    id: z.string().describe('Prefix in_'),
    number: z.string().describe('Sequential per organization and environment: INV-000001, INV-000002, ...'),
    customer_id: z.string(),
    subscription_id: z.string().nullable(),
    order_id: z.string().nullable().describe('The checkout order it was paid with, for a first period'),
    checkout_session_id: z.string().nullable(),
    status: InvoiceStatus,
    currency: z.literal('TWD'),
    subtotal: z.int().min(0).describe('TWD, the sum of the lines'),
    discount_amount: z.int().min(0),
    total: z.int().min(0).describe('subtotal - discount_amount'),
    amount_paid: z.int().min(0),
    amount_due: z.int().min(0).describe('total - amount_paid'),
    amount_refunded: z
      .int()
      .min(0)
      .default(0)
      .describe('TWD given back so far by refunds of its payment; at most amount_paid'),
    amount_credited: z
      .int()
      .min(0)
      .optional()
      .describe(
        'TWD of its payment given back as credit by a plan switch (the unused time, credited to the customer balance or into a proration); a refund can give back at most amount_paid - amount_refunded - amount_credited; absent on invoices from before it was kept (0)',
      ),
    lines: z.array(InvoiceLine),
    period_start: timestamp,
    period_end: timestamp,
    attempt_count: z.int().min(0).describe('Charges tried'),
    next_payment_attempt: timestamp.nullable(),
    payment_instructions: PaymentInstructions.nullable()
      .optional()
      .describe(
        'An invoice waiting for the customer to pay by transfer: the ATM account or store code issued for its current attempt and its deadline; null or absent otherwise',
      ),
    paid_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'Invoice' });
export type Invoice = z.infer<typeof Invoice>;

export const InvoiceList = cursorListEnvelope(Invoice).meta({ id: 'InvoiceList' });

export const ListInvoicesQuery = z
  .object({
    limit,
    starting_after: startingAfterParam('invoice'),
    customer_id: idText().optional(),
    subscription_id: idText().optional(),
    status: InvoiceStatus.optional(),
  })
  .meta({ id: 'ListInvoicesQuery' });
export type ListInvoicesQuery = z.infer<typeof ListInvoicesQuery>;

export const InvoiceIdParams = z
  .object({ id: idText().describe('Invoice id, prefix in_') })
  .meta({ id: 'InvoiceIdParams' });

// ---------------------------------------------------------------- entitlements

/**
 * At least one identifier; SDKs send every one they have. Precedence customer_id, external_id,
 * email: the first that matches a customer decides, one that matches nobody is ignored, and two
 * that match different customers are 400 `invalid_request`. None matching: empty entitlements.
 */
export const EntitlementsQuery = z
  .object({
    customer_id: idText().min(1).optional().describe('Billing customer id (first in precedence)'),
    external_id: idText().min(1).optional().describe("The merchant's own id for the customer (second)"),
    email: z.string().min(1).max(TEXT_LIMITS.email).optional().describe('Email, matched case-insensitively (third)'),
  })
  .describe(
    'At least one of customer_id, external_id, email; precedence in that order. Identifiers that match ' +
      'nobody are ignored; two that match different customers are 400 invalid_request.',
  )
  .meta({ id: 'EntitlementsQuery' });
export type EntitlementsQuery = z.infer<typeof EntitlementsQuery>;

export const EntitlementStatus = z.enum(['active', 'trialing', 'past_due']);
export type EntitlementStatus = z.infer<typeof EntitlementStatus>;

export const Entitlements = z
  .object({
    entitlements: z
      .array(
        z.object({
          product: z.string().nullable().describe('Product slug'),
          product_id: z.string(),
          status: EntitlementStatus,
          subscription_id: z.string().optional().describe('Secret Key only'),
          current_period_end: timestamp.optional().describe('Secret Key only'),
        }),
      )
      .describe('One per live subscription, newest first; empty when no customer matches or none is live'),
    customer: z
      .object({
        id: z.string(),
        external_id: z.string().nullable(),
        email: z.string().optional().describe('Secret Key only'),
        name: z.string().nullable().optional().describe('Secret Key only'),
      })
      .nullable()
      .describe(
        'The customer matched; null when none matches. Browser SDKs treat null as "not a customer" ' +
          '(recur-tw: check() answers no_customer).',
      ),
    subscription: z
      .object({ id: z.string(), status: SubscriptionStatus, product: ProductSummary, current_period_end: timestamp })
      .nullable()
      .describe("The customer's most recent live subscription; null when no customer matches or none is live"),
    credits: z
      .object({ balance: z.int().min(0).describe('Credits the customer can spend now (docs/credits.md)') })
      .nullable()
      .optional()
      .describe("The customer's credit balance, with either key; null when no customer matches"),
  })
  .meta({ id: 'Entitlements' });
export type Entitlements = z.infer<typeof Entitlements>;

// ---------------------------------------------------------------- events (billing.events)
// Streams `customer-<id>`, `subscription-<id>`, `invoice-<id>`; schema version 1. The public
// ones (BILLING_PUBLIC_EVENTS) carry `object`: the resource as the API shows it after the change.

const Tenant = { organization: z.string(), environment: Environment };

/** Occurs when a customer is created (public: customer.created). */
export const CustomerCreatedData = z
  .object({ customer_id: z.string(), ...Tenant, object: Customer })
  .meta({ id: 'CustomerCreatedData' });
export type CustomerCreatedData = z.infer<typeof CustomerCreatedData>;

/** Occurs when a customer's name, external id or metadata changes (public: customer.updated). */
export const CustomerUpdatedData = z
  .object({
    customer_id: z.string(),
    changes: z.object({
      name: z.string().nullable().optional(),
      external_id: z.string().nullable().optional(),
      metadata: z.record(z.string(), z.string()).nullable().optional(),
    }),
    object: Customer,
  })
  .meta({ id: 'CustomerUpdatedData' });
export type CustomerUpdatedData = z.infer<typeof CustomerUpdatedData>;

/** Internal: a completed checkout session (order) of the customer; counts in `orders_count`. */
export const CustomerOrderRecordedData = z
  .object({ customer_id: z.string(), order_id: z.string(), checkout_session_id: z.string(), recorded_at: timestamp })
  .meta({ id: 'CustomerOrderRecordedData' });
export type CustomerOrderRecordedData = z.infer<typeof CustomerOrderRecordedData>;

/** Internal: a card saved at a paid checkout becomes the customer's card for renewals. */
export const CustomerPaymentMethodSavedData = z
  .object({ customer_id: z.string(), payment_method: SavedPaymentMethod, saved_at: timestamp })
  .meta({ id: 'CustomerPaymentMethodSavedData' });
export type CustomerPaymentMethodSavedData = z.infer<typeof CustomerPaymentMethodSavedData>;

/** Occurs when a subscription starts in TRIAL or ACTIVE (public: subscription.activated). */
export const SubscriptionActivatedData = z
  .object({
    subscription_id: z.string(),
    ...Tenant,
    checkout_session_id: z.string().nullable(),
    order_id: z.string().nullable(),
    object: Subscription,
  })
  .meta({ id: 'SubscriptionActivatedData' });
export type SubscriptionActivatedData = z.infer<typeof SubscriptionActivatedData>;

/** Occurs when a subscription's status, period, plan or cancellation changes (public: subscription.updated). */
export const SubscriptionUpdatedData = z
  .object({
    subscription_id: z.string(),
    object: Subscription,
    previous_attributes: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('A plan switch: the fields that changed, as they were (product, price, interval, ...)'),
  })
  .meta({ id: 'SubscriptionUpdatedData' });
export type SubscriptionUpdatedData = z.infer<typeof SubscriptionUpdatedData>;

/** Occurs when a subscription ends: canceled now, or at the end of its period (public: subscription.canceled). */
export const SubscriptionCanceledData = z
  .object({
    subscription_id: z.string(),
    reason: z
      .enum(['requested', 'period_end', 'payment_failed'])
      .describe('Canceled now on request, at the end of the period, or after the last failed retry'),
    object: Subscription,
  })
  .meta({ id: 'SubscriptionCanceledData' });
export type SubscriptionCanceledData = z.infer<typeof SubscriptionCanceledData>;

/**
 * Internal, for checkout: a SUBSCRIPTION-mode session was paid by a customer who already had a
 * live subscription to the product. No second subscription exists; checkout refunds the order.
 */
export const DuplicateSubscriptionPaidData = z
  .object({
    checkout_session_id: z.string(),
    order_id: z.string(),
    customer_id: z.string(),
    product_id: z.string(),
    amount_total: z.int().min(0),
    existing_subscription_id: z.string(),
    status: SubscriptionStatus.describe('Status of the existing subscription'),
    detected_at: timestamp,
  })
  .meta({ id: 'DuplicateSubscriptionPaidData' });
export type DuplicateSubscriptionPaidData = z.infer<typeof DuplicateSubscriptionPaidData>;

/** Occurs when an invoice is paid (public: invoice.paid). */
export const InvoicePaidData = z
  .object({
    invoice_id: z.string(),
    ...Tenant,
    object: Invoice,
    charge: ChargeTrade.optional().describe(
      'Who charged it and under what trade; absent when nothing was charged (0 TWD, a credit) or the answer named none',
    ),
  })
  .meta({ id: 'InvoicePaidData' });
export type InvoicePaidData = z.infer<typeof InvoicePaidData>;

/** Internal: a renewal opened the invoice of the next period, before charging it. */
export const InvoiceOpenedData = z
  .object({ invoice_id: z.string(), ...Tenant, object: Invoice })
  .meta({ id: 'InvoiceOpenedData' });
export type InvoiceOpenedData = z.infer<typeof InvoiceOpenedData>;

/** Occurs when charging an invoice failed; it stays open until a retry or the end of dunning (public: invoice.payment_failed). */
export const InvoicePaymentFailedData = z
  .object({
    invoice_id: z.string(),
    failure: z.object({ code: z.string(), message: z.string() }),
    object: Invoice,
  })
  .meta({ id: 'InvoicePaymentFailedData' });
export type InvoicePaymentFailedData = z.infer<typeof InvoicePaymentFailedData>;

/**
 * Occurs when an invoice waits for the customer to pay by transfer: the ATM account or store code
 * issued for attempt `attempt`, and its deadline (public: invoice.payment_action_required). Paid,
 * the invoice is paid; unpaid by the deadline, the attempt failed (invoice.payment_failed).
 */
export const InvoicePaymentPendingData = z
  .object({
    invoice_id: z.string(),
    attempt: z.int().min(1),
    payment_instructions: PaymentInstructions,
    object: Invoice,
  })
  .meta({ id: 'InvoicePaymentPendingData' });
export type InvoicePaymentPendingData = z.infer<typeof InvoicePaymentPendingData>;

/** Internal: the last retry failed; nothing more will be tried. */
export const InvoiceMarkedUncollectibleData = z
  .object({ invoice_id: z.string(), object: Invoice })
  .meta({ id: 'InvoiceMarkedUncollectibleData' });
export type InvoiceMarkedUncollectibleData = z.infer<typeof InvoiceMarkedUncollectibleData>;

/**
 * Occurs when a refund of the invoice's payment succeeded, in full or in part (public:
 * invoice.refunded); `object.amount_refunded` is the total so far, the status stays `paid`.
 */
export const InvoiceRefundedData = z
  .object({ invoice_id: z.string(), refund_id: z.string(), amount: z.int().min(1), object: Invoice })
  .meta({ id: 'InvoiceRefundedData' });
export type InvoiceRefundedData = z.infer<typeof InvoiceRefundedData>;

/** Occurs when a renewal is paid and the subscription enters its next period (public: subscription.renewed). */
export const SubscriptionRenewedData = z
  .object({ subscription_id: z.string(), invoice_id: z.string(), object: Subscription })
  .meta({ id: 'SubscriptionRenewedData' });
export type SubscriptionRenewedData = z.infer<typeof SubscriptionRenewedData>;

/** Occurs when a renewal charge fails and the subscription becomes PAST_DUE (public: subscription.past_due). */
export const SubscriptionPastDueData = z
  .object({ subscription_id: z.string(), invoice_id: z.string(), object: Subscription })
  .meta({ id: 'SubscriptionPastDueData' });
export type SubscriptionPastDueData = z.infer<typeof SubscriptionPastDueData>;

/**
 * Occurs 3 days before a trial ends (at once when the trial is shorter), once per trial
 * (public: subscription.trial_will_end).
 */
export const SubscriptionTrialWillEndData = z
  .object({ subscription_id: z.string(), trial_end: timestamp, object: Subscription })
  .meta({ id: 'SubscriptionTrialWillEndData' });
export type SubscriptionTrialWillEndData = z.infer<typeof SubscriptionTrialWillEndData>;

/**
 * Occurs 7 days before a yearly subscription renews (at once when the period has less left), once
 * per period (public: subscription.renewal_upcoming).
 */
export const SubscriptionRenewalUpcomingData = z
  .object({
    subscription_id: z.string(),
    renews_at: timestamp.describe('The end of the current period, when the renewal is charged'),
    object: Subscription,
  })
  .meta({ id: 'SubscriptionRenewalUpcomingData' });
export type SubscriptionRenewalUpcomingData = z.infer<typeof SubscriptionRenewalUpcomingData>;

export const BILLING_TOPIC = 'billing.events';

export const BILLING_EVENT_SCHEMAS = {
  CustomerCreated: CustomerCreatedData,
  CustomerUpdated: CustomerUpdatedData,
  CustomerOrderRecorded: CustomerOrderRecordedData,
  CustomerPaymentMethodSaved: CustomerPaymentMethodSavedData,
  SubscriptionActivated: SubscriptionActivatedData,
  SubscriptionUpdated: SubscriptionUpdatedData,
  SubscriptionCanceled: SubscriptionCanceledData,
  SubscriptionRenewed: SubscriptionRenewedData,
  SubscriptionPastDue: SubscriptionPastDueData,
  SubscriptionTrialWillEnd: SubscriptionTrialWillEndData,
  SubscriptionRenewalUpcoming: SubscriptionRenewalUpcomingData,
  DuplicateSubscriptionPaid: DuplicateSubscriptionPaidData,
  InvoicePaid: InvoicePaidData,
  InvoiceOpened: InvoiceOpenedData,
  InvoicePaymentFailed: InvoicePaymentFailedData,
  InvoicePaymentPending: InvoicePaymentPendingData,
  InvoiceMarkedUncollectible: InvoiceMarkedUncollectibleData,
  InvoiceRefunded: InvoiceRefundedData,
} as const;
export type BillingEventType = keyof typeof BILLING_EVENT_SCHEMAS;

// ---------------------------------------------------------------- OpenAPI

/** Customers (Secret Key only, with the customer endpoints' own error codes) and subscriptions. */
export function registerBillingRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const unauthorized = error('unauthorized: API key invalid, missing or not a Secret Key');
  const invalidRequest = error(
    'invalid_request: bad query or path parameters (details[] name each), malformed JSON, or `email` in the body',
  );
  const customerNotFound = error('resource_not_found: no such customer in this organization and environment');
  const externalIdTaken = error('conflict: the external id belongs to another customer of this environment');
  const invalidBody = error('validation_error: name or external_id format; details[] of {path, message, code}');
  const secret: Array<'secretKey'> = ['secretKey'];
  const tags = ['Customers'];
  const customerRead = {
    200: { description: 'The customer with its subscriptions', schema: CustomerWithSubscriptions },
    400: invalidRequest,
    401: unauthorized,
    404: customerNotFound,
  };
  const customerWrite = {
    200: { description: 'The customer', schema: Customer },
    400: invalidRequest,
    401: unauthorized,
    404: customerNotFound,
    409: externalIdTaken,
    422: invalidBody,
  };
  return registry
    .route({
      method: 'get',
      path: '/customers',
      oauthScope: 'customers:read',
      summary: 'List customers, newest first',
      tags,
      security: secret,
      query: ListCustomersQuery,
      responses: {
        200: { description: 'A page of customers', schema: CustomerList },
        400: invalidRequest,
        401: unauthorized,
      },
    })
    .route({
      method: 'get',
      path: '/customers/entitlements',
      oauthScope: 'customers:read',
      summary:
        "A customer's entitlements, a paywall check: customer_id, external_id, email (precedence in that order); nobody matching is an empty answer. " +
        'A Publishable Key may ask by customer_id or external_id only, and learns only the products and their status',
      tags,
      security: ['secretKey', 'publishableKey'],
      query: EntitlementsQuery,
      responses: {
        200: {
          description: 'Live entitlements and the most recent live subscription; empty and null for nobody',
          schema: Entitlements,
        },
        400: invalidRequest,
        401: unauthorized,
      },
    })
    .route({
      method: 'get',
      path: '/customers/external/{external_id}',
      oauthScope: 'customers:read',
      summary: 'Retrieve a customer by external id',
      tags,
      security: secret,
      params: CustomerExternalIdParams,
      responses: customerRead,
    })
    .route({
      method: 'patch',
      path: '/customers/external/{external_id}',
      summary: 'Update a customer found by external id',
      tags,
      security: secret,
      params: CustomerExternalIdParams,
      body: UpdateCustomerBody,
      responses: customerWrite,
    })
    .route({
      method: 'get',
      path: '/customers/{id}',
      oauthScope: 'customers:read',
      summary: 'Retrieve a customer',
      tags,
      security: secret,
      params: CustomerIdParams,
      query: ByExternalIdQuery,
      responses: customerRead,
    })
    .route({
      method: 'patch',
      path: '/customers/{id}',
      summary: 'Update a customer (name, external_id, metadata; email is immutable)',
      tags,
      security: secret,
      params: CustomerIdParams,
      query: ByExternalIdQuery,
      body: UpdateCustomerBody,
      responses: customerWrite,
    })
    .route({
      method: 'get',
      path: '/subscriptions',
      oauthScope: 'subscriptions:read',
      summary: 'List subscriptions, newest first',
      tags: ['Subscriptions'],
      security: secret,
      query: ListSubscriptionsQuery,
      responses: {
        200: { description: 'A page of subscriptions', schema: SubscriptionList },
        400: invalidParametersResponse,
        401: unauthorized,
      },
    })
    .route({
      method: 'get',
      path: '/subscriptions/{id}',
      oauthScope: 'subscriptions:read',
      summary: 'Retrieve a subscription',
      tags: ['Subscriptions'],
      security: secret,
      params: SubscriptionIdParams,
      responses: {
        200: { description: 'The subscription', schema: Subscription },
        401: unauthorized,
        404: error('not_found: no such subscription'),
      },
    })
    .route({
      method: 'post',
      path: '/subscriptions/{id}/cancel',
      summary: 'Cancel a subscription, at the end of its period (default) or now',
      tags: ['Subscriptions'],
      security: secret,
      params: SubscriptionIdParams,
      body: CancelSubscriptionBody,
      responses: {
        200: { description: 'The subscription: cancel_at_period_end set, or CANCELED', schema: Subscription },
        401: unauthorized,
        404: error('not_found: no such subscription'),
        409: error('conflict: the subscription is canceled already'),
        422: error('validation_error: the body'),
      },
    })
    .route({
      method: 'post',
      path: '/subscriptions/{id}/resume',
      summary: 'Undo a pending end-of-period cancellation',
      tags: ['Subscriptions'],
      security: secret,
      params: SubscriptionIdParams,
      responses: {
        200: { description: 'The subscription, cancel_at_period_end false', schema: Subscription },
        401: unauthorized,
        404: error('not_found: no such subscription'),
        409: error('conflict: the subscription is canceled already'),
      },
    })
    .route({
      method: 'get',
      path: '/invoices',
      summary: 'List invoices, newest first',
      tags: ['Invoices'],
      security: secret,
      query: ListInvoicesQuery,
      responses: {
        200: { description: 'A page of invoices', schema: InvoiceList },
        400: invalidParametersResponse,
        401: unauthorized,
      },
    })
    .route({
      method: 'get',
      path: '/invoices/{id}',
      summary: 'Retrieve an invoice',
      tags: ['Invoices'],
      security: secret,
      params: InvoiceIdParams,
      responses: {
        200: { description: 'The invoice', schema: Invoice },
        400: invalidParametersResponse,
        401: unauthorized,
        404: error('not_found: no such invoice'),
      },
    })
    .route({
      method: 'get',
      path: '/einvoices',
      summary: 'List e-invoices (電子發票), newest first',
      tags: ['E-invoices'],
      security: secret,
      query: ListEinvoicesQuery,
      responses: {
        200: { description: 'A page of e-invoices', schema: EinvoiceList },
        400: invalidParametersResponse,
        401: unauthorized,
      },
    })
    .route({
      method: 'get',
      path: '/einvoices/{id}',
      summary: 'Retrieve an e-invoice',
      tags: ['E-invoices'],
      security: secret,
      params: EinvoiceIdParams,
      responses: {
        200: { description: 'The e-invoice', schema: EinvoiceResource },
        400: invalidParametersResponse,
        401: unauthorized,
        404: error('not_found: no such e-invoice'),
      },
    });
}
