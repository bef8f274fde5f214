import type { Environment, PortalConfiguration } from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export const portalConfigurationStream = (configurationId: string) => `portal_configuration-${configurationId}`;

export type PortalConfigurationCreated = {
  type: 'PortalConfigurationCreated';
  data: { configuration_id: string; organization: string; object: PortalConfiguration };
};
export type PortalConfigurationUpdated = {
  type: 'PortalConfigurationUpdated';
  data: { configuration_id: string; object: PortalConfiguration };
};
export type PortalConfigurationEvent = PortalConfigurationCreated | PortalConfigurationUpdated;

export const portalConfigurationEvents = streamEvents<PortalConfigurationEvent>({
  PortalConfigurationCreated: true,
  PortalConfigurationUpdated: true,
});

export type PortalConfigurationState =
  | { status: 'Empty' }
  | { status: 'Existing'; organization: string; environment: Environment; configuration: PortalConfiguration };

export const initialState = (): PortalConfigurationState => ({ status: 'Empty' });

export function evolve(state: PortalConfigurationState, event: PortalConfigurationEvent): PortalConfigurationState {
  switch (event.type) {
    case 'PortalConfigurationCreated': {
      const { organization, object } = event.data;
      return { status: 'Existing', organization, environment: object.environment, configuration: object };
    }
    case 'PortalConfigurationUpdated':
      if (state.status === 'Empty') return state;
      return { ...state, configuration: event.data.object };
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}
