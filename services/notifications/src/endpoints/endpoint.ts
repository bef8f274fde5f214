import type { Environment } from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export const endpointStream = (endpointId: string) => `webhook_endpoint-${endpointId}`;

/**
 * Events of a webhook endpoint. The signing secret is never in them: they travel on
 * `notifications.events`, so the secret lives in a table of its own (see read-model.ts).
 */
export type WebhookEndpointCreated = {
  type: 'WebhookEndpointCreated';
  data: {
    endpoint_id: string;
    organization: string;
    environment: Environment;
    url: string;
    events: string[];
    is_active: boolean;
    created_at: string;
  };
};
export type WebhookEndpointUpdated = {
  type: 'WebhookEndpointUpdated';
  data: { endpoint_id: string; changes: { url?: string; events?: string[] }; updated_at: string };
};
export type WebhookEndpointDeactivated = {
  type: 'WebhookEndpointDeactivated';
  data: { endpoint_id: string; deactivated_at: string };
};
export type WebhookEndpointActivated = {
  type: 'WebhookEndpointActivated';
  data: { endpoint_id: string; activated_at: string };
};
export type WebhookEndpointSecretRolled = {
  type: 'WebhookEndpointSecretRolled';
  data: { endpoint_id: string; rolled_at: string };
};
export type WebhookEndpointDeleted = {
  type: 'WebhookEndpointDeleted';
  data: { endpoint_id: string; deleted_at: string };
};
export type WebhookEndpointEvent =
  | WebhookEndpointCreated
  | WebhookEndpointUpdated
  | WebhookEndpointDeactivated
  | WebhookEndpointActivated
  | WebhookEndpointSecretRolled
  | WebhookEndpointDeleted;

export const endpointEvents = streamEvents<WebhookEndpointEvent>({
  WebhookEndpointCreated: true,
  WebhookEndpointUpdated: true,
  WebhookEndpointDeactivated: true,
  WebhookEndpointActivated: true,
  WebhookEndpointSecretRolled: true,
  WebhookEndpointDeleted: true,
});

export type Endpoint = {
  id: string;
  organization: string;
  environment: Environment;
  url: string;
  events: string[];
  is_active: boolean;
  created_at: string;
  updated_at: string;
};

export type EndpointState =
  { status: 'Empty' } | { status: 'Existing'; endpoint: Endpoint } | { status: 'Deleted'; endpoint: Endpoint };

export const initialState = (): EndpointState => ({ status: 'Empty' });

export function evolve(state: EndpointState, event: WebhookEndpointEvent): EndpointState {
  if (event.type === 'WebhookEndpointCreated') {
    const { endpoint_id, ...rest } = event.data;
    return { status: 'Existing', endpoint: { id: endpoint_id, ...rest, updated_at: rest.created_at } };
  }
  if (state.status !== 'Existing') return state;
  const endpoint = state.endpoint;
  switch (event.type) {
    case 'WebhookEndpointUpdated':
      return {
        status: 'Existing',
        endpoint: { ...endpoint, ...event.data.changes, updated_at: event.data.updated_at },
      };
    case 'WebhookEndpointDeactivated':
      return { status: 'Existing', endpoint: { ...endpoint, is_active: false, updated_at: event.data.deactivated_at } };
    case 'WebhookEndpointActivated':
      return { status: 'Existing', endpoint: { ...endpoint, is_active: true, updated_at: event.data.activated_at } };
    case 'WebhookEndpointSecretRolled':
      return { status: 'Existing', endpoint: { ...endpoint, updated_at: event.data.rolled_at } };
    case 'WebhookEndpointDeleted':
      return { status: 'Deleted', endpoint: { ...endpoint, is_active: false, updated_at: event.data.deleted_at } };
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}
