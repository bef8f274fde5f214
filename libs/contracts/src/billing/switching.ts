import { z } from 'zod';
import { Invoice, InvoiceLine, Subscription } from './billing';
import { ErrorEnvelope } from '../shared/errors';
import { Environment } from '../events/envelope';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import { MeteredPrice, ProductCredits, ProductInterval } from '../catalog/products';
import { idText } from '../shared/text';

// Plan switching (issue 14): switch previews, switches, subscription schedules, customer
// balance. Rules and decisions: docs/plan-switching.md.

const timestamp = z.iso.datetime();

export const SwitchType = z.enum(['UPGRADE', 'DOWNGRADE', 'PERIOD_CHANGE', 'CROSSGRADE']).meta({ id: 'SwitchType' });
export const ProrationBehavior = z.enum(['create_prorations', 'none']).meta({ id: 'ProrationBehavior' });
export type ProrationBehavior = z.infer<typeof ProrationBehavior>;

export const SwitchPlan = z
  .object({
    product_id: z.string(),
    product_name: z.string(),
    amount: z.int().describe('TWD per period'),
    currency: z.literal('TWD'),
    interval: ProductInterval,
    interval_count: z.int().min(1),
    monthly_equivalent: z.int().describe('TWD per month, rounded down (docs/plan-switching.md)'),
  })
  .meta({ id: 'SwitchPlan' });
export type SwitchPlan = z.infer<typeof SwitchPlan>;

export const SwitchProration = z
  .object({
    credit_amount: z.int().min(0).describe('For the unused days of what was paid for the current period'),
    charge_amount: z.int().min(0).describe("The new plan's full-period price, after a coupon still valid"),
    net_amount: z.int().describe('charge_amount - credit_amount; negative becomes customer balance'),
    unused_days: z.int().min(0),
    total_days_in_period: z.int().min(0),
    credit_description: z.string(),
  })
  .meta({ id: 'SwitchProration' });
export type SwitchProration = z.infer<typeof SwitchProration>;

/** Spec: Switch preview (`object` = `switch_preview`). */
export const SwitchPreview = z
  .object({
    object: z.literal('switch_preview'),
    subscription_id: z.string(),
    switch_type: SwitchType,
    execution_mode: z.enum(['immediate', 'scheduled']),
    current_plan: SwitchPlan,
    new_plan: SwitchPlan,
    proration: SwitchProration.nullable().describe('null when no proration applies'),
    effective_date: timestamp,
    next_billing_date: timestamp,
    proration_behavior: ProrationBehavior,
    requires_payment: z.boolean().describe('The switch charges the saved card now'),
    can_proceed: z.boolean(),
    blocking_reason: z
      .string()
      .nullable()
      .describe(
        'past_due, canceled, cancel_at_period_end, pending_schedule, switch_in_progress, no_payment_method, fixed_amount_plan (a processor charges the card a fixed amount each period: ECPay), pays_by_transfer (each invoice is paid by an ATM or store code)',
      ),
    is_in_trial: z.boolean(),
    trial_end: timestamp.nullable(),
    livemode: z.boolean(),
  })
  .meta({ id: 'SwitchPreview' });
export type SwitchPreview = z.infer<typeof SwitchPreview>;

export const SwitchPreviewQuery = z
  .object({
    target_product_id: idText().min(1).describe('The plan to switch to, prefix prod_'),
    proration_behavior: ProrationBehavior.optional(),
  })
  .meta({ id: 'SwitchPreviewQuery' });

export const SwitchSubscriptionBody = z
  .strictObject({
    target_product_id: idText().min(1),
    proration_behavior: ProrationBehavior.optional().describe(
      '`none`: an immediate switch changes the plan now without proration; the next renewal bills the new plan',
    ),
  })
  .meta({ id: 'SwitchSubscriptionBody' });
export type SwitchSubscriptionBody = z.infer<typeof SwitchSubscriptionBody>;

/** The plan a schedule moves to, as the catalog had it when the schedule was made. */
export const ScheduledPlan = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string().nullable(),
    price: z.int().min(0),
    interval: ProductInterval,
    interval_count: z.int().min(1),
    credits: ProductCredits.nullable()
      .optional()
      .describe('The allowance each paid period of the plan grants; absent on schedules made before allowances'),
    metered_prices: z
      .array(MeteredPrice)
      .nullable()
      .optional()
      .describe('The usage renewal invoices of the plan bill; absent on schedules made before metered prices'),
  })
  .meta({ id: 'ScheduledPlan' });
export type ScheduledPlan = z.infer<typeof ScheduledPlan>;

export const SubscriptionScheduleStatus = z.enum(['pending', 'completed', 'canceled']);

/** A switch waiting for the end of the period; at most one pending per subscription. */
export const SubscriptionSchedule = z
  .object({
    object: z.literal('subscription_schedule'),
    id: z.string().describe('Prefix sub_sched_'),
    subscription_id: z.string(),
    customer_id: z.string(),
    switch_type: SwitchType,
    current_product_id: z.string().describe('The plan when the schedule was made'),
    target_product_id: z.string(),
    target_plan: ScheduledPlan,
    effective_date: timestamp.describe('The end of the current period; the renewal then bills the target plan'),
    status: SubscriptionScheduleStatus,
    canceled_at: timestamp.nullable(),
    completed_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'SubscriptionSchedule' });
export type SubscriptionSchedule = z.infer<typeof SubscriptionSchedule>;

/** The answer to `POST /subscriptions/{id}/switch`. */
export const SubscriptionSwitch = z
  .object({
    object: z.literal('subscription_switch'),
    switch_type: SwitchType,
    execution_mode: z.enum(['immediate', 'scheduled']),
    subscription: Subscription.describe('As it is after the switch (unchanged when scheduled)'),
    invoice: Invoice.nullable().describe('The proration invoice of an immediate prorated switch'),
    schedule: SubscriptionSchedule.nullable().describe('The pending schedule of a scheduled switch'),
    proration: SwitchProration.nullable(),
    livemode: z.boolean(),
  })
  .meta({ id: 'SubscriptionSwitch' });
export type SubscriptionSwitch = z.infer<typeof SubscriptionSwitch>;

/** A customer's balance: positive is credit taken off the next invoices, negative is owed on them. */
export const CustomerBalance = z
  .object({
    object: z.literal('customer_balance'),
    customer_id: z.string(),
    balance: z.int().describe('TWD; positive: credit for the next invoices; negative: added to them'),
    currency: z.literal('TWD'),
    livemode: z.boolean(),
  })
  .meta({ id: 'CustomerBalance' });
export type CustomerBalance = z.infer<typeof CustomerBalance>;

// ---------------------------------------------------------------- events (subscription stream)

const Tenant = { organization: z.string(), environment: Environment };

/** Internal: an immediate switch holds the subscription while its card is charged. */
export const SubscriptionSwitchStartedData = z
  .object({
    subscription_id: z.string(),
    switch_id: z.string(),
    invoice_id: z.string().describe('The proration invoice, recorded when the charge succeeds'),
    target_plan: ScheduledPlan,
    amount: z.int().min(0).describe('Charged now'),
    recording: z
      .object({ lines: z.array(InvoiceLine), amount_discount: z.int().min(0), balance_change: z.int() })
      .optional()
      .describe(
        'The proration invoice to record once charged (a crash is settled from it); always set since it was added',
      ),
    started_at: timestamp.describe("The switch's time (the subscription's clock)"),
    held_at: timestamp
      .optional()
      .describe(
        'Real time the hold began: a hold older than BILLING_SWITCH_HOLD_MS is settled; always set since it was added',
      ),
  })
  .meta({ id: 'SubscriptionSwitchStartedData' });
export type SubscriptionSwitchStartedData = z.infer<typeof SubscriptionSwitchStartedData>;

/** Internal: the switch that held the subscription ended (done, or declined). */
export const SubscriptionSwitchEndedData = z
  .object({
    subscription_id: z.string(),
    switch_id: z.string(),
    outcome: z.enum(['switched', 'declined']),
    failure: z.object({ code: z.string(), message: z.string() }).nullable(),
    ended_at: timestamp,
  })
  .meta({ id: 'SubscriptionSwitchEndedData' });
export type SubscriptionSwitchEndedData = z.infer<typeof SubscriptionSwitchEndedData>;

/** subscription_schedule.created / .canceled / .completed. */
export const SubscriptionScheduleEventData = z
  .object({ subscription_id: z.string(), ...Tenant, object: SubscriptionSchedule })
  .meta({ id: 'SubscriptionScheduleEventData' });
export type SubscriptionScheduleEventData = z.infer<typeof SubscriptionScheduleEventData>;

/** Internal, stream `customer_balance-<customer>`: the balance moved by `amount` (signed). */
export const CustomerBalanceChangedData = z
  .object({
    customer_id: z.string(),
    ...Tenant,
    amount: z.int().describe('Signed TWD: positive adds credit, negative takes it (or adds what is owed)'),
    reason: z.enum(['switch_credit', 'switch_deferred_charge', 'applied_to_invoice']),
    subscription_id: z.string().nullable(),
    invoice_id: z.string().nullable(),
    balance: z.int().describe('After the change'),
    key: z.string().describe('The change is made once per key: `switch:<id>`, `invoice:<id>`'),
    at: timestamp,
  })
  .meta({ id: 'CustomerBalanceChangedData' });
export type CustomerBalanceChangedData = z.infer<typeof CustomerBalanceChangedData>;

export const SWITCHING_EVENT_SCHEMAS = {
  SubscriptionSwitchStarted: SubscriptionSwitchStartedData,
  SubscriptionSwitchEnded: SubscriptionSwitchEndedData,
  SubscriptionScheduleCreated: SubscriptionScheduleEventData,
  SubscriptionScheduleCanceled: SubscriptionScheduleEventData,
  SubscriptionScheduleCompleted: SubscriptionScheduleEventData,
  CustomerBalanceChanged: CustomerBalanceChangedData,
} as const;

// ---------------------------------------------------------------- OpenAPI

export function registerSwitchingRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const tags = ['Subscriptions'];
  const security: Array<'secretKey'> = ['secretKey'];
  const params = z.object({ id: idText().describe('Subscription id, prefix sub_') });
  const unauthorized = error('unauthorized: API key invalid, missing or not a Secret Key');
  const targetRefused = error('bad_request: the target is the current product, or not a subscription plan');
  return registry
    .route({
      method: 'get',
      path: '/subscriptions/{id}/switch-preview',
      summary: 'Preview a switch to another plan: type, execution, proration; changes nothing',
      tags,
      security,
      params,
      query: SwitchPreviewQuery,
      responses: {
        200: { description: 'The preview', schema: SwitchPreview },
        400: {
          description: `${invalidParametersResponse.description}; or ${targetRefused.description}`,
          schema: ErrorEnvelope,
        },
        401: unauthorized,
        404: error(
          "not_found: no such subscription, or no such active product in the environment (archived, the other environment's and another organization's alike)",
        ),
      },
    })
    .route({
      method: 'post',
      path: '/subscriptions/{id}/switch',
      summary: 'Switch to another plan: now (charging the net on the saved card) or at the end of the period',
      tags,
      security,
      params,
      body: SwitchSubscriptionBody,
      responses: {
        200: {
          description: 'The switch: the subscription, its proration invoice or its schedule',
          schema: SubscriptionSwitch,
        },
        400: targetRefused,
        401: unauthorized,
        402: error(
          'payment_required: the saved card was declined (the decline reason in the message and details); nothing changed',
        ),
        404: error(
          "not_found: no such subscription, or no such active product in the environment (archived, the other environment's and another organization's alike)",
        ),
        409: error('conflict: a pending schedule (named in details), a switch in progress, PAST_DUE, canceled'),
        422: error('validation_error: the body'),
      },
    })
    .route({
      method: 'get',
      path: '/subscriptions/{id}/schedule',
      summary: "The subscription's pending schedule, or else its latest one",
      tags,
      security,
      params,
      responses: {
        200: { description: 'The schedule', schema: SubscriptionSchedule },
        401: unauthorized,
        404: error('not_found: no such subscription, or it never had a schedule'),
      },
    })
    .route({
      method: 'delete',
      path: '/subscriptions/{id}/schedule',
      summary: 'Cancel the pending schedule: the subscription stays on its plan',
      tags,
      security,
      params,
      responses: {
        200: { description: 'The schedule, canceled', schema: SubscriptionSchedule },
        401: unauthorized,
        404: error('not_found: no such subscription, or no pending schedule'),
      },
    })
    .route({
      method: 'get',
      path: '/customers/{id}/balance',
      summary: "The customer's balance: credit from switches taken off the next invoices",
      tags: ['Customers'],
      security,
      params: z.object({ id: idText().describe('Customer id, prefix cus_') }),
      responses: {
        200: { description: 'The balance', schema: CustomerBalance },
        401: unauthorized,
        404: error('resource_not_found: no such customer'),
      },
    });
}
