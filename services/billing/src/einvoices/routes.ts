import {
  BillingSettingsQuery,
  ConfigureEinvoiceBody,
  EinvoiceIdParams,
  ListEinvoicesQuery,
  environmentOfSettings,
  livemodeOf,
  notFound,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { adminOrganizationOf, sealCredentials, secretCallerOf, validate } from '@billing/service';
import type { Express } from 'express';
import { findEinvoice, listEinvoices } from './read-model';
import { einvoiceSettingsAggregate, einvoiceSettingsId, storedEinvoiceSettings } from './settings/einvoice-settings';
import { einvoiceCredentialsKey } from './settings/provider-of';

/** `GET /v1/einvoices` and `GET /v1/einvoices/:id` (Secret Key): the e-invoices of paid orders and invoices. */
export function mountEinvoiceRoutes(app: Express, { store }: ServiceContext): void {
  const { schema } = store.tables;
  app.get('/v1/einvoices', validate({ query: ListEinvoicesQuery }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { einvoices, hasMore } = await listEinvoices(store.database, schema, caller, res.locals.input.query);
    res.json({ object: 'list', data: einvoices, has_more: hasMore, livemode: livemodeOf(caller.environment) });
  });

  app.get('/v1/einvoices/:id', validate({ params: EinvoiceIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { id } = res.locals.input.params;
    const einvoice = await findEinvoice(store.database, schema, caller, id);
    if (!einvoice) throw notFound(`No such e-invoice: ${id}`);
    res.json(einvoice);
  });
}

/**
 * `/admin/einvoice_settings?environment=sandbox|production` (the gateway's
 * `/admin/v1/organizations/{org_id}/einvoice_settings`): read and set (PUT, whole; provider
 * `none` turns e-invoices off). The answer never holds the credentials, only whether they are set.
 */
export function mountEinvoiceSettingsRoutes(app: Express, context: ServiceContext): void {
  const { store, now } = context;
  const tenantOf = (req: Parameters<typeof adminOrganizationOf>[0], environment: string) => ({
    organization: adminOrganizationOf(req),
    environment: environmentOfSettings(environment as 'sandbox' | 'production'),
  });

  app.get('/admin/einvoice_settings', validate({ query: BillingSettingsQuery }), async (req, res) => {
    const tenant = tenantOf(req, res.locals.input.query.environment);
    res.json((await storedEinvoiceSettings(store, tenant)).settings);
  });

  app.put(
    '/admin/einvoice_settings',
    validate({ query: BillingSettingsQuery, body: ConfigureEinvoiceBody }),
    async (req, res) => {
      const tenant = tenantOf(req, res.locals.input.query.environment);
      const body = res.locals.input.body as ConfigureEinvoiceBody;
      const key = einvoiceCredentialsKey(context);
      const sealed =
        body.provider === 'ecpay'
          ? sealCredentials({ hash_key: body.hash_key, hash_iv: body.hash_iv }, key)
          : body.provider === 'amego'
            ? sealCredentials({ app_key: body.app_key }, key)
            : null;
      await einvoiceSettingsAggregate.handle(
        store,
        einvoiceSettingsId(tenant.organization, tenant.environment),
        { type: 'ConfigureEinvoice', data: { ...tenant, body, sealed, now: now() } },
        { ...tenant, occurredAt: now() },
      );
      res.json((await storedEinvoiceSettings(store, tenant)).settings);
    },
  );
}
