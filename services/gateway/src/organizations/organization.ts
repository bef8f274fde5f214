import type { Environment, KeyKind } from '@billing/contracts';
import type { RecordedEvent } from '@billing/eventstore';

export type ApiKeyRecord = {
  key_id: string;
  environment: Environment;
  kind: KeyKind;
  hash: string;
  last4: string;
};

export type OrganizationEvent =
  | { type: 'OrganizationCreated'; data: { organization_id: string; name: string; created_at: string } }
  | { type: 'ApiKeyIssued'; data: ApiKeyRecord & { issued_at: string } }
  | { type: 'ApiKeyRevoked'; data: { key_id: string; revoked_at: string } };

export type Organization =
  { status: 'absent' } | { status: 'active'; id: string; name: string; activeKeys: ApiKeyRecord[] };

export const initialOrganization = (): Organization => ({ status: 'absent' });

export const organizationStream = (organizationId: string) => `organization-${organizationId}`;

export function evolveOrganization(state: Organization, recorded: RecordedEvent): Organization {
  const event = recorded as unknown as OrganizationEvent;
  switch (event.type) {
    case 'OrganizationCreated':
      return { status: 'active', id: event.data.organization_id, name: event.data.name, activeKeys: [] };
    case 'ApiKeyIssued': {
      if (state.status !== 'active') return state;
      const { issued_at: _issuedAt, ...key } = event.data;
      return { ...state, activeKeys: [...state.activeKeys, key] };
    }
    case 'ApiKeyRevoked':
      if (state.status !== 'active') return state;
      return { ...state, activeKeys: state.activeKeys.filter((k) => k.key_id !== event.data.key_id) };
    default:
      return state;
  }
}
