import {
  type AdminCreatePortalConfigurationBody,
  type AdminUpdatePortalConfigurationBody,
  DEFAULT_PORTAL_FEATURES,
  type PortalConfiguration,
  livemodeOf,
  mergeFeatures,
  notFound,
} from '@billing/contracts';
import type { PortalConfigurationEvent, PortalConfigurationState } from './configuration';

/** The merchant's dashboard adds a configuration; `isFirst`: none exists yet, so it is the default. */
export type CreatePortalConfiguration = {
  type: 'CreatePortalConfiguration';
  data: {
    configurationId: string;
    organization: string;
    body: AdminCreatePortalConfigurationBody;
    isFirst: boolean;
    now: Date;
  };
};

/** Changes what the body names; the rest stays. */
export type UpdatePortalConfiguration = {
  type: 'UpdatePortalConfiguration';
  data: { configurationId: string; organization: string; changes: AdminUpdatePortalConfigurationBody; now: Date };
};

/** Another configuration became the default. */
export type UnsetDefault = { type: 'UnsetDefault'; data: { configurationId: string; now: Date } };

export type PortalConfigurationCommand = CreatePortalConfiguration | UpdatePortalConfiguration | UnsetDefault;

export function decide(
  command: PortalConfigurationCommand,
  state: PortalConfigurationState,
): PortalConfigurationEvent[] {
  switch (command.type) {
    case 'CreatePortalConfiguration':
      return create(command, state);
    case 'UpdatePortalConfiguration':
      return update(command, state);
    case 'UnsetDefault':
      return unsetDefault(command, state);
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

/** The first configuration of an environment is its default whatever `is_default` says; later ones when asked. */
function create({ data }: CreatePortalConfiguration, state: PortalConfigurationState): PortalConfigurationEvent[] {
  if (state.status !== 'Empty') return [];
  const { body } = data;
  const at = data.now.toISOString();
  const object: PortalConfiguration = {
    object: 'portal.configuration',
    id: data.configurationId,
    name: body.name ?? null,
    is_default: data.isFirst || body.is_default === true,
    active: body.active ?? true,
    default_return_url: body.default_return_url ?? null,
    business_profile: {
      name: body.business_profile?.name ?? null,
      privacy_policy_url: body.business_profile?.privacy_policy_url ?? null,
      terms_of_service_url: body.business_profile?.terms_of_service_url ?? null,
    },
    features: mergeFeatures(DEFAULT_PORTAL_FEATURES, body.features),
    environment: body.environment,
    livemode: livemodeOf(body.environment),
    created_at: at,
    updated_at: at,
  };
  return [
    {
      type: 'PortalConfigurationCreated',
      data: { configuration_id: data.configurationId, organization: data.organization, object },
    },
  ];
}

/**
 * The default stays the default until another one is made default (`is_default: false` on the
 * default itself is ignored: an environment that has configurations always has a default).
 */
function update({ data }: UpdatePortalConfiguration, state: PortalConfigurationState): PortalConfigurationEvent[] {
  if (state.status === 'Empty' || state.organization !== data.organization) {
    throw notFound(`No such portal configuration: ${data.configurationId}`);
  }
  const current = state.configuration;
  const { changes } = data;
  const profile = changes.business_profile ?? {};
  const next: PortalConfiguration = {
    ...current,
    name: changes.name === undefined ? current.name : changes.name,
    is_default: current.is_default || changes.is_default === true,
    active: changes.active ?? current.active,
    default_return_url:
      changes.default_return_url === undefined ? current.default_return_url : changes.default_return_url,
    business_profile: {
      name: profile.name === undefined ? current.business_profile.name : profile.name,
      privacy_policy_url:
        profile.privacy_policy_url === undefined
          ? current.business_profile.privacy_policy_url
          : profile.privacy_policy_url,
      terms_of_service_url:
        profile.terms_of_service_url === undefined
          ? current.business_profile.terms_of_service_url
          : profile.terms_of_service_url,
    },
    features: mergeFeatures(current.features, changes.features),
  };
  if (JSON.stringify(next) === JSON.stringify(current)) return [];
  return [
    {
      type: 'PortalConfigurationUpdated',
      data: { configuration_id: current.id, object: { ...next, updated_at: data.now.toISOString() } },
    },
  ];
}

function unsetDefault({ data }: UnsetDefault, state: PortalConfigurationState): PortalConfigurationEvent[] {
  if (state.status === 'Empty' || !state.configuration.is_default) return [];
  const object = { ...state.configuration, is_default: false, updated_at: data.now.toISOString() };
  return [{ type: 'PortalConfigurationUpdated', data: { configuration_id: object.id, object } }];
}
