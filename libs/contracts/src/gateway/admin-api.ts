import { z } from 'zod';
import { Customer, Invoice, InvoiceStatus, Subscription } from '../billing/billing';
import { BillingSettings, BillingSettingsQuery, UpdateBillingSettingsBody } from '../billing/billing-settings';
import { ConfigureEinvoiceBody, EinvoiceSettings } from '../billing/einvoices';
import { ConfigurePaymentProcessorBody, PaymentProcessorSettings } from '../checkout/payment-processor';
import { UnmatchedPayment } from '../checkout/events';
import { ChargeTrade } from '../checkout/charges';
import { PaymentInstructions } from '../checkout/sessions';
import { Order } from '../checkout/orders';
import { Refund, RefundStatus } from '../checkout/refunds';
import { ErrorEnvelope } from '../shared/errors';
import { Environment } from '../events/envelope';
import { KeyKind } from '../shared/identity';
import { limitParam, listEnvelope, startingAfterParam } from '../shared/list';
import { Metrics, MetricsQuery } from '../billing/metrics';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import {
  AdminCreatePortalConfigurationBody,
  AdminUpdatePortalConfigurationBody,
  PortalConfiguration,
} from '../billing/portal';
import { CreateProductBody, Product, UpdateProductBody } from '../catalog/products';
import { AdminCreateCouponBody, Coupon } from '../promotions/promotions';
import { RecordHistory, RecordHistoryQuery } from './record-history';
import { idText } from '../shared/text';
import { CreateOAuthAppBody, CreatedOAuthApp, OAuthApp, OAuthAppParams } from './oauth-apps';
import {
  Email,
  EmailList,
  EmailSettings,
  EmailSettingsQuery,
  MailboxQuery,
  UpdateEmailSettingsBody,
} from '../notifications/emails';
import {
  AdminCreateWebhookEndpointBody,
  AdminUpdateWebhookEndpointBody,
  ListWebhookDeliveriesQuery,
  ListWebhookEventsQuery,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEvent,
  WebhookEventList,
  WebhookEventQuery,
} from '../notifications/webhooks';

// ---------------------------------------------------------------- organizations

export const CreateOrganizationBody = z
  .object({ name: z.string().trim().min(1).max(255) })
  .meta({ id: 'CreateOrganizationBody' });
export const OrganizationParams = z.object({ org_id: idText().min(1).describe('prefix org_') });
export const ListOrganizationsQuery = z.object({
  limit: limitParam(20),
  starting_after: startingAfterParam('organization'),
});
export const RollKeyBody = z.object({ environment: Environment, type: KeyKind }).meta({ id: 'RollKeyBody' });

/** An origin as browsers send it: scheme, host and port only, no path or trailing slash. */
const Origin = z
  .string()
  .max(255)
  .refine((value) => URL.canParse(value) && new URL(value).origin === value && /^https?:/.test(value), {
    message: 'Give an origin such as https://shop.example (scheme, host and port only)',
  });
const HttpUrl = z
  .string()
  .max(2048)
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
    message: 'Give an http(s) URL',
  });
export const UpdateOrganizationBody = z
  .object({
    name: z.string().trim().min(1).max(255),
    allowed_origins: z.array(Origin).max(50),
    logo_url: HttpUrl.nullable(),
    website_url: HttpUrl.nullable(),
    brand_color: z
      .string()
      .max(7)
      .regex(/^#[0-9a-fA-F]{6}$/, 'Give a colour as #rrggbb')
      .transform((value) => value.toLowerCase())
      .nullable(),
  })
  .partial()
  .strict()
  .meta({ id: 'UpdateOrganizationBody' });

const timestamp = z.iso.datetime();
const Keys = z.object({ secret_key: z.string(), publishable_key: z.string() });

export const CreatedOrganization = z
  .object({
    id: z.string().describe('prefix org_'),
    name: z.string(),
    api_keys: z.object({ sandbox: Keys, production: Keys }).describe('Shown once'),
  })
  .meta({ id: 'CreatedOrganization' });

export const Organization = z
  .object({
    object: z.literal('organization'),
    id: z.string(),
    name: z.string(),
    created_at: timestamp,
    allowed_origins: z.array(z.string()),
    logo_url: z.string().nullable(),
    website_url: z.string().nullable(),
    brand_color: z.string().nullable(),
    api_keys: z.array(
      z.object({
        id: z.string().describe('prefix key_'),
        environment: Environment,
        type: KeyKind,
        last4: z.string(),
        created_at: timestamp,
        revoked_at: timestamp.nullable(),
      }),
    ),
  })
  .meta({ id: 'Organization' });

export const OrganizationList = z
  .object({ object: z.literal('list'), data: z.array(Organization), has_more: z.boolean() })
  .meta({ id: 'OrganizationList' });

export const RolledApiKey = z
  .object({
    object: z.literal('api_key'),
    id: z.string(),
    environment: Environment,
    type: KeyKind,
    key: z.string().describe('Shown once'),
    last4: z.string(),
  })
  .meta({ id: 'RolledApiKey' });

/** Dashboard users (the dashboard's `users.ts` validates the body; this describes it). */
export const CreateDashboardUserBody = z
  .strictObject({
    email: z.email().max(254),
    role: z.enum(['owner', 'member']),
    password: z.string().min(10).max(200).optional().describe('Omitted: an invited user, who sets it'),
  })
  .meta({ id: 'CreateDashboardUserBody' });
export const DashboardUser = z
  .object({
    object: z.literal('dashboard_user'),
    id: z.string().describe('prefix usr_'),
    organization_id: z.string(),
    email: z.string(),
    role: z.enum(['owner', 'member']),
    status: z.enum(['active', 'invited']),
    created_at: z.string(),
    invite_path: z.string().optional().describe('Only when created without a password: /dashboard/invite/<token>'),
  })
  .meta({ id: 'DashboardUser' });

const EnvironmentQuery = z.object({ environment: Environment.optional().describe('Omitted: both') });
const WebhookEndpointParams = OrganizationParams.extend({ endpoint_id: idText().min(1).describe('prefix wh_') });
const WebhookDeliveryList = listEnvelope(WebhookDelivery).extend({ has_more: z.boolean() });

// ---------------------------------------------------------------- OpenAPI

/**
 * Every `/admin/v1` route (docs/dashboard-api.md, README), for `GET /admin/v1/openapi.json`. The
 * gateway's test compares it with the routes it registers, so a new route cannot be left out.
 */
export function registerAdminRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const security = ['adminToken' as const];
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const missing = error('not_found: no such organization (or record)');
  const route = (doc: Parameters<OpenApiRegistry['route']>[0]) =>
    registry.route({
      security,
      ...doc,
      responses: { 401: error('unauthorized: admin token required'), ...doc.responses },
    });
  const org = '/organizations/{org_id}';
  const params = OrganizationParams;
  const forwarded = (description: string) => ({ description });

  registry.route({
    method: 'get',
    path: '/openapi.json',
    summary: 'This document (no token needed)',
    tags: ['Meta'],
    responses: { 200: { description: 'OpenAPI 3.1' } },
  });
  route({
    method: 'post',
    path: '/organizations',
    summary: 'Create an organization and its four API keys',
    tags: ['Organizations'],
    body: CreateOrganizationBody,
    responses: { 201: { description: 'Created', schema: CreatedOrganization }, 422: error('validation_error') },
  });
  route({
    method: 'get',
    path: '/organizations',
    summary: 'Every organization, newest first',
    tags: ['Organizations'],
    query: ListOrganizationsQuery,
    responses: { 200: { description: 'One page', schema: OrganizationList }, 400: invalidParametersResponse },
  });
  route({
    method: 'get',
    path: org,
    summary: 'An organization, its settings and its keys (last four only)',
    tags: ['Organizations'],
    params,
    responses: { 200: { description: 'The organization', schema: Organization }, 404: missing },
  });
  route({
    method: 'patch',
    path: org,
    summary: 'Change the name, allowed origins or branding',
    tags: ['Organizations'],
    params,
    body: UpdateOrganizationBody,
    responses: {
      200: { description: 'The organization', schema: Organization },
      404: missing,
      422: error('validation_error'),
    },
  });
  route({
    method: 'post',
    path: `${org}/api_keys/roll`,
    summary: 'Roll a key: the old one is revoked at once, the new one shown once',
    tags: ['Organizations'],
    params,
    body: RollKeyBody,
    responses: {
      201: { description: 'The new key', schema: RolledApiKey },
      404: missing,
      422: error('validation_error'),
    },
  });
  route({
    method: 'get',
    path: `${org}/events`,
    summary: "A record's event history, oldest first, with who did each thing",
    tags: ['Dashboard'],
    params,
    query: RecordHistoryQuery,
    responses: {
      200: { description: 'One page of the history', schema: RecordHistory },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/metrics`,
    summary: 'Daily MRR, subscriptions and payments (Asia/Taipei days, zeros included)',
    tags: ['Dashboard'],
    params,
    query: MetricsQuery,
    responses: { 200: { description: 'The series', schema: Metrics }, 400: invalidParametersResponse, 404: missing },
  });
  route({
    method: 'get',
    path: `${org}/customers`,
    summary: 'Search customers by email, external id or any part of them, newest first',
    tags: ['Dashboard'],
    params,
    query: AdminCustomersQuery,
    responses: {
      200: {
        description: 'One page',
        schema: z.object({ object: z.literal('list'), data: z.array(Customer), has_more: z.boolean() }),
      },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/customers/{customer_id}/payments`,
    summary: "A customer's invoice payments and failed charges, newest first",
    tags: ['Dashboard'],
    params: params.extend({ customer_id: idText().min(1).describe('prefix cus_') }),
    query: CustomerPaymentsQuery,
    responses: {
      200: { description: 'One page', schema: CustomerPaymentList },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/invoices`,
    summary: 'Invoices by status, customer, creation time, number or id, newest first, each with its customer',
    tags: ['Dashboard'],
    params,
    query: AdminInvoicesQuery,
    responses: {
      200: {
        description: 'One page',
        schema: z.object({ object: z.literal('list'), data: z.array(AdminInvoice), has_more: z.boolean() }),
      },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/payments`,
    summary: "The organization's invoice charges (paid or declined) recorded in a time range, newest first",
    tags: ['Dashboard'],
    params,
    query: PaymentsQuery,
    responses: {
      200: {
        description: 'One page',
        schema: z.object({ object: z.literal('list'), data: z.array(OrganizationPayment), has_more: z.boolean() }),
      },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/orders`,
    summary: "The organization's one-time purchases paid in a time range, newest paid first",
    tags: ['Dashboard'],
    params,
    query: OrdersQuery,
    responses: {
      200: {
        description: 'One page',
        schema: z.object({ object: z.literal('list'), data: z.array(OrganizationOrder), has_more: z.boolean() }),
      },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/orders/awaiting_payment`,
    summary: 'Orders waiting for an ATM or convenience-store payment, the most recently issued first',
    tags: ['Dashboard'],
    params,
    query: AwaitingOrdersQuery,
    responses: {
      200: {
        description: 'One page',
        schema: z.object({ object: z.literal('list'), data: z.array(AwaitingOrder), has_more: z.boolean() }),
      },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/orders/{order_id}`,
    summary: "A paid order by its id (prefix ord_): a one-time purchase or a subscription's first payment",
    tags: ['Dashboard'],
    params: params.extend({ order_id: idText().min(1) }),
    query: OrderQuery,
    responses: {
      200: { description: 'The order', schema: OrganizationOrder },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/refunds`,
    summary: "The organization's refunds of orders and invoices, by status and creation time, newest first",
    tags: ['Dashboard'],
    params,
    query: AdminRefundsQuery,
    responses: {
      200: {
        description: 'One page',
        schema: z.object({ object: z.literal('list'), data: z.array(AdminRefund), has_more: z.boolean() }),
      },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/customers/{customer_id}/orders`,
    summary: "A customer's one-time purchases at checkout (one-time, credits, donations), newest paid first",
    tags: ['Dashboard'],
    params: params.extend({ customer_id: idText().min(1).describe('prefix cus_') }),
    query: CustomerOrdersQuery,
    responses: {
      200: { description: 'One page (empty for a customer with none)', schema: CustomerOrderList },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/subscriptions`,
    summary: 'Subscriptions by status and customer, newest first',
    tags: ['Dashboard'],
    params,
    query: AdminSubscriptionsQuery,
    responses: {
      200: {
        description: 'One page',
        schema: z.object({ object: z.literal('list'), data: z.array(AdminSubscription), has_more: z.boolean() }),
      },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/pending_charges`,
    summary: 'Charges whose outcome is not recorded yet (docs/lost-answers.md), oldest first',
    tags: ['Dashboard'],
    params,
    query: AdminPendingChargesQuery,
    responses: {
      200: {
        description: 'Every such charge of the environment',
        schema: z.object({ object: z.literal('list'), data: z.array(PendingCharge), has_more: z.literal(false) }),
      },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'post',
    path: `${org}/products`,
    summary: 'Create a product',
    tags: ['Products'],
    params,
    body: CreateProductBody,
    responses: { 201: { description: 'Created', schema: Product }, 404: missing, 422: error('validation_error') },
  });
  route({
    method: 'patch',
    path: `${org}/products/{product_id}`,
    summary: 'Edit, archive (`active: false`) or restore a product',
    tags: ['Products'],
    params: params.extend({ product_id: idText().describe('prefix prod_') }),
    body: UpdateProductBody,
    responses: { 200: { description: 'The product', schema: Product }, 404: missing, 422: error('validation_error') },
  });
  route({
    method: 'post',
    path: `${org}/coupons`,
    summary: 'Create a coupon',
    tags: ['Coupons'],
    params,
    body: AdminCreateCouponBody,
    responses: { 201: { description: 'Created', schema: Coupon }, 404: missing, 422: error('validation_error') },
  });

  route({
    method: 'post',
    path: `${org}/users`,
    summary: 'Create a dashboard user, with a password or invited',
    tags: ['Dashboard'],
    params,
    body: CreateDashboardUserBody,
    responses: {
      201: { description: 'Created', schema: DashboardUser },
      404: missing,
      409: error('conflict: a user with this email exists'),
      422: error('validation_error'),
    },
  });
  route({
    method: 'get',
    path: `${org}/users`,
    summary: "The organization's dashboard users",
    tags: ['Dashboard'],
    params,
    responses: {
      200: {
        description: 'Every user',
        schema: z.object({ object: z.literal('list'), data: z.array(DashboardUser), has_more: z.boolean() }),
      },
      404: missing,
    },
  });
  route({
    method: 'delete',
    path: `${org}/users/{user_id}`,
    summary: 'Remove a dashboard user and end their sessions',
    tags: ['Dashboard'],
    params: params.extend({ user_id: idText().min(1).describe('prefix usr_') }),
    responses: { 200: forwarded('`{ object: "dashboard_user", id, deleted: true }`'), 404: missing },
  });

  const endpoint = `${org}/webhook_endpoints/{endpoint_id}`;
  route({
    method: 'post',
    path: `${org}/webhook_endpoints`,
    summary: 'Create a webhook endpoint (its secret shown in the answer)',
    tags: ['Webhooks'],
    params,
    body: AdminCreateWebhookEndpointBody,
    responses: {
      201: { description: 'Created', schema: WebhookEndpoint },
      404: missing,
      422: error('validation_error'),
    },
  });
  route({
    method: 'get',
    path: `${org}/webhook_endpoints`,
    summary: 'The webhook endpoints of an environment',
    tags: ['Webhooks'],
    params,
    query: EnvironmentQuery,
    responses: {
      200: { description: 'The endpoints', schema: WebhookEndpointList },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: endpoint,
    summary: 'A webhook endpoint with its signing secret',
    tags: ['Webhooks'],
    params: WebhookEndpointParams,
    responses: { 200: { description: 'The endpoint', schema: WebhookEndpoint }, 404: missing },
  });
  route({
    method: 'patch',
    path: endpoint,
    summary: 'Edit a webhook endpoint',
    tags: ['Webhooks'],
    params: WebhookEndpointParams,
    body: AdminUpdateWebhookEndpointBody,
    responses: {
      200: { description: 'The endpoint', schema: WebhookEndpoint },
      404: missing,
      422: error('validation_error'),
    },
  });
  route({
    method: 'delete',
    path: endpoint,
    summary: 'Delete a webhook endpoint',
    tags: ['Webhooks'],
    params: WebhookEndpointParams,
    responses: { 200: forwarded('`{ id, deleted: true }`'), 404: missing },
  });
  route({
    method: 'post',
    path: `${endpoint}/secret/roll`,
    summary: "Roll an endpoint's signing secret (the new one shown once)",
    tags: ['Webhooks'],
    params: WebhookEndpointParams,
    responses: { 200: { description: 'The endpoint with its new secret', schema: WebhookEndpoint }, 404: missing },
  });
  route({
    method: 'get',
    path: `${endpoint}/deliveries`,
    summary: "An endpoint's delivery log, newest first, with each attempt",
    tags: ['Webhooks'],
    params: WebhookEndpointParams,
    query: ListWebhookDeliveriesQuery,
    responses: {
      200: { description: 'The deliveries', schema: WebhookDeliveryList },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  const event = params.extend({ event_id: idText().min(1).describe('prefix evt_') });
  route({
    method: 'get',
    path: `${org}/webhook_events`,
    summary: "The organization's public events of an environment (kept 30 days), newest first, by type and record",
    tags: ['Webhooks'],
    params,
    query: ListWebhookEventsQuery,
    responses: {
      200: { description: 'One page', schema: WebhookEventList },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/webhook_events/{event_id}`,
    summary: 'A public event as webhooks carry it',
    tags: ['Webhooks'],
    params: event,
    query: WebhookEventQuery,
    responses: {
      200: { description: 'The event', schema: WebhookEvent },
      400: invalidParametersResponse,
      404: missing,
    },
  });
  route({
    method: 'get',
    path: `${org}/webhook_events/{event_id}/deliveries`,
    summary: "An event's deliveries to every endpoint",
    tags: ['Webhooks'],
    params: params.extend({ event_id: idText().describe('prefix evt_') }),
    responses: { 200: { description: 'The deliveries', schema: WebhookDeliveryList }, 404: missing },
  });
  const delivery = params.extend({ delivery_id: idText().describe('prefix whd_') });
  route({
    method: 'get',
    path: `${org}/webhook_deliveries/{delivery_id}`,
    summary: 'A delivery with its attempts',
    tags: ['Webhooks'],
    params: delivery,
    responses: { 200: { description: 'The delivery', schema: WebhookDelivery }, 404: missing },
  });
  route({
    method: 'post',
    path: `${org}/webhook_deliveries/{delivery_id}/replay`,
    summary: 'Send a delivery again',
    tags: ['Webhooks'],
    params: delivery,
    responses: { 202: { description: 'The new delivery', schema: WebhookDelivery }, 404: missing },
  });

  route({
    method: 'get',
    path: `${org}/emails`,
    summary: "The mailbox: every email written to the environment's buyers, newest first",
    tags: ['Emails'],
    params,
    query: MailboxQuery,
    responses: { 200: { description: 'A page of emails', schema: EmailList }, 400: invalidParametersResponse },
  });
  route({
    method: 'get',
    path: `${org}/emails/{email_id}`,
    summary: 'An email as the buyer got it (or would have: Sandbox keeps them)',
    tags: ['Emails'],
    params: params.extend({ email_id: idText().describe('prefix eml_') }),
    responses: { 200: { description: 'The email', schema: Email }, 404: missing },
  });
  route({
    method: 'get',
    path: `${org}/email_settings`,
    summary: 'Which emails buyers get in an environment',
    tags: ['Emails'],
    params,
    query: EmailSettingsQuery,
    responses: { 200: { description: 'The settings', schema: EmailSettings }, 400: invalidParametersResponse },
  });
  route({
    method: 'patch',
    path: `${org}/email_settings`,
    summary: 'Switch kinds of email on (true) or off (false); kinds not named keep their setting',
    tags: ['Emails'],
    params,
    body: UpdateEmailSettingsBody,
    responses: { 200: { description: 'The settings', schema: EmailSettings }, 422: error('validation_error') },
  });

  route({
    method: 'get',
    path: `${org}/billing_settings`,
    summary: 'Dunning, proration and credits settings of an environment',
    tags: ['Billing settings'],
    params,
    query: BillingSettingsQuery,
    responses: { 200: { description: 'The settings', schema: BillingSettings }, 400: invalidParametersResponse },
  });
  route({
    method: 'patch',
    path: `${org}/billing_settings`,
    summary: 'Change dunning, proration and credits settings',
    tags: ['Billing settings'],
    params,
    body: UpdateBillingSettingsBody,
    responses: { 200: { description: 'The settings', schema: BillingSettings }, 422: error('validation_error') },
  });
  const processorResponse = {
    description: 'The processor settings, without credentials',
    schema: PaymentProcessorSettings,
  };
  route({
    method: 'get',
    path: `${org}/payment_processor`,
    summary: 'The payment processor of an environment',
    tags: ['Payments'],
    params,
    query: BillingSettingsQuery,
    responses: { 200: processorResponse, 400: invalidParametersResponse },
  });
  route({
    method: 'put',
    path: `${org}/payment_processor`,
    summary: 'Set the payment processor of an environment and its credentials (stored sealed, never returned)',
    tags: ['Payments'],
    params,
    query: BillingSettingsQuery,
    body: ConfigurePaymentProcessorBody,
    responses: { 200: processorResponse, 422: error('validation_error') },
  });
  route({
    method: 'delete',
    path: `${org}/payment_processor`,
    summary: 'Remove the payment processor: Sandbox returns to the simulator, Production refuses payments',
    tags: ['Payments'],
    params,
    query: BillingSettingsQuery,
    responses: { 200: processorResponse, 400: invalidParametersResponse },
  });
  const einvoiceResponse = { description: 'The e-invoice settings, without credentials', schema: EinvoiceSettings };
  route({
    method: 'get',
    path: `${org}/einvoice_settings`,
    summary: 'The e-invoice provider of an environment',
    tags: ['E-invoices'],
    params,
    query: BillingSettingsQuery,
    responses: { 200: einvoiceResponse, 400: invalidParametersResponse },
  });
  route({
    method: 'put',
    path: `${org}/einvoice_settings`,
    summary:
      'Set the e-invoice provider of an environment, its credentials (stored sealed, never returned), the seller tax id and tax type; provider none turns e-invoices off',
    tags: ['E-invoices'],
    params,
    query: BillingSettingsQuery,
    body: ConfigureEinvoiceBody,
    responses: { 200: einvoiceResponse, 422: error('validation_error') },
  });
  route({
    method: 'get',
    path: `${org}/unmatched_payments`,
    summary: 'Payments the processor took that no checkout recorded, to refund by hand (at most 100, newest first)',
    tags: ['Payments'],
    params,
    query: BillingSettingsQuery,
    responses: {
      200: { description: 'The list', schema: listEnvelope(UnmatchedPayment).meta({ id: 'UnmatchedPaymentList' }) },
      400: invalidParametersResponse,
    },
  });
  const configuration = params.extend({ configuration_id: idText().describe('prefix bpc_') });
  route({
    method: 'post',
    path: `${org}/portal_configurations`,
    summary: 'Create a customer portal configuration',
    tags: ['Customer portal'],
    params,
    body: AdminCreatePortalConfigurationBody,
    responses: { 201: { description: 'Created', schema: PortalConfiguration }, 422: error('validation_error') },
  });
  route({
    method: 'get',
    path: `${org}/portal_configurations`,
    summary: 'The customer portal configurations',
    tags: ['Customer portal'],
    params,
    query: EnvironmentQuery,
    responses: { 200: forwarded('`{ object: "list", data: [PortalConfiguration] }`') },
  });
  route({
    method: 'get',
    path: `${org}/portal_configurations/{configuration_id}`,
    summary: 'A customer portal configuration',
    tags: ['Customer portal'],
    params: configuration,
    responses: { 200: { description: 'The configuration', schema: PortalConfiguration }, 404: missing },
  });
  route({
    method: 'patch',
    path: `${org}/portal_configurations/{configuration_id}`,
    summary: 'Edit a customer portal configuration',
    tags: ['Customer portal'],
    params: configuration,
    body: AdminUpdatePortalConfigurationBody,
    responses: {
      200: { description: 'The configuration', schema: PortalConfiguration },
      404: missing,
      422: error('validation_error'),
    },
  });

  const oauthApp = `${org}/oauth_apps/{client_id}`;
  route({
    method: 'post',
    path: `${org}/oauth_apps`,
    summary: 'Register an app that connects with OAuth 2.0 (its client_secret shown once; docs/oauth.md)',
    tags: ['OAuth apps'],
    params,
    body: CreateOAuthAppBody,
    responses: {
      201: { description: 'The app', schema: CreatedOAuthApp },
      404: missing,
      422: error('validation_error'),
    },
  });
  route({
    method: 'get',
    path: `${org}/oauth_apps`,
    summary: "The organization's apps, latest first",
    tags: ['OAuth apps'],
    params,
    responses: {
      200: { description: 'The apps', schema: z.object({ object: z.literal('list'), data: z.array(OAuthApp) }) },
      404: missing,
    },
  });
  route({
    method: 'delete',
    path: oauthApp,
    summary: 'Delete an app: its grants, codes and tokens are revoked at once',
    tags: ['OAuth apps'],
    params: OAuthAppParams,
    responses: { 200: forwarded('`{ object: "oauth_app", id, deleted: true }`'), 404: missing },
  });
  return registry;
}

// ---------------------------------------------------------------- dashboard reads the public API lacks

const adminLimit = limitParam(20);

/** A list's creation-time range (the dashboard sends Taipei days' bounds); either end may stay open. */
const createdFrom = z.iso
  .datetime({ offset: true })
  .optional()
  .describe('Created at or after (ISO 8601 with an offset)');
const createdBefore = z.iso.datetime({ offset: true }).optional().describe('Created before (ISO 8601 with an offset)');

export const AdminCustomersQuery = z
  .object({
    environment: Environment,
    email: z.string().max(254).optional().describe('Exact, case-insensitive'),
    external_id: idText().optional().describe('Exact'),
    query: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('Case-insensitive part of the email, name, external id or id'),
    from: createdFrom,
    to: createdBefore,
    limit: adminLimit,
    starting_after: startingAfterParam('customer'),
  })
  .meta({ id: 'AdminCustomersQuery' });
export type AdminCustomersQuery = z.infer<typeof AdminCustomersQuery>;

export const AdminPendingChargesQuery = z.object({ environment: Environment }).meta({ id: 'AdminPendingChargesQuery' });
export type AdminPendingChargesQuery = z.infer<typeof AdminPendingChargesQuery>;

/**
 * A charge asked of the processor whose outcome billing has not recorded yet: its answer was
 * lost, or billing stopped between the charge and its record. The reconciler asks the processor
 * for it by `idempotency_key`; one listed for long means the processor cannot be reached.
 */
export const PendingCharge = z
  .object({
    object: z.literal('pending_charge'),
    idempotency_key: z.string().describe('The processor idempotency key: <invoice>:<attempt>'),
    purpose: z
      .enum(['invoice', 'first_period', 'switch'])
      .describe(
        'invoice: a renewal, dunning or new-card attempt; first_period: a direct creation; switch: a plan switch holding its subscription',
      ),
    subject: z.string().describe('The invoice (invoice), or the subscription (first_period, switch)'),
    attempt: z.int().min(1),
    amount: z.int().min(0).describe('TWD'),
    asked_at: z.string().describe('When the charge was asked (ISO 8601, UTC)'),
  })
  .meta({ id: 'PendingCharge' });
export type PendingCharge = z.infer<typeof PendingCharge>;

export const AdminSubscriptionsQuery = z
  .object({
    environment: Environment,
    status: z.enum(['ACTIVE', 'TRIAL', 'PAST_DUE', 'CANCELED']).optional(),
    customer: idText().optional().describe('prefix cus_'),
    from: createdFrom,
    to: createdBefore,
    limit: adminLimit,
    starting_after: startingAfterParam('subscription'),
  })
  .meta({ id: 'AdminSubscriptionsQuery' });
export type AdminSubscriptionsQuery = z.infer<typeof AdminSubscriptionsQuery>;

/** A subscription as the dashboard lists it: with whom it bills, by email and name. */
export const AdminSubscription = Subscription.extend({
  customer_email: z.string().nullable(),
  customer_name: z.string().nullable(),
}).meta({ id: 'AdminSubscription' });
export type AdminSubscription = z.infer<typeof AdminSubscription>;

export const CustomerPaymentsQuery = z
  .object({
    environment: Environment,
    limit: adminLimit,
    starting_after: startingAfterParam('payment'),
  })
  .meta({ id: 'CustomerPaymentsQuery' });
export type CustomerPaymentsQuery = z.infer<typeof CustomerPaymentsQuery>;

export const CustomerPayment = z
  .object({
    object: z.literal('payment'),
    id: z.string().describe('<invoice id>:<version of the invoice event>'),
    invoice_id: z.string(),
    subscription_id: z.string().nullable(),
    amount: z.int().min(0).describe('TWD: paid, or due when it failed'),
    currency: z.literal('TWD'),
    status: z.enum(['succeeded', 'failed']),
    failure_message: z.string().nullable(),
    processor: ChargeTrade.shape.processor
      .nullable()
      .describe('Who charged it; null: unknown (nothing charged, or before it was recorded)'),
    processor_reference: ChargeTrade.shape.processor_reference.nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'CustomerPayment' });
export type CustomerPayment = z.infer<typeof CustomerPayment>;

/** `ids=in_a,in_b`: at most a page of invoices, named by id. */
const InvoiceIds = z
  .string()
  .max(100 * 41)
  .transform((value) => value.split(','))
  .pipe(z.array(idText().min(1)).min(1).max(100))
  .optional()
  .describe('Only these invoices: ids separated by commas, at most 100');

export const AdminInvoicesQuery = z
  .object({
    environment: Environment,
    number: z.string().min(1).max(40).optional().describe('The invoice number, exact in any case (INV-000042)'),
    status: InvoiceStatus.optional(),
    customer: idText().optional().describe('prefix cus_'),
    awaiting_transfer: z
      .literal('true')
      .optional()
      .describe('Only open invoices waiting for an ATM or convenience-store payment (`payment_instructions` set)'),
    ids: InvoiceIds,
    from: createdFrom,
    to: createdBefore,
    limit: adminLimit,
    starting_after: startingAfterParam('invoice'),
  })
  .meta({ id: 'AdminInvoicesQuery' });
export type AdminInvoicesQuery = z.infer<typeof AdminInvoicesQuery>;

/** An invoice as the dashboard lists it: with its customer's email. */
export const AdminInvoice = Invoice.extend({ customer_email: z.string().nullable() }).meta({ id: 'AdminInvoice' });
export type AdminInvoice = z.infer<typeof AdminInvoice>;

export const CustomerOrdersQuery = z
  .object({
    environment: Environment,
    limit: adminLimit,
    starting_after: startingAfterParam('order'),
  })
  .meta({ id: 'CustomerOrdersQuery' });
export type CustomerOrdersQuery = z.infer<typeof CustomerOrdersQuery>;

/** A one-time purchase (a ONE_TIME, CREDITS or DONATION product) the customer paid at checkout. */
export const CustomerOrder = z
  .object({
    object: z.literal('order'),
    id: z.string().describe('prefix ord_'),
    checkout_session_id: z.string(),
    product: z.object({ id: z.string(), name: z.string(), type: z.string() }),
    amount: z.int().min(0).describe('TWD paid'),
    amount_refunded: z.int().min(0),
    currency: z.literal('TWD'),
    status: z.enum(['paid', 'partially_refunded', 'refunded']),
    payment_method: z.object({ brand: z.string(), last4: z.string() }).nullable(),
    processor: Order.shape.processor,
    processor_reference: Order.shape.processor_reference,
    refunds: Order.shape.refunds,
    paid_at: timestamp,
  })
  .meta({ id: 'CustomerOrder' });
export type CustomerOrder = z.infer<typeof CustomerOrder>;

export const OrganizationOrder = CustomerOrder.extend({
  customer_id: z.string().nullable(),
  customer_email: z.string().nullable(),
}).meta({ id: 'OrganizationOrder' });
export type OrganizationOrder = z.infer<typeof OrganizationOrder>;

export const CustomerOrderList = z
  .object({ object: z.literal('list'), data: z.array(CustomerOrder), has_more: z.boolean() })
  .meta({ id: 'CustomerOrderList' });

/** An organization's payments list: a time range (the dashboard sends a Taipei month's bounds). */
export const PaymentsQuery = z
  .object({
    environment: Environment,
    from: z.iso.datetime({ offset: true }).describe('Recorded at or after'),
    to: z.iso.datetime({ offset: true }).describe('Recorded before'),
    status: z.enum(['succeeded', 'failed']).optional().describe('Paid charges only, or declined ones only'),
    limit: adminLimit,
    starting_after: startingAfterParam('payment'),
  })
  .meta({ id: 'PaymentsQuery' });
export type PaymentsQuery = z.infer<typeof PaymentsQuery>;

/**
 * An order waiting for its buyer to pay at an ATM or a convenience store: the checkout's account
 * or code, its deadline and the processor's trade.
 */
export const AwaitingOrder = z
  .object({
    object: z.literal('order'),
    id: z.string().describe('prefix ord_'),
    checkout_session_id: z.string(),
    product: z.object({ id: z.string(), name: z.string(), type: z.string() }),
    amount: z.int().min(0).describe('TWD to pay'),
    currency: z.literal('TWD'),
    status: z.literal('awaiting_payment'),
    customer_id: z.string().nullable(),
    customer_email: z.string().nullable(),
    processor: z.enum(['ecpay', 'payuni']),
    processor_reference: z.string().describe("ECPay's MerchantTradeNo, PAYUNi's MerTradeNo"),
    payment_instructions: PaymentInstructions,
    issued_at: timestamp,
  })
  .meta({ id: 'AwaitingOrder' });
export type AwaitingOrder = z.infer<typeof AwaitingOrder>;

export const AwaitingOrdersQuery = z
  .object({ environment: Environment, limit: adminLimit, starting_after: startingAfterParam('order') })
  .meta({ id: 'AwaitingOrdersQuery' });
export type AwaitingOrdersQuery = z.infer<typeof AwaitingOrdersQuery>;

export const OrderQuery = z.object({ environment: Environment }).meta({ id: 'OrderQuery' });

export const OrdersQuery = PaymentsQuery.omit({ status: true })
  .extend({ starting_after: startingAfterParam('order') })
  .meta({ id: 'OrdersQuery' });
export type OrdersQuery = z.infer<typeof OrdersQuery>;

export const OrganizationPayment = CustomerPayment.extend({
  customer_id: z.string(),
  customer_email: z.string().nullable(),
}).meta({
  id: 'OrganizationPayment',
});
export type OrganizationPayment = z.infer<typeof OrganizationPayment>;

export const CustomerPaymentList = z
  .object({ object: z.literal('list'), data: z.array(CustomerPayment), has_more: z.boolean() })
  .meta({ id: 'CustomerPaymentList' });

export const AdminRefundsQuery = z
  .object({
    environment: Environment,
    status: RefundStatus.optional(),
    invoices: InvoiceIds.describe(
      "Only refunds of these invoices (a customer's page): ids separated by commas, at most 100",
    ),
    from: createdFrom,
    to: createdBefore,
    limit: adminLimit,
    starting_after: startingAfterParam('refund'),
  })
  .meta({ id: 'AdminRefundsQuery' });
export type AdminRefundsQuery = z.infer<typeof AdminRefundsQuery>;

/**
 * A refund as the dashboard lists it: with the buyer and the product of the order it gives money
 * back from, as checkout's session knows them. A renewal invoice's refund has no order: its
 * customer is the invoice's (`GET .../invoices?ids=`).
 */
export const AdminRefund = Refund.extend({
  customer_id: z.string().nullable(),
  customer_email: z.string().nullable(),
  product_name: z.string().nullable(),
}).meta({ id: 'AdminRefund' });
export type AdminRefund = z.infer<typeof AdminRefund>;
