import { type Environment, type KeyKind, conflict, notFound } from '@billing/contracts';
import type { ApiKeyRecord, Organization, OrganizationEvent, OrganizationSettings } from './organization';

export type OrganizationCommand =
  | { type: 'CreateOrganization'; organizationId: string; name: string; keys: ApiKeyRecord[]; now: Date }
  | { type: 'RollApiKey'; environment: Environment; kind: KeyKind; newKey: ApiKeyRecord; now: Date }
  | { type: 'UpdateSettings'; changes: Partial<OrganizationSettings> & { name?: string }; now: Date };

export function decideOrganization(command: OrganizationCommand, state: Organization): OrganizationEvent[] {
  switch (command.type) {
    case 'CreateOrganization': {
      if (state.status !== 'absent') throw conflict(`Organization ${command.organizationId} already exists`);
      const at = command.now.toISOString();
      return [
        {
          type: 'OrganizationCreated',
          data: { organization_id: command.organizationId, name: command.name, created_at: at },
        },
        ...command.keys.map((key): OrganizationEvent => ({ type: 'ApiKeyIssued', data: { ...key, issued_at: at } })),
      ];
    }
    case 'RollApiKey': {
      if (state.status === 'absent') throw notFound('Organization not found');
      const at = command.now.toISOString();
      const replaced = state.activeKeys.filter((k) => k.environment === command.environment && k.kind === command.kind);
      return [
        ...replaced.map((k): OrganizationEvent => ({
          type: 'ApiKeyRevoked',
          data: { key_id: k.key_id, revoked_at: at },
        })),
        { type: 'ApiKeyIssued', data: { ...command.newKey, issued_at: at } },
      ];
    }
    case 'UpdateSettings': {
      if (state.status === 'absent') throw notFound('Organization not found');
      const changed = Object.entries(command.changes).filter(
        ([field, value]) =>
          value !== undefined &&
          JSON.stringify(value) !==
            JSON.stringify(field === 'name' ? state.name : state.settings[field as keyof OrganizationSettings]),
      );
      if (changed.length === 0) return [];
      return [
        {
          type: 'OrganizationSettingsUpdated',
          data: { organization_id: state.id, ...Object.fromEntries(changed), updated_at: command.now.toISOString() },
        },
      ];
    }
    default: {
      const unknown: never = command;
      throw new Error(`Unknown command ${JSON.stringify(unknown)}`);
    }
  }
}
