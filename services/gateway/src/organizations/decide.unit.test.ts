import { ApiError } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import { describeKey, hashApiKey, issueAllKeys, issueKey } from './api-keys';
import { organizationAggregate } from './aggregate';
import type { ApiKeyRecord, OrganizationEvent } from './organization';

const now = new Date('2026-11-21T08:00:00.000Z');
const at = now.toISOString();
const key = (key_id: string, environment: ApiKeyRecord['environment'], kind: ApiKeyRecord['kind']): ApiKeyRecord => ({
  key_id,
  environment,
  kind,
  hash: `hash-${key_id}`,
  last4: key_id.slice(-4),
});

const spec = deciderSpec(organizationAggregate);

const created: OrganizationEvent[] = [
  { type: 'OrganizationCreated', data: { organization_id: 'org_1', name: 'Acme', created_at: at } },
  { type: 'ApiKeyIssued', data: { ...key('key_sk1', 'SANDBOX', 'secret'), issued_at: at } },
  { type: 'ApiKeyIssued', data: { ...key('key_pk1', 'SANDBOX', 'publishable'), issued_at: at } },
];

describe('Organization', () => {
  describe('when absent', () => {
    it('is created with its keys', () => {
      spec
        .given([])
        .when({
          type: 'CreateOrganization',
          organizationId: 'org_1',
          name: 'Acme',
          keys: [key('key_sk1', 'SANDBOX', 'secret'), key('key_pk1', 'SANDBOX', 'publishable')],
          now,
        })
        .then(created);
    });

    it('cannot roll a key', () => {
      spec
        .given([])
        .when({
          type: 'RollApiKey',
          environment: 'SANDBOX',
          kind: 'secret',
          newKey: key('key_2', 'SANDBOX', 'secret'),
          now,
        })
        .thenThrows(ApiError);
    });
  });

  describe('when active', () => {
    it('is not created twice', () => {
      spec
        .given(created)
        .when({ type: 'CreateOrganization', organizationId: 'org_1', name: 'Again', keys: [], now })
        .thenThrows(/already exists/);
    });

    it('revokes the key of the same environment and kind when rolling, and issues the new one', () => {
      spec
        .given(created)
        .when({
          type: 'RollApiKey',
          environment: 'SANDBOX',
          kind: 'secret',
          newKey: key('key_sk2', 'SANDBOX', 'secret'),
          now,
        })
        .then([
          { type: 'ApiKeyRevoked', data: { key_id: 'key_sk1', revoked_at: at } },
          { type: 'ApiKeyIssued', data: { ...key('key_sk2', 'SANDBOX', 'secret'), issued_at: at } },
        ]);
    });

    it('leaves other kinds and environments alone when rolling', () => {
      spec
        .given(created)
        .when({
          type: 'RollApiKey',
          environment: 'PRODUCTION',
          kind: 'secret',
          newKey: key('key_sk9', 'PRODUCTION', 'secret'),
          now,
        })
        .then([{ type: 'ApiKeyIssued', data: { ...key('key_sk9', 'PRODUCTION', 'secret'), issued_at: at } }]);
    });

    it('records only the settings that change', () => {
      spec
        .given(created)
        .when({
          type: 'UpdateSettings',
          changes: { allowed_origins: ['https://shop.example'], logo_url: null, brand_color: '#0a7d5a' },
          now,
        })
        .then([
          {
            type: 'OrganizationSettingsUpdated',
            data: {
              organization_id: 'org_1',
              allowed_origins: ['https://shop.example'],
              brand_color: '#0a7d5a',
              updated_at: at,
            },
          },
        ]);
    });

    it('records nothing when the settings are already so', () => {
      const updated: OrganizationEvent = {
        type: 'OrganizationSettingsUpdated',
        data: { organization_id: 'org_1', name: 'Acme Tea', brand_color: '#0a7d5a', updated_at: at },
      };
      spec
        .given([...created, updated])
        .when({ type: 'UpdateSettings', changes: { name: 'Acme Tea', brand_color: '#0a7d5a' }, now })
        .then([]);
    });
  });

  it('settings of an absent organization are not found', () => {
    spec
      .given([])
      .when({ type: 'UpdateSettings', changes: { brand_color: '#000000' }, now })
      .thenThrows(/not found/);
  });
});

describe('API keys', () => {
  it('are issued for both environments and kinds with the spec prefixes', () => {
    const prefixes = issueAllKeys().map((k) => k.plaintext.slice(0, 8));
    expect(prefixes).toEqual(['sk_test_', 'pk_test_', 'sk_live_', 'pk_live_']);
  });

  it('store only a hash and the last four characters', () => {
    const issued = issueKey('SANDBOX', 'secret');
    expect(issued.hash).toBe(hashApiKey(issued.plaintext));
    expect(issued.hash).not.toContain(issued.plaintext.slice(8));
    expect(issued.last4).toBe(issued.plaintext.slice(-4));
    expect(issued.keyId).toMatch(/^key_/);
  });

  it('are recognised by prefix and shape only', () => {
    const issued = issueKey('PRODUCTION', 'publishable');
    expect(describeKey(issued.plaintext)).toEqual({ environment: 'PRODUCTION', kind: 'publishable' });
    expect(describeKey('sk_test_short')).toBeUndefined();
    expect(describeKey(`xx_test_${'a'.repeat(32)}`)).toBeUndefined();
  });
});
