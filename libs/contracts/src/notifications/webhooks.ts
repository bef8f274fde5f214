import { createHash } from 'node:crypto';
import { EinvoiceResource } from '../billing/einvoices';
import { z } from 'zod';
import { Customer, Invoice, Subscription } from '../billing/billing';
import { CheckoutSession } from '../checkout/sessions';
import { RefundedOrder } from '../checkout/events';
import { ErrorEnvelope } from '../shared/errors';
import { Environment } from '../events/envelope';
import { cursorListEnvelope, limitParam, listEnvelope, startingAfterParam } from '../shared/list';
import type { OpenApiRegistry } from '../shared/openapi';
import { Redemption } from '../promotions/promotions';
import { Refund } from '../checkout/refunds';
import { SubscriptionSchedule } from '../billing/switching';
import { CreditLedgerEntry, CreditLowBalanceWebhookFields, CreditWebhookFields } from '../billing/credits';
import { PUBLIC_EVENT_TYPES, type PublicEventType } from '../events/public-events';
import { idText } from '../shared/text';

// Webhook endpoints, webhook events and the delivery log (issue 7). Rules and decisions:
// docs/webhooks.md and services/notifications/README.md.

const timestamp = z.iso.datetime();

/** Retries after a failed attempt, in minutes: six attempts in all, then the delivery is FAILED. */
export const WEBHOOK_RETRY_MINUTES = [1, 2, 4, 8, 16] as const;
/** The same event id reaches one endpoint at most once within this window (replays excepted). */
export const WEBHOOK_DEDUPE_WINDOW_MS = 60 * 60 * 1000;
/** Subscribes an endpoint to every public event type, present and future. */
export const ALL_WEBHOOK_EVENTS = '*';

// ---------------------------------------------------------------- endpoints

export const WebhookEventType = z.enum(PUBLIC_EVENT_TYPES as unknown as [PublicEventType, ...PublicEventType[]]);

export const WebhookSubscription = z
  .array(z.union([WebhookEventType, z.literal(ALL_WEBHOOK_EVENTS)]))
  .min(1)
  .max(PUBLIC_EVENT_TYPES.length + 1)
  .transform((events) => [...new Set(events)])
  .describe('Public event types, or `*` for all of them');

/**
 * What the text of a webhook URL must be anywhere: absolute, http or https, no credentials.
 * Where it may point (https only, no internal addresses; http and private networks only in
 * Sandbox when the operator allows them) is the notifications service's address policy, which
 * depends on its settings: docs/webhooks.md, "Where webhooks may go".
 */
export function webhookUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.username || parsed.password) return 'must not carry credentials';
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must use https';
  return undefined;
}

const WebhookUrl = z.string().min(1).max(2048);

export const AdminCreateWebhookEndpointBody = z
  .strictObject({
    environment: Environment,
    url: WebhookUrl.describe(
      'HTTPS to a public address; loopback, private, link-local and metadata targets are refused ' +
        '(Sandbox may allow loopback and private networks, over http too, when the operator sets ' +
        'WEBHOOK_ALLOW_PRIVATE_TARGETS=sandbox)',
    ),
    events: WebhookSubscription,
    is_active: z.boolean().default(true),
  })
  .superRefine((body, ctx) => {
    const problem = webhookUrlProblem(body.url);
    if (problem) ctx.addIssue({ code: 'custom', path: ['url'], message: `url ${problem}` });
  })
  .meta({ id: 'AdminCreateWebhookEndpointBody' });
export type AdminCreateWebhookEndpointBody = z.infer<typeof AdminCreateWebhookEndpointBody>;

/** The URL is checked against the endpoint's environment when the change is decided. */
export const AdminUpdateWebhookEndpointBody = z
  .strictObject({
    url: WebhookUrl.optional(),
    events: WebhookSubscription.optional(),
    is_active: z.boolean().optional(),
  })
  .meta({ id: 'AdminUpdateWebhookEndpointBody' });
export type AdminUpdateWebhookEndpointBody = z.infer<typeof AdminUpdateWebhookEndpointBody>;

export const WebhookEndpoint = z
  .object({
    object: z.literal('webhook'),
    id: z.string().describe('prefix wh_'),
    url: z.string(),
    events: z.array(z.string()),
    is_active: z.boolean().describe('Inactive endpoints receive no events'),
    secret: z.string().optional().describe('whsec_<base64>; only in single reads'),
    created_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const WebhookEndpointList = listEnvelope(WebhookEndpoint).meta({ id: 'WebhookEndpointList' });
export const WebhookEndpointIdParams = z.object({ id: idText().min(1).describe('prefix wh_') });

// ---------------------------------------------------------------- events

/** The resource each public event type carries in `data.object`. */
export const WEBHOOK_OBJECT_SCHEMAS = {
  'checkout.async_payment_pending': CheckoutSession,
  'checkout.async_payment_expired': CheckoutSession,
  'checkout.completed': CheckoutSession,
  'checkout.expired': CheckoutSession,
  'order.refunded': RefundedOrder,
  'refund.created': Refund,
  'refund.updated': Refund,
  'refund.failed': Refund,
  'customer.created': Customer,
  'customer.updated': Customer,
  'subscription.activated': Subscription,
  'subscription.updated': Subscription,
  'subscription.canceled': Subscription,
  'subscription.renewed': Subscription,
  'subscription.past_due': Subscription,
  'subscription.trial_will_end': Subscription,
  'subscription.renewal_upcoming': Subscription,
  'invoice.payment_failed': Invoice,
  'invoice.payment_action_required': Invoice,
  'invoice.marked_uncollectible': Invoice,
  'invoice.paid': Invoice,
  'invoice.refunded': Invoice,
  'subscription_schedule.created': SubscriptionSchedule,
  'subscription_schedule.canceled': SubscriptionSchedule,
  'subscription_schedule.completed': SubscriptionSchedule,
  'promotion_code.redeemed': Redemption,
  'einvoice.issued': EinvoiceResource,
  'einvoice.voided': EinvoiceResource,
  'einvoice.allowance_issued': EinvoiceResource,
  'einvoice.failed': EinvoiceResource,
  'einvoice.deadline_approaching': EinvoiceResource,
  'credits.granted': CreditLedgerEntry,
  'credits.spent': CreditLedgerEntry,
  'credits.adjusted': CreditLedgerEntry,
  'credits.expired': CreditLedgerEntry,
  'credits.low_balance': CreditLedgerEntry,
} as const satisfies Record<PublicEventType, z.ZodType>;

/**
 * Fields some public event types carry in `data` beside `object`, copied from the domain
 * event's `data`: a credit change is about a customer and leaves a balance, which the ledger
 * entry alone does not name.
 */
export const WEBHOOK_DATA_FIELDS: Partial<Record<PublicEventType, z.ZodRawShape>> = {
  'credits.granted': CreditWebhookFields,
  'credits.spent': CreditWebhookFields,
  'credits.adjusted': CreditWebhookFields,
  'credits.expired': CreditWebhookFields,
  'credits.low_balance': CreditLowBalanceWebhookFields,
};

/** `{ id, type, created_at, livemode, data: { object } }`, the body of every webhook request. */
export function webhookEventSchema<T extends PublicEventType>(type: T) {
  return z.object({
    id: z.string().describe('evt_<hash of type, resource id and resource updated_at>'),
    type: z.literal(type),
    created_at: timestamp.describe('When the change happened'),
    livemode: z.boolean(),
    data: z
      .object({
        object: WEBHOOK_OBJECT_SCHEMAS[type] as (typeof WEBHOOK_OBJECT_SCHEMAS)[T],
        previous_attributes: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('subscription.updated by a plan switch: the fields as they were before (product, price, ...)'),
      })
      .extend(WEBHOOK_DATA_FIELDS[type] ?? {}),
  });
}

export const WebhookEvent = z
  .discriminatedUnion(
    'type',
    PUBLIC_EVENT_TYPES.map((type) => webhookEventSchema(type)) as unknown as [
      ReturnType<typeof webhookEventSchema>,
      ...ReturnType<typeof webhookEventSchema>[],
    ],
  )
  .meta({ id: 'WebhookEvent' });
export type WebhookEvent = {
  id: string;
  type: PublicEventType;
  created_at: string;
  livemode: boolean;
  data: {
    object: Record<string, unknown> & { id: string };
    previous_attributes?: Record<string, unknown>;
    /** The fields of `WEBHOOK_DATA_FIELDS` of the type. */
    [field: string]: unknown;
  };
};

/**
 * Deterministic: one change of one resource has one id, however often it is published or
 * redelivered. The resource's `updated_at` tells two changes apart; resources without one
 * (a redemption) fall back to when the domain event occurred.
 */
export function webhookEventId(type: string, resourceId: string, version: string): string {
  const digest = createHash('sha256').update(`${type}\n${resourceId}\n${version}`).digest('hex');
  return `evt_${digest.slice(0, 32)}`;
}

// ---------------------------------------------------------------- the organization's events

/**
 * Every public event is kept this long after notifications received it, whether or not an
 * endpoint subscribes to it (Stripe's events list keeps 30 days too), for the admin list.
 */
export const WEBHOOK_EVENT_RETENTION_DAYS = 30;

export const ListWebhookEventsQuery = z
  .strictObject({
    environment: Environment,
    type: WebhookEventType.optional().describe('Only events of this public type'),
    record_id: idText()
      .min(1)
      .optional()
      .describe('Only events whose `data.object` is this record (`sub_...`, `in_...`)'),
    limit: limitParam(20),
    starting_after: startingAfterParam('event'),
  })
  .meta({ id: 'ListWebhookEventsQuery' });
export type ListWebhookEventsQuery = z.infer<typeof ListWebhookEventsQuery>;

export const WebhookEventQuery = z.strictObject({ environment: Environment }).meta({ id: 'WebhookEventQuery' });

export const WebhookEventList = cursorListEnvelope(WebhookEvent).meta({ id: 'WebhookEventList' });

// ---------------------------------------------------------------- delivery log

export const WebhookDeliveryStatus = z
  .enum(['PENDING', 'SUCCEEDED', 'FAILED', 'CANCELED'])
  .describe('CANCELED: the endpoint was deleted before the delivery succeeded or failed')
  .meta({ id: 'WebhookDeliveryStatus' });
export type WebhookDeliveryStatus = z.infer<typeof WebhookDeliveryStatus>;

export const WebhookAttempt = z
  .object({
    attempt: z.int().min(1),
    attempted_at: timestamp,
    status: z.enum(['succeeded', 'failed']),
    response_status: z.int().nullable().describe('HTTP status of the answer; null when none came'),
    duration_ms: z.int().min(0),
    error: z.string().nullable().describe('timeout, connection error or the non-2xx status'),
  })
  .meta({ id: 'WebhookAttempt' });
export type WebhookAttempt = z.infer<typeof WebhookAttempt>;

export const WebhookDelivery = z
  .object({
    object: z.literal('webhook_delivery'),
    id: z.string().describe('prefix whd_'),
    endpoint_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    status: WebhookDeliveryStatus,
    attempt_count: z.int(),
    next_attempt_at: timestamp.nullable(),
    created_at: timestamp,
    attempts: z.array(WebhookAttempt),
    livemode: z.boolean(),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const ListWebhookDeliveriesQuery = z.object({
  status: WebhookDeliveryStatus.optional(),
  limit: limitParam(20),
  starting_after: startingAfterParam('delivery'),
});

// ---------------------------------------------------------------- OpenAPI

export function registerWebhookRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const tags = ['Webhook endpoints'];
  const security: Array<'secretKey'> = ['secretKey'];
  return registry
    .route({
      method: 'get',
      path: '/webhooks',
      summary: 'List webhook endpoints, newest first (without secrets)',
      tags,
      security,
      responses: {
        200: { description: 'The endpoints of the key environment', schema: WebhookEndpointList },
        401: error('Secret Key required'),
      },
    })
    .route({
      method: 'get',
      path: '/webhooks/{id}',
      summary: 'Retrieve a webhook endpoint with its signing secret',
      tags,
      security,
      params: WebhookEndpointIdParams,
      responses: {
        200: { description: 'The endpoint', schema: WebhookEndpoint },
        401: error('Secret Key required'),
        404: error('No such endpoint'),
      },
    });
}
