import { deciderSpec } from '@billing/testing';
import { STRICT_POLICY } from '../targets/address-policy';
import { endpointAggregate } from './aggregate';
import type { WebhookEndpointEvent } from './endpoint';

const now = new Date('2026-11-21T08:00:00.000Z');
const at = now.toISOString();
const spec = deciderSpec(endpointAggregate);
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
  data: { endpointId: 'wh_1', organization, changes, now, policy: STRICT_POLICY },
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
            policy: STRICT_POLICY,
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

    it('checks the URL against its environment and the address policy', () => {
      spec
        .given([created])
        .when(update({ url: 'http://shop.example/hooks' }))
        .thenThrows(/https/);
      spec
        .given([created])
        .when(update({ url: 'http://localhost/hooks' }))
        .thenThrows(/public address: localhost is a loopback address/);
      spec
        .given([created])
        .when(update({ url: 'https://169.254.169.254/latest/meta-data' }))
        .thenThrows(/public address: 169.254.169.254 is a cloud metadata service/);
      spec
        .given([created])
        .when({
          ...update({ url: 'http://127.0.0.1:3000/hooks' }),
          data: {
            ...update({}).data,
            changes: { url: 'http://127.0.0.1:3000/hooks' },
            policy: { privateTargetsAllowedIn: ['SANDBOX'] },
          },
        })
        .thenThrows(/public address/);
    });

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
