import { deciderSpec } from '@billing/testing';
import { endpointDecider } from './decide';
import type { WebhookEndpointEvent } from './endpoint';

const now = new Date('2026-11-21T08:00:00.000Z');
const at = now.toISOString();
const spec = deciderSpec(endpointDecider);
const created: WebhookEndpointEvent = {
  type: 'WebhookEndpointCreated',
  data: {
    endpoint_id: 'wh_1',
    organization: 'org_1',
    environment: 'PRODUCTION',
    url: 'https://shop.example/hooks',
    events: ['checkout.completed'],
    is_active: true,
    created_at: at,
  },
};
const update = (changes: Record<string, unknown>, organization = 'org_1') => ({
  type: 'UpdateWebhookEndpoint' as const,
  data: { endpointId: 'wh_1', organization, changes, now },
});

describe('WebhookEndpoint', () => {
  describe('when absent', () => {
    it('is created', () =>
      spec
        .given([])
        .when({
          type: 'CreateWebhookEndpoint',
          data: {
            endpointId: 'wh_1',
            organization: 'org_1',
            environment: 'PRODUCTION',
            url: 'https://shop.example/hooks',
            events: ['checkout.completed'],
            isActive: true,
            now,
          },
        })
        .then([created]));

    it('cannot be updated', () =>
      spec
        .given([])
        .when(update({ is_active: false }))
        .thenThrows(/No such/));
  });

  describe('when existing', () => {
    it('records changed fields only', () =>
      spec
        .given([created])
        .when(update({ url: 'https://shop.example/hooks', events: ['invoice.paid'] }))
        .then([
          {
            type: 'WebhookEndpointUpdated',
            data: { endpoint_id: 'wh_1', changes: { events: ['invoice.paid'] }, updated_at: at },
          },
        ]));

    it('checks the URL against its environment', () =>
      spec
        .given([created])
        .when(update({ url: 'http://localhost/hooks' }))
        .thenThrows(/https/));

    it('is deactivated, once', () => {
      const deactivated: WebhookEndpointEvent = {
        type: 'WebhookEndpointDeactivated',
        data: { endpoint_id: 'wh_1', deactivated_at: at },
      };
      spec
        .given([created])
        .when(update({ is_active: false }))
        .then([deactivated]);
      spec
        .given([created, deactivated])
        .when(update({ is_active: false }))
        .then([]);
    });

    it('is absent to another organization', () =>
      spec
        .given([created])
        .when(update({ is_active: false }, 'org_2'))
        .thenThrows(/No such/));
  });

  describe('when deleted', () => {
    it('takes no more commands', () =>
      spec
        .given([created, { type: 'WebhookEndpointDeleted', data: { endpoint_id: 'wh_1', deleted_at: at } }])
        .when({ type: 'RollWebhookEndpointSecret', data: { endpointId: 'wh_1', organization: 'org_1', now } })
        .thenThrows(/No such/));
  });
});
