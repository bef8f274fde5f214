import {
  BillingSettingsQuery,
  ConfigurePaymentProcessorBody,
  type Environment,
  environmentOfSettings,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { type CredentialsKey, adminOrganizationOf, sealCredentials, validate } from '@billing/service';
import type { Express } from 'express';
import { processorSettingsAggregate, storedProcessor } from './aggregate';
import { type ProcessorSettingsCommand, processorSettingsId } from './processor-settings';

/**
 * `/admin/payment_processor?environment=sandbox|production` (the gateway's
 * `/admin/v1/organizations/{org_id}/payment_processor`): read, set (PUT, whole) and remove.
 * The answer never holds the credentials, only whether they are set.
 */
export function mountProcessorSettingsRoutes(app: Express, context: ServiceContext, key: CredentialsKey): void {
  const { store, now } = context;
  const read = async (organization: string, environment: Environment) =>
    (await storedProcessor(store, organization, environment)).settings;
  const handle = (organization: string, environment: Environment, command: ProcessorSettingsCommand) =>
    processorSettingsAggregate.handle(store, processorSettingsId(organization, environment), command, {
      organization,
      environment,
      occurredAt: now(),
    });

  app.get('/admin/payment_processor', validate({ query: BillingSettingsQuery }), async (req, res) => {
    res.json(await read(adminOrganizationOf(req), environmentOfSettings(res.locals.input.query.environment)));
  });

  app.put(
    '/admin/payment_processor',
    validate({ query: BillingSettingsQuery, body: ConfigurePaymentProcessorBody }),
    async (req, res) => {
      const organization = adminOrganizationOf(req);
      const environment = environmentOfSettings(res.locals.input.query.environment);
      const body = res.locals.input.body as ConfigurePaymentProcessorBody;
      const sealed =
        body.processor === 'sandbox' ? null : sealCredentials({ hash_key: body.hash_key, hash_iv: body.hash_iv }, key);
      await handle(organization, environment, {
        type: 'ConfigureProcessor',
        data: { organization, environment, body, sealed, now: now() },
      });
      res.json(await read(organization, environment));
    },
  );

  app.delete('/admin/payment_processor', validate({ query: BillingSettingsQuery }), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const environment = environmentOfSettings(res.locals.input.query.environment);
    await handle(organization, environment, {
      type: 'RemoveProcessor',
      data: { organization, environment, now: now() },
    });
    res.json(await read(organization, environment));
  });
}
