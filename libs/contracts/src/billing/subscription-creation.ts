import { z } from 'zod';
import { ExternalId, ProductSummary, Subscription } from './billing';
import { ErrorEnvelope } from '../shared/errors';
import { type OpenApiRegistry } from '../shared/openapi';
import { ProductInterval } from '../catalog/products';
import { TEXT_LIMITS, idText } from '../shared/text';

// Subscriptions created without a hosted page (issue 14, part 5; designed after Stripe's
// `POST /v1/subscriptions` with `payment_behavior: default_incomplete`). Rules:
// docs/plan-switching.md, "Creating a subscription directly".

const timestamp = z.iso.datetime();

/** The checkout session metadata key that names the subscription a direct creation reserved. */
export const DIRECT_SUBSCRIPTION_METADATA_KEY = 'billing_subscription_id';

export const CreateSubscriptionBody = z
  .strictObject({
    customer_id: idText().min(1).optional().describe('First in precedence'),
    external_customer_id: ExternalId.optional().describe("The merchant's own id for the customer (second)"),
    customer_email: z
      .email()
      .max(TEXT_LIMITS.email)
      .optional()
      .describe('Third: finds the customer, or the hosted page makes one when the buyer pays'),
    product_id: idText().min(1),
    promotion_code: z
      .string()
      .min(1)
      .max(20)
      .optional()
      .describe('Applied on the hosted page (the subscription starts INCOMPLETE)'),
    trial_days: z.int().min(0).max(730).optional().describe("Free days before the first charge; default the plan's"),
    success_url: z.url().max(2048).optional().describe('Where the hosted page sends the buyer after paying'),
    cancel_url: z.url().max(2048).optional(),
  })
  .refine((b) => b.customer_id ?? b.external_customer_id ?? b.customer_email, {
    message: 'one of customer_id, external_customer_id, customer_email is required',
    path: ['customer_id'],
  })
  .meta({ id: 'CreateSubscriptionBody' });
export type CreateSubscriptionBody = z.infer<typeof CreateSubscriptionBody>;

/** A subscription waiting for the buyer: pay on the hosted page (`url`), or `complete` it. */
export const IncompleteSubscription = z
  .object({
    object: z.literal('subscription'),
    id: z.string().describe('Prefix sub_: the id the subscription will have'),
    status: z.literal('INCOMPLETE'),
    customer_id: z.string().nullable().describe('null until the buyer pays, for a new email'),
    customer_email: z.string(),
    product: ProductSummary,
    price: z.int(),
    currency: z.literal('TWD'),
    interval: ProductInterval,
    interval_count: z.int(),
    checkout_session_id: z.string(),
    url: z.string().describe('The hosted page where the buyer pays'),
    client_secret: z.string().describe("The checkout session's payment-intent secret, for front-end polling"),
    expires_at: timestamp.describe('When the hosted page expires'),
    last_payment_error: z
      .object({ code: z.string(), message: z.string() })
      .nullable()
      .describe('Why the saved card could not pay (declined), or null'),
    created_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'IncompleteSubscription' });
export type IncompleteSubscription = z.infer<typeof IncompleteSubscription>;

export function registerSubscriptionCreationRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const tags = ['Subscriptions'];
  const security: Array<'secretKey'> = ['secretKey'];
  const params = z.object({ id: idText().describe('Subscription id, prefix sub_') });
  const unauthorized = error('unauthorized: API key invalid, missing or not a Secret Key');
  const answer = z.union([Subscription, IncompleteSubscription]);
  return registry
    .route({
      method: 'post',
      path: '/subscriptions',
      summary:
        "Create a subscription: charges the customer's saved card, or answers it INCOMPLETE with a hosted page (Idempotency-Key)",
      tags,
      security,
      body: CreateSubscriptionBody,
      responses: {
        201: {
          description: 'ACTIVE or TRIAL (paid or free now), or INCOMPLETE with url and client_secret',
          schema: answer,
        },
        400: error('bad_request: the product is not a subscription plan'),
        401: unauthorized,
        404: error(
          "not_found: no such customer (customer_id, external_customer_id), or no such active product in the environment (archived, the other environment's and another organization's alike)",
        ),
        409: error(
          'conflict: the customer has a live subscription to the product; details existing_subscription_id, status',
        ),
        422: error('validation_error: the body'),
      },
    })
    .route({
      method: 'post',
      path: '/subscriptions/{id}/complete',
      summary: 'Finish an INCOMPLETE subscription: paid on its hosted page, or by a card saved since; idempotent',
      tags,
      security,
      params,
      responses: {
        200: { description: 'The subscription, ACTIVE or TRIAL', schema: Subscription },
        401: unauthorized,
        402: error('payment_required: still unpaid; details name the hosted page (url) or the decline'),
        404: error('not_found: no such subscription'),
        409: error('conflict: its hosted page expired unpaid; create the subscription again'),
      },
    });
}
