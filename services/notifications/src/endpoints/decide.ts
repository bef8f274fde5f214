import {
  type AdminUpdateWebhookEndpointBody,
  type Environment,
  conflict,
  notFound,
  validationError,
  webhookUrlProblem,
} from '@billing/contracts';
import { type TargetPolicy, checkTarget } from '../targets/address-policy';
import type { EndpointState, WebhookEndpointEvent } from './endpoint';

export type CreateWebhookEndpoint = {
  type: 'CreateWebhookEndpoint';
  data: {
    endpointId: string;
    organization: string;
    environment: Environment;
    url: string;
    events: string[];
    isActive: boolean;
    now: Date;
    /** Where webhooks may go, from the service's settings. */
    policy: TargetPolicy;
  };
};
export type UpdateWebhookEndpoint = {
  type: 'UpdateWebhookEndpoint';
  data: {
    endpointId: string;
    organization: string;
    changes: AdminUpdateWebhookEndpointBody;
    now: Date;
    policy: TargetPolicy;
  };
};
export type RollWebhookEndpointSecret = {
  type: 'RollWebhookEndpointSecret';
  data: { endpointId: string; organization: string; now: Date };
};
export type DeleteWebhookEndpoint = {
  type: 'DeleteWebhookEndpoint';
  data: { endpointId: string; organization: string; now: Date };
};
export type WebhookEndpointCommand =
  CreateWebhookEndpoint | UpdateWebhookEndpoint | RollWebhookEndpointSecret | DeleteWebhookEndpoint;

export function decide(command: WebhookEndpointCommand, state: EndpointState): WebhookEndpointEvent[] {
  switch (command.type) {
    case 'CreateWebhookEndpoint':
      return create(command, state);
    case 'UpdateWebhookEndpoint':
      return update(command, state);
    case 'RollWebhookEndpointSecret': {
      const { endpointId, organization, now } = command.data;
      existing(state, endpointId, organization);
      return [{ type: 'WebhookEndpointSecretRolled', data: { endpoint_id: endpointId, rolled_at: now.toISOString() } }];
    }
    case 'DeleteWebhookEndpoint': {
      const { endpointId, organization, now } = command.data;
      existing(state, endpointId, organization);
      return [{ type: 'WebhookEndpointDeleted', data: { endpoint_id: endpointId, deleted_at: now.toISOString() } }];
    }
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

function create({ data }: CreateWebhookEndpoint, state: EndpointState): WebhookEndpointEvent[] {
  if (state.status !== 'Empty') throw conflict(`Webhook endpoint ${data.endpointId} already exists`);
  checkUrl(data.url, data.environment, data.policy);
  return [
    {
      type: 'WebhookEndpointCreated',
      data: {
        endpoint_id: data.endpointId,
        organization: data.organization,
        environment: data.environment,
        url: data.url,
        events: data.events,
        is_active: data.isActive,
        created_at: data.now.toISOString(),
      },
    },
  ];
}

function update({ data }: UpdateWebhookEndpoint, state: EndpointState): WebhookEndpointEvent[] {
  const endpoint = existing(state, data.endpointId, data.organization);
  const at = data.now.toISOString();
  const changes: { url?: string; events?: string[] } = {};
  if (data.changes.url !== undefined && data.changes.url !== endpoint.url) {
    checkUrl(data.changes.url, endpoint.environment, data.policy);
    changes.url = data.changes.url;
  }
  const events = data.changes.events;
  if (events !== undefined && [...events].sort().join() !== [...endpoint.events].sort().join()) {
    changes.events = events;
  }
  const decided: WebhookEndpointEvent[] = [];
  if (Object.keys(changes).length > 0) {
    decided.push({ type: 'WebhookEndpointUpdated', data: { endpoint_id: endpoint.id, changes, updated_at: at } });
  }
  if (data.changes.is_active === false && endpoint.is_active) {
    decided.push({ type: 'WebhookEndpointDeactivated', data: { endpoint_id: endpoint.id, deactivated_at: at } });
  }
  if (data.changes.is_active === true && !endpoint.is_active) {
    decided.push({ type: 'WebhookEndpointActivated', data: { endpoint_id: endpoint.id, activated_at: at } });
  }
  return decided;
}

/**
 * The URL's text, then where it points (`checkTarget`: scheme and host against the address
 * policy). Its addresses are checked again, after resolution, at every attempt to send.
 */
function checkUrl(url: string, environment: Environment, policy: TargetPolicy) {
  const problem = webhookUrlProblem(url);
  if (problem) throw validationError([{ path: 'url', message: `url ${problem}`, code: 'custom' }], `url ${problem}`);
  const refused = checkTarget(new URL(url), environment, policy);
  if (!refused) return;
  const message =
    refused.kind === 'scheme' ? `url ${refused.reason}` : `url must point to a public address: ${refused.reason}`;
  const code = refused.kind === 'scheme' ? 'custom' : 'internal_target';
  throw validationError([{ path: 'url', message, code }], message);
}

/** A deleted endpoint, or another organization's, is absent to the caller. */
function existing(state: EndpointState, endpointId: string, organization: string) {
  if (state.status !== 'Existing' || state.endpoint.organization !== organization) {
    throw notFound(`No such webhook endpoint: ${endpointId}`);
  }
  return state.endpoint;
}
