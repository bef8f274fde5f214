import { z } from 'zod';
import { METER_KEY_PATTERN } from '../catalog/products';
import { ErrorEnvelope, detailsFromZodIssues, validationError } from '../shared/errors';
import { listEnvelope } from '../shared/list';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import { idText } from '../shared/text';

// Usage (issue 34): meters, the usage events merchants report to them, and a customer's usage
// summary. Rules: docs/usage.md.

const timestamp = z.iso.datetime();

export const USAGE_LIMITS = {
  /** Events one report may carry. */
  batch: 1000,
  quantity: 1_000_000_000,
  creditsPerUnit: 1_000_000,
  metersPerEnvironment: 100,
  /** An event's timestamp may be this far behind the customer's time (Stripe's meter events: 35 days). */
  pastDays: 35,
  /** ...and this far ahead of it (clocks drift). */
  futureMinutes: 5,
} as const;

const MeterKey = z
  .string()
  .max(100)
  .regex(METER_KEY_PATTERN, 'a meter key is letters, digits and _ . : -, at most 100 characters');

export const MeterAggregation = z
  .enum(['sum', 'count', 'max'])
  .describe("How a period's events make its quantity: the sum of their quantities, their number, or the largest")
  .meta({ id: 'MeterAggregation' });
export type MeterAggregation = z.infer<typeof MeterAggregation>;

export const Meter = z
  .object({
    object: z.literal('meter'),
    id: z.string().describe('Prefix mtr_'),
    key: MeterKey.describe("What usage events and plans' metered prices name the meter by; one per environment"),
    name: z.string(),
    aggregation: MeterAggregation,
    credits_per_unit: z
      .int()
      .nullable()
      .describe(
        "Credits each unit spends from the customer's balance as its event arrives (a count meter: each event); null: none",
      ),
    status: z
      .enum(['active', 'inactive'])
      .describe(
        'inactive: deactivated, it takes no usage events (those stored already still count); reactivate to take them again',
      ),
    created_at: timestamp,
    updated_at: timestamp.describe('Its last change: created, renamed, deactivated or reactivated'),
    livemode: z.boolean(),
  })
  .meta({ id: 'Meter' });
export type Meter = z.infer<typeof Meter>;

export const MeterList = listEnvelope(Meter).meta({ id: 'MeterList' });

const MeterName = z.string().trim().min(1).max(200);

export const CreateMeterBody = z
  .strictObject({
    key: MeterKey,
    name: MeterName,
    aggregation: MeterAggregation,
    credits_per_unit: z.int().min(1).max(USAGE_LIMITS.creditsPerUnit).optional(),
  })
  .refine((body) => body.credits_per_unit === undefined || body.aggregation !== 'max', {
    path: ['credits_per_unit'],
    message: 'a max meter spends no credits: its events are not amounts used up',
  })
  .meta({ id: 'CreateMeterBody' });
export type CreateMeterBody = z.infer<typeof CreateMeterBody>;

/** `POST /v1/meters/{id}`: its name. Its key, aggregation and credits per unit never change (a period's usage means one thing throughout). */
export const UpdateMeterBody = z.strictObject({ name: MeterName }).meta({ id: 'UpdateMeterBody' });
export type UpdateMeterBody = z.infer<typeof UpdateMeterBody>;

export const MeterIdParams = z.object({ id: idText().min(1).describe('Meter id, prefix mtr_') });

export const UsageEventInput = z
  .strictObject({
    id: idText().min(1).describe("The merchant's id for the event: an event is stored once per id and environment"),
    customer_id: idText().min(1).describe('Prefix cus_'),
    meter: MeterKey.describe("A meter's key"),
    quantity: z
      .int()
      .min(0)
      .max(USAGE_LIMITS.quantity)
      .default(1)
      .describe('Whole units (default 1); a count meter counts the event whatever its quantity'),
    timestamp: timestamp
      .optional()
      .describe(
        `When the usage happened (default: now, on the customer's clock); at most ${USAGE_LIMITS.pastDays} days before now and ${USAGE_LIMITS.futureMinutes} minutes after`,
      ),
  })
  .meta({ id: 'UsageEventInput' });
export type UsageEventInput = z.infer<typeof UsageEventInput>;

const UsageEventBatch = z.strictObject({ events: z.array(UsageEventInput).min(1).max(USAGE_LIMITS.batch) });

/** One event, or `events` of up to 1,000: all are stored or none. */
export const ReportUsageBody = z.union([UsageEventBatch, UsageEventInput]).meta({ id: 'ReportUsageBody' });

/**
 * The events of a report: a body with `events` is a batch, any other one event, so that a
 * refusal names the field (`events.3.meter`, `meter`) rather than the union. 422 when invalid.
 */
export function eventsOfReport(body: unknown): { events: UsageEventInput[]; batch: boolean } {
  const batch = typeof body === 'object' && body !== null && 'events' in body;
  const parsed = (batch ? UsageEventBatch : UsageEventInput).safeParse(body);
  if (!parsed.success) throw validationError(detailsFromZodIssues(parsed.error.issues));
  return batch
    ? { events: (parsed.data as z.infer<typeof UsageEventBatch>).events, batch }
    : { events: [parsed.data as UsageEventInput], batch };
}

/**
 * A message of the usage topic (`usage.events`, under the deployment's topic prefix), for
 * merchants who produce at volume: the tenant it reports for, and its events, as the API takes them.
 */
export const USAGE_TOPIC = 'usage.events';
export const UsageTopicMessage = z
  .strictObject({
    organization: idText().min(1).describe('The organization (org_) whose customers used it'),
    livemode: z.boolean().describe('false: Sandbox; true: Production'),
    events: z.array(UsageEventInput).min(1).max(USAGE_LIMITS.batch),
  })
  .meta({ id: 'UsageTopicMessage' });
export type UsageTopicMessage = z.infer<typeof UsageTopicMessage>;

export const UsageReport = z
  .object({
    object: z.literal('usage_report'),
    received: z.int().min(1).describe('Events in the request'),
    stored: z.int().min(0).describe('Events stored by this request'),
    duplicates: z.int().min(0).describe('Events whose id was stored already (by an earlier request): not stored again'),
    livemode: z.boolean(),
  })
  .meta({ id: 'UsageReport' });
export type UsageReport = z.infer<typeof UsageReport>;

export const UsageSummaryQuery = z
  .object({
    from: timestamp.optional().describe('Usage at or after this instant; default: 30 days before `to`'),
    to: timestamp
      .optional()
      .describe(
        "Usage before this instant; default: the latest an event may have, 5 minutes after now on the customer's clock",
      ),
  })
  .meta({ id: 'UsageSummaryQuery' });

export const MeterUsage = z
  .object({
    meter: z.string(),
    aggregation: MeterAggregation,
    quantity: z.int().min(0).describe("The meter's aggregate of the events in the window"),
    events: z.int().min(0),
  })
  .meta({ id: 'MeterUsage' });

export const UsageSummary = z
  .object({
    object: z.literal('usage_summary'),
    customer_id: z.string(),
    from: timestamp,
    to: timestamp,
    meters: z.array(MeterUsage).describe('Every meter of the environment, in key order'),
    livemode: z.boolean(),
  })
  .meta({ id: 'UsageSummary' });
export type UsageSummary = z.infer<typeof UsageSummary>;

// ---------------------------------------------------------------- errors

/** 422 at `path`: what an event names is not there (`unknown_meter`, `unknown_customer`) or its time is out of range. */
export const usageEventRefused = (path: string, code: string, message: string) =>
  validationError([{ path, code, message }], message);

// ---------------------------------------------------------------- OpenAPI

export function registerUsageRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const tags = ['Usage'];
  const security: Array<'secretKey'> = ['secretKey'];
  const unauthorized = error('unauthorized: API key invalid, missing or not a Secret Key');
  return registry
    .route({
      method: 'post',
      path: '/meters',
      summary: 'Create a meter: what usage events are reported to, summed, counted or maximised per customer',
      tags,
      security,
      body: CreateMeterBody,
      responses: {
        201: { description: 'The meter', schema: Meter },
        400: error('bad_request: malformed JSON'),
        401: unauthorized,
        409: error('conflict: a meter with this key exists in the environment'),
        422: error(
          'validation_error: the body; meter_limit: the environment has 100 meters; details[] of {path, message, code}',
        ),
      },
    })
    .route({
      method: 'get',
      path: '/meters',
      summary: "The environment's meters, in key order",
      tags,
      security,
      responses: { 200: { description: 'The meters', schema: MeterList }, 401: unauthorized },
    })
    .route({
      method: 'get',
      path: '/meters/{id}',
      summary: 'One meter',
      tags,
      security,
      params: MeterIdParams,
      responses: {
        200: { description: 'The meter', schema: Meter },
        401: unauthorized,
        404: error('not_found: no such meter in this environment'),
      },
    })
    .route({
      method: 'post',
      path: '/meters/{id}',
      summary: 'Rename a meter (its key, aggregation and credits per unit never change)',
      tags,
      security,
      params: MeterIdParams,
      body: UpdateMeterBody,
      responses: {
        200: { description: 'The meter', schema: Meter },
        400: error('bad_request: malformed JSON'),
        401: unauthorized,
        404: error('not_found: no such meter in this environment'),
        422: error('validation_error: the body (only name may change); details[] of {path, message, code}'),
      },
    })
    .route({
      method: 'post',
      path: '/meters/{id}/deactivate',
      summary: 'Deactivate a meter: usage events naming it are refused (meter_inactive) until it is reactivated',
      tags,
      security,
      params: MeterIdParams,
      responses: {
        200: { description: 'The meter, inactive', schema: Meter },
        401: unauthorized,
        404: error('not_found: no such meter in this environment'),
      },
    })
    .route({
      method: 'post',
      path: '/meters/{id}/reactivate',
      summary: 'Reactivate a meter: it takes usage events again',
      tags,
      security,
      params: MeterIdParams,
      responses: {
        200: { description: 'The meter, active', schema: Meter },
        401: unauthorized,
        404: error('not_found: no such meter in this environment'),
      },
    })
    .route({
      method: 'post',
      path: '/usage_events',
      summary:
        'Report usage: one event or up to 1,000; answered once every new event is stored, repeats of an id are not stored again',
      tags,
      security,
      body: ReportUsageBody,
      responses: {
        202: { description: 'Stored: the events count from now on', schema: UsageReport },
        400: error('bad_request: malformed JSON'),
        401: unauthorized,
        422: error(
          'validation_error: an event is malformed, names an unknown meter (unknown_meter), an inactive one (meter_inactive) or an unknown customer (unknown_customer), or its timestamp is out of range (timestamp_out_of_range); details[0].path names it (events.3.meter); nothing is stored',
        ),
      },
    })
    .route({
      method: 'get',
      path: '/customers/{id}/usage',
      summary: "The customer's usage per meter over a window",
      tags,
      security,
      params: z.object({ id: idText().min(1).describe('Customer id, prefix cus_') }),
      query: UsageSummaryQuery,
      responses: {
        200: { description: 'The usage', schema: UsageSummary },
        400: { ...invalidParametersResponse, description: 'invalid_request: bad path or query parameters' },
        401: unauthorized,
        404: error('resource_not_found: no such customer in this organization and environment'),
      },
    });
}
