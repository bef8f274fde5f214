import {
  CreateOrganizationBody,
  type Environment,
  type KeyKind,
  IDENTITY_HEADERS,
  ListOrganizationsQuery,
  OrganizationParams,
  RollKeyBody,
  UpdateOrganizationBody,
  MetricsQuery,
  RecordHistoryQuery,
  metricsRange,
  notFound,
  recordStreamOf,
  unknownCursor,
} from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import { validate } from '@billing/service';
import type { Express, RequestHandler } from 'express';
import { z } from 'zod';
import type { IssuedKey } from '../organizations/api-keys';
import type { Organizations } from '../organizations/organizations';
import { findOrganization, listOrganizations } from '../organizations/read-model';
import type { FailedAuthenticationLimiter } from '../auth/failed-authentication';
import type { ServiceRead } from '../routing/service-reads';
import { organizationMetrics } from '../analytics/metrics';
import { adminApiDocument } from '../openapi';
import { requireAdminToken } from './admin-auth';
import { mountOAuthAppRoutes } from './oauth-apps';

export interface AdminRoutesOptions {
  adminToken: string;
  /** Limits repeated wrong admin tokens per client address. */
  adminTokenFailures?: FailedAuthenticationLimiter;
  organizations: Organizations;
  sql: SqlExecutor;
  schema: string;
  /** Forwards product writes to the catalog service. */
  catalog: RequestHandler;
  /** Forwards coupon writes to the promotions service. */
  promotions: RequestHandler;
  /** Forwards webhook endpoints, the organization's events and the delivery log to the notifications service. */
  notifications: RequestHandler;
  /** Forwards customer portal configurations and billing settings to the billing service. */
  billing: RequestHandler;
  /** Reads of checkout's records (their event history). */
  checkout: RequestHandler;
  /** Reads of several services whose answers are combined (the metrics). */
  readService: ServiceRead;
  /** The gateway's clock: today, for the metrics' default range. */
  now: () => Date;
}

function keysByEnvironment(keys: IssuedKey[]) {
  const pick = (environment: Environment, kind: KeyKind) =>
    keys.find((k) => k.environment === environment && k.kind === kind)!.plaintext;
  return {
    sandbox: { secret_key: pick('SANDBOX', 'secret'), publishable_key: pick('SANDBOX', 'publishable') },
    production: { secret_key: pick('PRODUCTION', 'secret'), publishable_key: pick('PRODUCTION', 'publishable') },
  };
}

/** The merchant dashboard's backend under /admin/v1; documented in the README. */
export function mountAdminRoutes(app: Express, options: AdminRoutesOptions): void {
  const { organizations, sql, schema } = options;
  // Served like /v1/openapi.json, without a token.
  app.get('/admin/v1/openapi.json', (_req, res) => void res.json(adminApiDocument()));
  app.use('/admin/v1', requireAdminToken(options.adminToken, options.adminTokenFailures));

  const organizationExists: RequestHandler = async (req, _res, next) => {
    const found = await findOrganization(sql, schema, String(req.params.org_id));
    next(found ? undefined : notFound('Organization not found'));
  };

  app.post('/admin/v1/organizations', validate({ body: CreateOrganizationBody }), async (req, res) => {
    const created = await organizations.create(req.body.name);
    res.status(201).json({ id: created.id, name: created.name, api_keys: keysByEnvironment(created.keys) });
  });

  app.get('/admin/v1/organizations', validate({ query: ListOrganizationsQuery }), async (_req, res) => {
    const query = res.locals.input.query as z.infer<typeof ListOrganizationsQuery>;
    const page = await listOrganizations(sql, schema, { limit: query.limit, startingAfter: query.starting_after });
    if (!page) throw unknownCursor(query.starting_after!, 'organization');
    res.json({
      object: 'list',
      data: page.organizations.map((found) => ({ object: 'organization', ...found })),
      has_more: page.hasMore,
    });
  });

  app.get('/admin/v1/organizations/:org_id', validate({ params: OrganizationParams }), async (req, res) => {
    const found = await findOrganization(sql, schema, req.params.org_id);
    if (!found) throw notFound('Organization not found');
    res.json({ object: 'organization', ...found });
  });

  app.patch(
    '/admin/v1/organizations/:org_id',
    validate({ params: OrganizationParams, body: UpdateOrganizationBody }),
    organizationExists,
    async (req, res) => {
      const { org_id } = res.locals.input.params as z.infer<typeof OrganizationParams>;
      const changes = res.locals.input.body as z.infer<typeof UpdateOrganizationBody>;
      await organizations.updateSettings(org_id, {
        ...changes,
        ...(changes.allowed_origins && { allowed_origins: [...new Set(changes.allowed_origins)] }),
      });
      const found = await findOrganization(sql, schema, org_id);
      res.json({ object: 'organization', ...found });
    },
  );

  app.post(
    '/admin/v1/organizations/:org_id/api_keys/roll',
    validate({ params: OrganizationParams, body: RollKeyBody }),
    organizationExists,
    async (req, res) => {
      const { org_id } = res.locals.input.params as z.infer<typeof OrganizationParams>;
      const { environment, type } = res.locals.input.body as z.infer<typeof RollKeyBody>;
      const key = await organizations.rollKey(org_id, environment, type);
      res
        .status(201)
        .json({ object: 'api_key', id: key.keyId, environment, type, key: key.plaintext, last4: key.last4 });
    },
  );

  // Writes belong to the owning service; the organization comes from the path, signed as an
  // admin call (the only scope the services' /admin routes accept).
  const asOrganization: RequestHandler = (req, _res, next) => {
    req.headers[IDENTITY_HEADERS.organization] = String(req.params.org_id);
    req.headers[IDENTITY_HEADERS.scope] = 'admin';
    next();
  };
  const org = '/admin/v1/organizations/:org_id';
  mountOAuthAppRoutes(app, { sql, schema, now: options.now, organizationExists });
  app.post(`${org}/products`, organizationExists, asOrganization, options.catalog);
  app.patch(`${org}/products/:product_id`, organizationExists, asOrganization, options.catalog);
  app.post(`${org}/coupons`, organizationExists, asOrganization, options.promotions);
  const webhooks = [organizationExists, asOrganization, options.notifications];
  app.post(`${org}/webhook_endpoints`, ...webhooks);
  app.get(`${org}/webhook_endpoints`, ...webhooks);
  app.get(`${org}/webhook_endpoints/:endpoint_id`, ...webhooks);
  app.patch(`${org}/webhook_endpoints/:endpoint_id`, ...webhooks);
  app.delete(`${org}/webhook_endpoints/:endpoint_id`, ...webhooks);
  app.post(`${org}/webhook_endpoints/:endpoint_id/secret/roll`, ...webhooks);
  app.get(`${org}/webhook_endpoints/:endpoint_id/deliveries`, ...webhooks);
  app.get(`${org}/webhook_events`, ...webhooks);
  app.get(`${org}/webhook_events/:event_id`, ...webhooks);
  app.get(`${org}/webhook_events/:event_id/deliveries`, ...webhooks);
  app.get(`${org}/webhook_deliveries/:delivery_id`, ...webhooks);
  app.post(`${org}/webhook_deliveries/:delivery_id/replay`, ...webhooks);
  // Emails to buyers: the mailbox and which emails the organization sends.
  app.get(`${org}/emails`, ...webhooks);
  app.get(`${org}/emails/:email_id`, ...webhooks);
  app.get(`${org}/email_settings`, ...webhooks);
  app.patch(`${org}/email_settings`, ...webhooks);
  // A record's history, from the service that owns it (by the id's prefix).
  const owners: Record<string, RequestHandler> = {
    catalog: options.catalog,
    checkout: options.checkout,
    billing: options.billing,
    promotions: options.promotions,
    notifications: options.notifications,
  };
  app.get(
    `${org}/events`,
    validate({ params: OrganizationParams, query: RecordHistoryQuery }),
    organizationExists,
    asOrganization,
    (req, res, next) => {
      const { record_id } = res.locals.input.query as RecordHistoryQuery;
      owners[recordStreamOf(record_id)!.service]!(req, res, next);
    },
  );
  app.get(
    `${org}/metrics`,
    validate({ params: OrganizationParams, query: MetricsQuery }),
    organizationExists,
    async (_req, res) => {
      const { org_id } = res.locals.input.params as z.infer<typeof OrganizationParams>;
      const query = res.locals.input.query as MetricsQuery;
      const range = metricsRange(query, options.now());
      res.json(
        await organizationMetrics(options.readService, { organization: org_id, environment: query.environment }, range),
      );
    },
  );
  const checkout = [organizationExists, asOrganization, options.checkout];
  app.get(`${org}/payment_processor`, ...checkout);
  app.put(`${org}/payment_processor`, ...checkout);
  app.delete(`${org}/payment_processor`, ...checkout);
  app.get(`${org}/unmatched_payments`, ...checkout);
  app.get(`${org}/customers/:customer_id/orders`, ...checkout);
  app.get(`${org}/orders`, ...checkout);
  app.get(`${org}/refunds`, ...checkout);
  app.get(`${org}/orders/awaiting_payment`, ...checkout);
  app.get(`${org}/orders/:order_id`, ...checkout);
  const billing = [organizationExists, asOrganization, options.billing];
  app.get(`${org}/customers`, ...billing);
  app.get(`${org}/customers/:customer_id/payments`, ...billing);
  app.get(`${org}/invoices`, ...billing);
  app.get(`${org}/payments`, ...billing);
  app.get(`${org}/subscriptions`, ...billing);
  app.get(`${org}/pending_charges`, ...billing);
  app.get(`${org}/billing_settings`, ...billing);
  app.patch(`${org}/billing_settings`, ...billing);
  app.get(`${org}/einvoice_settings`, ...billing);
  app.put(`${org}/einvoice_settings`, ...billing);
  app.post(`${org}/portal_configurations`, ...billing);
  app.get(`${org}/portal_configurations`, ...billing);
  app.get(`${org}/portal_configurations/:configuration_id`, ...billing);
  app.patch(`${org}/portal_configurations/:configuration_id`, ...billing);
}
