import {
  AdminCreatePortalConfigurationBody,
  AdminUpdatePortalConfigurationBody,
  Environment,
  type PortalConfiguration,
  idText,
  newId,
  notFound,
  toList,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { z } from 'zod';
import { portalConfigurationAggregate } from './aggregate';
import type { PortalConfigurationCommand } from './decide';
import {
  findPortalConfiguration,
  hasPortalConfigurations,
  listPortalConfigurations,
  otherDefaults,
} from './read-model';

const ListQuery = z.object({ environment: Environment.optional() });
const IdParams = z.object({ id: idText().describe('Portal configuration id, prefix bpc_') });

/**
 * The admin API's portal configurations (`/admin/v1/organizations/{org_id}/portal_configurations`,
 * forwarded by the gateway as `/admin/portal_configurations`), per environment.
 */
export function mountPortalConfigurationRoutes(app: Express, { store, now }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;

  async function run(organization: string, environment: Environment, id: string, command: PortalConfigurationCommand) {
    await portalConfigurationAggregate.handle(store, id, command, { organization, environment, occurredAt: now() });
    const saved = await findPortalConfiguration(db, schema, { organization }, id);
    if (!saved) throw notFound(`No such portal configuration: ${id}`);
    if (saved.is_default) await unsetOtherDefaults(organization, saved);
    return (await findPortalConfiguration(db, schema, { organization }, id))!;
  }

  /** One default per environment: the one just made default takes it from the others. */
  async function unsetOtherDefaults(organization: string, configuration: PortalConfiguration) {
    const scope = { organization, environment: configuration.environment };
    for (const other of await otherDefaults(db, schema, scope, configuration.id)) {
      await run(organization, configuration.environment, other, {
        type: 'UnsetDefault',
        data: { configurationId: other, now: now() },
      });
    }
  }

  app.post('/admin/portal_configurations', validate({ body: AdminCreatePortalConfigurationBody }), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const body = res.locals.input.body;
    const id = newId('portalConfiguration');
    const isFirst = !(await hasPortalConfigurations(db, schema, { organization, environment: body.environment }));
    const created = await run(organization, body.environment, id, {
      type: 'CreatePortalConfiguration',
      data: { configurationId: id, organization, body, isFirst, now: now() },
    });
    res.status(201).json(created);
  });

  app.get('/admin/portal_configurations', validate({ query: ListQuery }), async (req, res) => {
    const { environment } = res.locals.input.query;
    const found = await listPortalConfigurations(db, schema, { organization: adminOrganizationOf(req), environment });
    res.json(toList(found, environment === 'PRODUCTION'));
  });

  app.get('/admin/portal_configurations/:id', validate({ params: IdParams }), async (req, res) => {
    const { id } = res.locals.input.params;
    const found = await findPortalConfiguration(db, schema, { organization: adminOrganizationOf(req) }, id);
    if (!found) throw notFound(`No such portal configuration: ${id}`);
    res.json(found);
  });

  const updateSchemas = { params: IdParams, body: AdminUpdatePortalConfigurationBody.default({}) };
  app.patch('/admin/portal_configurations/:id', validate(updateSchemas), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const { params, body: changes } = res.locals.input;
    const current = await findPortalConfiguration(db, schema, { organization }, params.id);
    if (!current) throw notFound(`No such portal configuration: ${params.id}`);
    const updated = await run(organization, current.environment, params.id, {
      type: 'UpdatePortalConfiguration',
      data: { configurationId: params.id, organization, changes, now: now() },
    });
    res.json(updated);
  });
}
