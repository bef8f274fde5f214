import {
  AdminCreateWebhookEndpointBody,
  AdminUpdateWebhookEndpointBody,
  Environment,
  WebhookEndpointIdParams,
  livemodeOf,
  newId,
  notFound,
  toList,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { validate } from '@billing/service';
import type { Express } from 'express';
import { z } from 'zod';
import { adminOrganizationOf, secretCallerOf } from '@billing/service';
import { endpointAggregate } from './aggregate';
import type { WebhookEndpointCommand } from './decide';
import { endpointStream } from './endpoint';
import { findEndpoint, listEndpoints, toEndpointResource } from './queries';
import { saveSecret } from './read-model';
import { newWebhookSecret } from './secret';
import { targetPolicyFromConfig } from '../targets/address-policy';

const AdminListQuery = z.object({ environment: Environment.optional() });

export function mountEndpointRoutes(
  app: Express,
  { store, now, config }: ServiceContext,
  /** Stops the deleted endpoint's pending deliveries. */
  endpointDeleted: () => Promise<unknown> = async () => undefined,
): void {
  const { schema } = store.tables;
  const db = store.database;
  /** Where webhooks may go (`WEBHOOK_ALLOW_PRIVATE_TARGETS`); a bad value stops the service. */
  const policy = targetPolicyFromConfig(config);

  /** Runs a command on an endpoint; a new secret, when given, commits with its event. */
  async function run(organization: string, endpointId: string, command: WebhookEndpointCommand, secret?: string) {
    const at = now();
    const environment =
      command.type === 'CreateWebhookEndpoint' ? command.data.environment : await environmentOf(endpointId);
    await endpointAggregate.handle(store, endpointId, command, {
      organization,
      environment,
      occurredAt: at,
      alsoProject: secret ? (tx) => saveSecret(tx, schema, endpointId, secret) : undefined,
    });
    const endpoint = await findEndpoint(db, schema, { organization }, endpointId);
    if (!endpoint) throw notFound(`No such webhook endpoint: ${endpointId}`);
    return endpoint;
  }

  /** An unknown endpoint's environment does not matter: its command fails with 404. */
  async function environmentOf(endpointId: string) {
    const history = await store.readStream(endpointStream(endpointId));
    return history[0]?.environment ?? 'SANDBOX';
  }

  app.post('/admin/webhook_endpoints', validate({ body: AdminCreateWebhookEndpointBody }), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const body = res.locals.input.body;
    const endpointId = newId('webhookEndpoint');
    const endpoint = await run(
      organization,
      endpointId,
      {
        type: 'CreateWebhookEndpoint',
        data: {
          endpointId,
          organization,
          environment: body.environment,
          url: body.url,
          events: body.events,
          isActive: body.is_active,
          now: now(),
          policy,
        },
      },
      newWebhookSecret(),
    );
    res.status(201).json(toEndpointResource(endpoint, endpoint.secret));
  });

  app.get('/admin/webhook_endpoints', validate({ query: AdminListQuery }), async (req, res) => {
    const { environment } = res.locals.input.query;
    const endpoints = await listEndpoints(db, schema, { organization: adminOrganizationOf(req), environment });
    res.json(
      toList(
        endpoints.map((e) => toEndpointResource(e)),
        environment === 'PRODUCTION',
      ),
    );
  });

  app.get('/admin/webhook_endpoints/:id', validate({ params: WebhookEndpointIdParams }), async (req, res) => {
    const { id } = res.locals.input.params;
    const endpoint = await findEndpoint(db, schema, { organization: adminOrganizationOf(req) }, id);
    if (!endpoint) throw notFound(`No such webhook endpoint: ${id}`);
    res.json(toEndpointResource(endpoint, endpoint.secret));
  });

  const updateSchemas = { params: WebhookEndpointIdParams, body: AdminUpdateWebhookEndpointBody.default({}) };
  app.patch('/admin/webhook_endpoints/:id', validate(updateSchemas), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const { params, body: changes } = res.locals.input;
    const endpoint = await run(organization, params.id, {
      type: 'UpdateWebhookEndpoint',
      data: { endpointId: params.id, organization, changes, now: now(), policy },
    });
    res.json(toEndpointResource(endpoint, endpoint.secret));
  });

  app.post(
    '/admin/webhook_endpoints/:id/secret/roll',
    validate({ params: WebhookEndpointIdParams }),
    async (req, res) => {
      const organization = adminOrganizationOf(req);
      const { id } = res.locals.input.params;
      const endpoint = await run(
        organization,
        id,
        { type: 'RollWebhookEndpointSecret', data: { endpointId: id, organization, now: now() } },
        newWebhookSecret(),
      );
      res.json(toEndpointResource(endpoint, endpoint.secret));
    },
  );

  app.delete('/admin/webhook_endpoints/:id', validate({ params: WebhookEndpointIdParams }), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const { id } = res.locals.input.params;
    const before = await findEndpoint(db, schema, { organization }, id);
    if (!before) throw notFound(`No such webhook endpoint: ${id}`);
    await endpointAggregate.handle(
      store,
      id,
      { type: 'DeleteWebhookEndpoint', data: { endpointId: id, organization, now: now() } },
      { organization, environment: before.environment, occurredAt: now() },
    );
    await endpointDeleted();
    res.json({ object: 'webhook', id, deleted: true, livemode: livemodeOf(before.environment) });
  });

  // Public, read-only (spec): the key decides organization and environment.
  app.get('/v1/webhooks', async (req, res) => {
    const caller = secretCallerOf(req);
    const endpoints = await listEndpoints(db, schema, caller);
    res.json(
      toList(
        endpoints.map((e) => toEndpointResource(e)),
        livemodeOf(caller.environment),
      ),
    );
  });

  app.get('/v1/webhooks/:id', validate({ params: WebhookEndpointIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { id } = res.locals.input.params;
    const endpoint = await findEndpoint(db, schema, caller, id);
    if (!endpoint) throw notFound(`No such webhook endpoint: ${id}`);
    res.json(toEndpointResource(endpoint, endpoint.secret));
  });
}
