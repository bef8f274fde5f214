import { z } from 'zod';
import { ApiError, ErrorEnvelope, PORTAL_ERROR_STATUS, type PortalErrorCode } from '../shared/errors';
import { Environment } from '../events/envelope';
import type { OpenApiRegistry } from '../shared/openapi';
import { idText } from '../shared/text';

// The customer portal (issue 15): portal sessions (public API) and portal configurations
// (admin API). Design and decisions: docs/customer-portal.md.

const timestamp = z.iso.datetime();

export const PORTAL_SESSION_LIMITS = {
  /** Spec: a portal session lives one hour. */
  lifetimeMs: 60 * 60_000,
  /** Spec: at most five active sessions per customer; a sixth revokes the oldest. */
  activePerCustomer: 5,
} as const;

/** Portal-session endpoints answer with their own codes and `error.type` = `invalid_request_error`. */
export const portalError = (code: PortalErrorCode, message: string, details?: unknown[]) =>
  new ApiError(PORTAL_ERROR_STATUS[code], code, message, details, 'invalid_request_error');

const PORTAL_CODE_OF: Record<string, PortalErrorCode> = {
  bad_request: 'invalid_param',
  validation_error: 'invalid_param',
  unauthorized: 'invalid_api_key',
};

/**
 * An error of a portal-session route as the spec shows it: a general bad request or key gets
 * the portal code (`invalid_param`, `invalid_api_key`), and every client error carries
 * `error.type` = `invalid_request_error`. Server errors stay as they are.
 */
export function asPortalError(error: ApiError): ApiError {
  if (error.type || error.status >= 500) return error;
  const code = PORTAL_CODE_OF[error.code];
  if (code) return portalError(code, error.message, error.details);
  return new ApiError(error.status, error.code, error.message, error.details, 'invalid_request_error');
}

export const PortalLocale = z.enum(['zh-TW', 'en']).meta({ id: 'PortalLocale' });
export type PortalLocale = z.infer<typeof PortalLocale>;

/** http or https, up to 2048 characters: the portal links back to it. */
export const ReturnUrl = z
  .string()
  .min(1)
  .max(2048)
  .refine(
    (value) => {
      try {
        return ['http:', 'https:'].includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    { message: 'an absolute http or https URL' },
  );

/**
 * `POST /portal/sessions`, after the camelCase names server SDKs send were turned into
 * snake_case (`normalizePortalSessionBody`). At least one of customer_id, external_id, email.
 */
export const CreatePortalSessionBody = z
  .strictObject({
    customer_id: idText().min(1).optional().describe('First in precedence'),
    external_id: idText().min(1).optional().describe('Second in precedence'),
    email: z.string().trim().min(1).max(255).optional().describe('Third in precedence'),
    return_url: ReturnUrl.optional().describe("Falls back to the configuration's default_return_url"),
    configuration_id: idText().min(1).optional().describe('A portal configuration (bpc_); the default one when absent'),
    locale: PortalLocale.optional().describe("The page's language; else the browser's Accept-Language"),
  })
  .meta({ id: 'CreatePortalSessionBody' });
export type CreatePortalSessionBody = z.infer<typeof CreatePortalSessionBody>;

/** The camelCase names that server SDKs send, and the snake_case name each one stands for. */
export const PORTAL_SESSION_ALIASES = {
  customerId: 'customer_id',
  externalId: 'external_id',
  returnUrl: 'return_url',
  configurationId: 'configuration_id',
} as const;

/** Moves camelCase names to snake_case; both given with different values are the conflicts returned. */
export function normalizePortalSessionBody(body: unknown): { body: unknown; conflicts: string[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { body, conflicts: [] };
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  const conflicts: string[] = [];
  for (const [camel, snake] of Object.entries(PORTAL_SESSION_ALIASES)) {
    if (!(camel in out)) continue;
    const value = out[camel];
    delete out[camel];
    if (snake in out && JSON.stringify(out[snake]) !== JSON.stringify(value)) conflicts.push(snake);
    else out[snake] = value;
  }
  return { body: out, conflicts };
}

export const PortalSessionStatus = z.enum(['active', 'expired', 'revoked']).meta({ id: 'PortalSessionStatus' });
export type PortalSessionStatus = z.infer<typeof PortalSessionStatus>;

export const PortalSession = z
  .object({
    object: z.literal('portal.session'),
    id: z.string().describe('Prefix portal_session_'),
    url: z.string().describe('The portal page, {portal_url}/<id>/<secret token>; give it to the customer only'),
    return_url: z.string(),
    customer_id: z.string(),
    configuration_id: z.string().nullable().describe('The configuration it was opened with; null for the built-in one'),
    locale: PortalLocale.nullable(),
    status: PortalSessionStatus,
    expires_at: timestamp.describe('One hour after created_at'),
    accessed_at: timestamp.nullable().describe('Last access of the page'),
    created_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'PortalSession' });
export type PortalSession = z.infer<typeof PortalSession>;

export const PortalSessionIdParams = z
  .object({ id: idText().describe('Portal session id, prefix portal_session_') })
  .meta({ id: 'PortalSessionIdParams' });

// ---------------------------------------------------------------- configurations (admin API)

export const CancelMode = z.enum(['at_period_end', 'immediately']);
export type CancelMode = z.infer<typeof CancelMode>;

/** What the customer may do in the portal; after Stripe's billing portal configuration. */
export const PortalFeatures = z
  .object({
    invoice_history: z.object({ enabled: z.boolean() }),
    payment_method_update: z.object({ enabled: z.boolean() }),
    cancel: z.object({
      enabled: z.boolean(),
      mode: CancelMode.describe('at_period_end: access to the end of the paid period; immediately: ends now'),
    }),
    subscription_update: z.object({
      enabled: z.boolean(),
      products: z.array(z.string()).describe('Product ids (prod_) a customer may switch to'),
    }),
  })
  .meta({ id: 'PortalFeatures' });
export type PortalFeatures = z.infer<typeof PortalFeatures>;

export const PortalBusinessProfile = z
  .object({
    name: z.string().nullable().describe("Shown at the top of the portal; the merchant's name"),
    privacy_policy_url: z.string().nullable(),
    terms_of_service_url: z.string().nullable(),
  })
  .meta({ id: 'PortalBusinessProfile' });
export type PortalBusinessProfile = z.infer<typeof PortalBusinessProfile>;

export const PortalConfiguration = z
  .object({
    object: z.literal('portal.configuration'),
    id: z.string().describe('Prefix bpc_'),
    name: z.string().nullable().describe("The merchant's own label"),
    is_default: z.boolean().describe('Used by sessions created without configuration_id'),
    active: z.boolean(),
    default_return_url: z.string().nullable(),
    business_profile: PortalBusinessProfile,
    features: PortalFeatures,
    environment: Environment,
    livemode: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'PortalConfiguration' });
export type PortalConfiguration = z.infer<typeof PortalConfiguration>;

const optionalUrl = ReturnUrl.nullable().optional();

const FeaturesInput = z.strictObject({
  invoice_history: z.strictObject({ enabled: z.boolean() }).optional(),
  payment_method_update: z.strictObject({ enabled: z.boolean() }).optional(),
  cancel: z.strictObject({ enabled: z.boolean().optional(), mode: CancelMode.optional() }).optional(),
  subscription_update: z
    .strictObject({
      enabled: z.boolean().optional(),
      products: z.array(idText().min(1)).max(10).optional(),
    })
    .optional(),
});
export type PortalFeaturesInput = z.infer<typeof FeaturesInput>;

const BusinessProfileInput = z.strictObject({
  name: z.string().trim().min(1).max(255).nullable().optional(),
  privacy_policy_url: optionalUrl,
  terms_of_service_url: optionalUrl,
});

const configurationFields = {
  name: z.string().trim().min(1).max(255).nullable().optional(),
  is_default: z.boolean().optional(),
  active: z.boolean().optional(),
  default_return_url: optionalUrl,
  business_profile: BusinessProfileInput.optional(),
  features: FeaturesInput.optional(),
};

export const AdminCreatePortalConfigurationBody = z
  .strictObject({ environment: Environment, ...configurationFields })
  .meta({ id: 'AdminCreatePortalConfigurationBody' });
export type AdminCreatePortalConfigurationBody = z.infer<typeof AdminCreatePortalConfigurationBody>;

export const AdminUpdatePortalConfigurationBody = z
  .strictObject(configurationFields)
  .meta({ id: 'AdminUpdatePortalConfigurationBody' });
export type AdminUpdatePortalConfigurationBody = z.infer<typeof AdminUpdatePortalConfigurationBody>;

/**
 * Without any configuration, a portal shows invoices, takes a new card and cancels at period
 * end; switching plans needs the merchant to name the products.
 */
export const DEFAULT_PORTAL_FEATURES: PortalFeatures = {
  invoice_history: { enabled: true },
  payment_method_update: { enabled: true },
  cancel: { enabled: true, mode: 'at_period_end' },
  subscription_update: { enabled: false, products: [] },
};

/** The features after a change: what the change names, the rest as they were. */
export function mergeFeatures(current: PortalFeatures, change: PortalFeaturesInput | undefined): PortalFeatures {
  if (!change) return current;
  return {
    invoice_history: { ...current.invoice_history, ...change.invoice_history },
    payment_method_update: { ...current.payment_method_update, ...change.payment_method_update },
    cancel: { ...current.cancel, ...change.cancel },
    subscription_update: { ...current.subscription_update, ...change.subscription_update },
  };
}

export function registerPortalRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const common = { tags: ['Portal sessions'], security: ['secretKey' as const] };
  return registry
    .route({
      method: 'post',
      path: '/portal/sessions',
      summary: 'Create a customer portal session (also accepts customerId, externalId, returnUrl, configurationId)',
      ...common,
      body: CreatePortalSessionBody,
      responses: {
        201: { description: 'The session; send the customer to its url', schema: PortalSession },
        400: error(
          'invalid_param (no customer_id, external_id or email, or a bad field), missing_return_url; ' +
            'idempotency_key_mismatch. error.type is invalid_request_error',
        ),
        401: error('invalid_api_key: a Secret Key is needed'),
        404: error('customer_not_found'),
      },
    })
    .route({
      method: 'get',
      path: '/portal/sessions/{id}',
      summary: 'Retrieve a customer portal session',
      ...common,
      params: PortalSessionIdParams,
      responses: {
        200: { description: 'The session', schema: PortalSession },
        400: error('invalid_param: a bad id'),
        401: error('invalid_api_key: a Secret Key is needed'),
        404: error('not_found: no such portal session'),
      },
    });
}
