import { z } from 'zod';
import { ApiError, ErrorEnvelope, validationError } from '../shared/errors';
import { cursorListEnvelope, limitParam, startingAfterParam } from '../shared/list';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import { idText } from '../shared/text';
import { BILLING_PAGE, Metadata } from './billing';

// Credits (issue 34, first part): a ledger of credits per customer, granted, spent, taken
// back and expired. Rules and decisions: docs/credits.md.

const timestamp = z.iso.datetime();

export const CREDIT_LIMITS = { minAmount: 1, maxAmount: 1_000_000_000, reason: 500, priority: 1000 } as const;

/** Whole credits, 1 to 1,000,000,000. */
export const CreditAmount = z.int().min(CREDIT_LIMITS.minAmount).max(CREDIT_LIMITS.maxAmount);

export const CreditSource = z.enum(['purchase', 'allowance', 'manual']).meta({ id: 'CreditSource' });
export type CreditSource = z.infer<typeof CreditSource>;

const Reason = z.string().min(1).max(CREDIT_LIMITS.reason);
const Priority = z.int().min(0).max(CREDIT_LIMITS.priority);

/** A part of a spend or a take-back: how much it drew from one grant. */
export const CreditDraw = z.object({ grant_id: z.string(), amount: CreditAmount }).meta({ id: 'CreditDraw' });
export type CreditDraw = z.infer<typeof CreditDraw>;

// ---------------------------------------------------------------- resources

export const CreditGrant = z
  .object({
    object: z.literal('credit_grant'),
    id: z.string().describe('Prefix cgr_'),
    customer_id: z.string(),
    amount: CreditAmount.describe('Credits granted'),
    remaining: z.int().min(0).describe('Credits not yet spent, taken back or expired'),
    source: CreditSource,
    source_id: z.string().nullable().describe('The order (purchase) or subscription (allowance); null when manual'),
    reason: z.string().nullable(),
    priority: Priority.describe('Among grants expiring at the same time, higher burns first'),
    expires_at: timestamp.nullable().describe('The grant is expired from this instant on; null never expires'),
    created_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'CreditGrant' });
export type CreditGrant = z.infer<typeof CreditGrant>;

export const CreditBalance = z
  .object({
    object: z.literal('credit_balance'),
    customer_id: z.string(),
    balance: z.int().min(0).describe('Credits: the remaining credits of the unexpired grants'),
    grants: z.array(CreditGrant).describe('Unexpired grants with credits remaining, in the order they burn'),
    livemode: z.boolean(),
  })
  .meta({ id: 'CreditBalance' });
export type CreditBalance = z.infer<typeof CreditBalance>;

export const CreditLedgerEntryType = z.enum(['grant', 'spend', 'adjustment', 'expiry']).meta({
  id: 'CreditLedgerEntryType',
});
export type CreditLedgerEntryType = z.infer<typeof CreditLedgerEntryType>;

export const CreditLedgerEntry = z
  .object({
    object: z.literal('credit_ledger_entry'),
    id: z.string().describe('The grant (cgr_), spend (cspd_) or adjustment (cadj_); an expiry: cexp_ and its grant'),
    type: CreditLedgerEntryType,
    amount: z.int().describe('Signed: positive for a grant, negative for the others'),
    balance_after: z.int().min(0),
    grant_id: z.string().nullable().describe('The grant granted or expired; null for spends and adjustments'),
    drawn_from: z.array(CreditDraw).describe('Spends and adjustments: the grants drawn from, in burn order'),
    reason: z.string().nullable(),
    metadata: z.record(z.string(), z.string()).nullable().describe('Spends: the metadata sent with them'),
    created_at: timestamp.describe('An expiry: when its grant expired'),
    livemode: z.boolean(),
  })
  .meta({ id: 'CreditLedgerEntry' });
export type CreditLedgerEntry = z.infer<typeof CreditLedgerEntry>;

export const CreditLedgerList = cursorListEnvelope(CreditLedgerEntry).meta({ id: 'CreditLedgerList' });

export const CreditSpend = z
  .object({
    object: z.literal('credit_spend'),
    id: z.string().describe('Prefix cspd_'),
    customer_id: z.string(),
    amount: CreditAmount,
    balance: z.int().min(0).describe('The balance right after this spend (the same on a repeat of its key)'),
    idempotency_key: z.string(),
    metadata: z.record(z.string(), z.string()).nullable(),
    created_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'CreditSpend' });
export type CreditSpend = z.infer<typeof CreditSpend>;

export const CreditAdjustment = z
  .object({
    object: z.literal('credit_adjustment'),
    id: z.string().describe('Prefix cadj_'),
    customer_id: z.string(),
    amount: CreditAmount.describe('Credits taken back'),
    balance: z.int().min(0).describe('The balance after it'),
    reason: z.string(),
    created_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'CreditAdjustment' });
export type CreditAdjustment = z.infer<typeof CreditAdjustment>;

// ---------------------------------------------------------------- requests

export const CreditsCustomerParams = z
  .object({ id: idText().min(1).describe('Customer id, prefix cus_') })
  .meta({ id: 'CreditsCustomerParams' });

export const CreditLedgerQuery = z
  .object({
    limit: limitParam(BILLING_PAGE.defaultLimit, BILLING_PAGE.maxLimit),
    starting_after: startingAfterParam('ledger entry'),
  })
  .meta({ id: 'CreditLedgerQuery' });

export const CreateCreditGrantBody = z
  .strictObject({
    amount: CreditAmount,
    reason: Reason,
    expires_at: timestamp.optional().describe('Later than now; omitted, the grant never expires'),
    priority: Priority.default(0),
  })
  .meta({ id: 'CreateCreditGrantBody' });
export type CreateCreditGrantBody = z.infer<typeof CreateCreditGrantBody>;

/** The spends of usage events take keys beginning with this (docs/usage.md): the API's spends may not. */
export const RESERVED_SPEND_KEY_PREFIX = 'usage_event';

export const SpendCreditsBody = z
  .strictObject({
    amount: CreditAmount,
    idempotency_key: z
      .string()
      .min(1)
      .max(255)
      .refine((key) => !key.startsWith(RESERVED_SPEND_KEY_PREFIX), {
        message: `keys beginning with ${RESERVED_SPEND_KEY_PREFIX} are those of usage events' spends`,
      })
      .describe(`One spend per key and customer, for ever; not beginning with ${RESERVED_SPEND_KEY_PREFIX}`),
    metadata: Metadata.optional(),
  })
  .meta({ id: 'SpendCreditsBody' });
export type SpendCreditsBody = z.infer<typeof SpendCreditsBody>;

export const AdjustCreditsBody = z
  .strictObject({ amount: CreditAmount.describe('Credits to take back'), reason: Reason })
  .meta({ id: 'AdjustCreditsBody' });
export type AdjustCreditsBody = z.infer<typeof AdjustCreditsBody>;

// ---------------------------------------------------------------- errors

/**
 * 402: the spend or take-back is more than the balance (for a spend: with the overdraft limit);
 * `details[0].balance` is the balance.
 */
export function insufficientCredits(balance: number, amount: number, overdraftLimit = 0): ApiError {
  const beyond = overdraftLimit > 0 ? ` (an overdraft of at most ${overdraftLimit} is allowed)` : '';
  const message = `The balance is ${balance} credits${beyond}; ${amount} cannot be taken`;
  return new ApiError(402, 'insufficient_credits', message, [
    { path: 'amount', message, code: 'insufficient_credits', balance },
  ]);
}

/** The idempotency key of an earlier spend, sent with another amount or metadata (as the gateway's header). */
export const spendKeyMismatch = () =>
  new ApiError(
    400,
    'idempotency_key_mismatch',
    'This idempotency_key was used for a spend with another amount or metadata; use a new key for a new spend',
  );

export const expiryNotLater = (now: Date) => {
  const message = `expires_at must be later than ${now.toISOString()}`;
  return validationError([{ path: 'expires_at', code: 'not_later', message }], message);
};

// ---------------------------------------------------------------- events (stream customer_credits-<customer>)

/**
 * What a public credit event adds for merchants (docs/credits.md, Events). Optional: events
 * recorded before they were published lack them (and are not sent as webhooks).
 */
const publishedFields = {
  object: CreditLedgerEntry.optional().describe('The ledger entry of the change, as the ledger API shows it'),
  balance: z.int().min(0).optional().describe("The customer's balance after the change"),
};

/** `credits.granted`: credits granted to the customer. */
export const CreditsGrantedData = z
  .object({
    customer_id: z.string(),
    grant_id: z.string(),
    amount: CreditAmount,
    source: CreditSource,
    source_id: z.string().nullable(),
    reason: z.string().nullable(),
    priority: z.int(),
    expires_at: timestamp.nullable(),
    idempotency_key: z.string().nullable().describe('A grant is made once per key: `order:<id>`, ...'),
    balance_after: z.int().min(0),
    granted_at: timestamp,
  })
  .extend(publishedFields)
  .meta({ id: 'CreditsGrantedData' });
export type CreditsGrantedData = z.infer<typeof CreditsGrantedData>;

/** `credits.spent`: credits spent, drawn from grants in burn order. */
export const CreditsSpentData = z
  .object({
    customer_id: z.string(),
    spend_id: z.string(),
    amount: CreditAmount,
    drawn_from: z.array(CreditDraw),
    idempotency_key: z.string(),
    metadata: z.record(z.string(), z.string()).nullable(),
    balance_after: z.int().min(0),
    spent_at: timestamp,
  })
  .extend(publishedFields)
  .meta({ id: 'CreditsSpentData' });
export type CreditsSpentData = z.infer<typeof CreditsSpentData>;

/** `credits.adjusted`: credits taken back by the merchant, drawn from grants as a spend is. */
export const CreditsAdjustedData = z
  .object({
    customer_id: z.string(),
    adjustment_id: z.string(),
    amount: CreditAmount,
    drawn_from: z.array(CreditDraw),
    reason: z.string(),
    balance_after: z.int().min(0),
    adjusted_at: timestamp,
  })
  .extend(publishedFields)
  .meta({ id: 'CreditsAdjustedData' });
export type CreditsAdjustedData = z.infer<typeof CreditsAdjustedData>;

/** `credits.expired`: a grant reached its `expires_at` with `amount` left, which is gone. */
export const CreditsExpiredData = z
  .object({
    customer_id: z.string(),
    grant_id: z.string(),
    amount: CreditAmount,
    balance_after: z.int().min(0),
    expired_at: timestamp.describe("The grant's expires_at"),
  })
  .extend(publishedFields)
  .meta({ id: 'CreditsExpiredData' });
export type CreditsExpiredData = z.infer<typeof CreditsExpiredData>;

/**
 * `credits.low_balance`: a change took the balance from at or above the organization's
 * threshold to below it; appended with that change, once per crossing.
 */
export const CreditsLowBalanceData = z
  .object({
    customer_id: z.string(),
    balance: z.int().min(0).describe('The balance after the change, below the threshold'),
    threshold: z.int().min(1).describe("The environment's credits_low_balance_threshold when it was crossed"),
    object: CreditLedgerEntry.describe('The ledger entry of the change that left the balance below the threshold'),
  })
  .meta({ id: 'CreditsLowBalanceData' });
export type CreditsLowBalanceData = z.infer<typeof CreditsLowBalanceData>;

export const CREDIT_EVENT_SCHEMAS = {
  CreditsGranted: CreditsGrantedData,
  CreditsSpent: CreditsSpentData,
  CreditsAdjusted: CreditsAdjustedData,
  CreditsExpired: CreditsExpiredData,
  CreditsLowBalance: CreditsLowBalanceData,
} as const;

/**
 * The topic billing relays its credit events to (docs/topics.md): not `billing.events`, so that
 * the consumer groups of that topic, none of which reads credits, do not fetch every spend.
 */
export const CREDITS_TOPIC = 'credits.events';

/** Each credit event type's topic, as the relay's `topicsByType`. */
export const CREDIT_EVENT_TOPICS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.keys(CREDIT_EVENT_SCHEMAS).map((type) => [type, CREDITS_TOPIC]),
);

/** What a credits webhook's `data` carries beside `object`. */
export const CreditWebhookFields = { customer_id: z.string(), balance: z.int().min(0) };
export const CreditLowBalanceWebhookFields = { ...CreditWebhookFields, threshold: z.int().min(1) };

// ---------------------------------------------------------------- OpenAPI

export function registerCreditRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const tags = ['Credits'];
  const security: Array<'secretKey'> = ['secretKey'];
  const params = CreditsCustomerParams;
  const common = {
    400: { ...invalidParametersResponse, description: 'invalid_request: bad path or query parameters, malformed JSON' },
    401: error('unauthorized: API key invalid, missing or not a Secret Key'),
    404: error('resource_not_found: no such customer in this organization and environment'),
  };
  const insufficient = error('insufficient_credits: more than the balance (details[0].balance); nothing changed');
  const invalidBody = error('validation_error: the body; details[] of {path, message, code}');
  return registry
    .route({
      method: 'get',
      path: '/customers/{id}/credits',
      summary: "The customer's credit balance and the grants it is made of",
      tags,
      security,
      params,
      responses: { 200: { description: 'The balance', schema: CreditBalance }, ...common },
    })
    .route({
      method: 'get',
      path: '/customers/{id}/credits/ledger',
      summary: "The customer's credit ledger, newest first: grants, spends, adjustments, expiries",
      tags,
      security,
      params,
      query: CreditLedgerQuery,
      responses: { 200: { description: 'A page of entries', schema: CreditLedgerList }, ...common },
    })
    .route({
      method: 'post',
      path: '/customers/{id}/credits/grants',
      summary: 'Grant credits by hand (source manual), with a reason, an optional expiry and a priority',
      tags,
      security,
      params,
      body: CreateCreditGrantBody,
      responses: { 201: { description: 'The grant', schema: CreditGrant }, ...common, 422: invalidBody },
    })
    .route({
      method: 'post',
      path: '/customers/{id}/credits/spend',
      summary: 'Spend credits, once per idempotency_key: a repeat answers the first spend',
      tags,
      security,
      params,
      body: SpendCreditsBody,
      responses: {
        200: { description: 'The spend and the balance after it', schema: CreditSpend },
        ...common,
        400: error(`${common[400].description}; idempotency_key_mismatch: the key's spend had another amount`),
        402: insufficient,
        422: invalidBody,
      },
    })
    .route({
      method: 'post',
      path: '/customers/{id}/credits/adjustments',
      summary: 'Take credits back, with a reason; never below zero',
      tags,
      security,
      params,
      body: AdjustCreditsBody,
      responses: {
        201: { description: 'The adjustment', schema: CreditAdjustment },
        ...common,
        402: insufficient,
        422: invalidBody,
      },
    });
}
