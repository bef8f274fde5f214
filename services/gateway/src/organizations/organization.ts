import type { Environment, KeyKind } from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export type ApiKeyRecord = {
  key_id: string;
  environment: Environment;
  kind: KeyKind;
  hash: string;
  last4: string;
};

/**
 * What a merchant sets about how buyers meet the organization: the origins whose pages may call
 * Publishable-Key endpoints (empty: any origin), and the hosted pages' logo and brand colour.
 */
export type OrganizationSettings = {
  allowed_origins: string[];
  logo_url: string | null;
  brand_color: string | null;
  /** The merchant's own site: the hosted pages' way back when a page has no other. */
  website_url: string | null;
};

export const DEFAULT_SETTINGS: OrganizationSettings = {
  allowed_origins: [],
  logo_url: null,
  brand_color: null,
  website_url: null,
};

export type OrganizationEvent =
  | { type: 'OrganizationCreated'; data: { organization_id: string; name: string; created_at: string } }
  | {
      type: 'OrganizationSettingsUpdated';
      data: Partial<OrganizationSettings> & { name?: string; organization_id: string; updated_at: string };
    }
  | { type: 'ApiKeyIssued'; data: ApiKeyRecord & { issued_at: string } }
  | { type: 'ApiKeyRevoked'; data: { key_id: string; revoked_at: string } };

export const organizationEvents = streamEvents<OrganizationEvent>({
  OrganizationCreated: true,
  OrganizationSettingsUpdated: true,
  ApiKeyIssued: true,
  ApiKeyRevoked: true,
});

export type Organization =
  | { status: 'absent' }
  | { status: 'active'; id: string; name: string; activeKeys: ApiKeyRecord[]; settings: OrganizationSettings };

/**
 * Version of this module's `evolve` and state shape for snapshots (docs/decisions/0010-snapshots.md):
 * bump it whenever either changes, so snapshots folded by the old `evolve` are ignored. The state
 * must stay plain JSON (strings, finite numbers, booleans, null, arrays, plain objects).
 */
export const ORGANIZATION_SNAPSHOT_VERSION = 1;

export const initialOrganization = (): Organization => ({ status: 'absent' });

export const organizationStream = (organizationId: string) => `organization-${organizationId}`;

export function evolveOrganization(state: Organization, event: OrganizationEvent): Organization {
  switch (event.type) {
    case 'OrganizationCreated':
      return {
        status: 'active',
        id: event.data.organization_id,
        name: event.data.name,
        activeKeys: [],
        settings: DEFAULT_SETTINGS,
      };
    case 'OrganizationSettingsUpdated': {
      if (state.status !== 'active') return state;
      const { organization_id: _id, updated_at: _at, name, ...settings } = event.data;
      return { ...state, name: name ?? state.name, settings: { ...state.settings, ...settings } };
    }
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
