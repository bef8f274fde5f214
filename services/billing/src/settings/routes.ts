import { BillingSettingsQuery, UpdateBillingSettingsBody, environmentOfSettings } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { billingSettingsAggregate, billingSettingsOf } from './aggregate';
import { billingSettingsId } from './settings';

/**
 * `/admin/billing_settings?environment=sandbox|production` (the gateway's
 * `/admin/v1/organizations/{org_id}/billing_settings`, which checks the organization exists):
 * read, and change in part.
 */
export function mountBillingSettingsRoutes(app: Express, context: ServiceContext): void {
  const { store, now } = context;

  app.get('/admin/billing_settings', validate({ query: BillingSettingsQuery }), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const environment = environmentOfSettings(res.locals.input.query.environment);
    res.json(await billingSettingsOf(store, organization, environment));
  });

  app.patch(
    '/admin/billing_settings',
    validate({ query: BillingSettingsQuery, body: UpdateBillingSettingsBody.default({}) }),
    async (req, res) => {
      const organization = adminOrganizationOf(req);
      const environment = environmentOfSettings(res.locals.input.query.environment);
      const command = {
        type: 'UpdateBillingSettings' as const,
        data: { organization, environment, changes: res.locals.input.body, now: now() },
      };
      await billingSettingsAggregate.handle(store, billingSettingsId(organization, environment), command, {
        organization,
        environment,
        occurredAt: command.data.now,
      });
      res.json(await billingSettingsOf(store, organization, environment));
    },
  );
}
