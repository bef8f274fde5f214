import { DEFAULT_PORTAL_FEATURES, type PortalConfiguration } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import type { PortalConfigurationEvent } from './configuration';
import { portalConfigurationAggregate } from './aggregate';
import type { PortalConfigurationCommand } from './decide';

const spec = deciderSpec(portalConfigurationAggregate);
const at = new Date('2026-11-23T05:00:00.000Z');
const later = new Date('2026-11-23T06:00:00.000Z');
const configuration: PortalConfiguration = {
  object: 'portal.configuration',
  id: 'bpc_1',
  name: null,
  is_default: true,
  active: true,
  default_return_url: null,
  business_profile: { name: 'Acme', privacy_policy_url: null, terms_of_service_url: null },
  features: DEFAULT_PORTAL_FEATURES,
  environment: 'SANDBOX',
  livemode: false,
  created_at: at.toISOString(),
  updated_at: at.toISOString(),
};
const created = (fields: Partial<PortalConfiguration> = {}): PortalConfigurationEvent => ({
  type: 'PortalConfigurationCreated',
  data: { configuration_id: 'bpc_1', organization: 'org_1', object: { ...configuration, ...fields } },
});
const updated = (fields: Partial<PortalConfiguration>): PortalConfigurationEvent => ({
  type: 'PortalConfigurationUpdated',
  data: { configuration_id: 'bpc_1', object: { ...configuration, ...fields, updated_at: later.toISOString() } },
});
const create = (isFirst: boolean, body: Record<string, unknown> = {}): PortalConfigurationCommand => ({
  type: 'CreatePortalConfiguration',
  data: {
    configurationId: 'bpc_1',
    organization: 'org_1',
    body: { environment: 'SANDBOX', business_profile: { name: 'Acme' }, ...body },
    isFirst,
    now: at,
  },
});
const update = (changes: Record<string, unknown>, organization = 'org_1'): PortalConfigurationCommand => ({
  type: 'UpdatePortalConfiguration',
  data: { configurationId: 'bpc_1', organization, changes, now: later },
});

describe('PortalConfiguration', () => {
  describe('when it does not exist', () => {
    it('is created with the built-in features, default when it is the first', () =>
      spec.given([]).when(create(true)).then([created()]));
    it('is not the default when others exist, unless asked', () => {
      spec
        .given([])
        .when(create(false))
        .then([created({ is_default: false })]);
      spec
        .given([])
        .when(create(false, { is_default: true }))
        .then([created()]);
    });
    it('takes the features it names, the others built in', () =>
      spec
        .given([])
        .when(create(true, { features: { cancel: { mode: 'immediately' } } }))
        .then([created({ features: { ...DEFAULT_PORTAL_FEATURES, cancel: { enabled: true, mode: 'immediately' } } })]));
    it('cannot be updated', () =>
      spec
        .given([])
        .when(update({ name: 'x' }))
        .thenThrows('No such portal configuration'));
  });

  describe('when it exists', () => {
    it('changes what the update names and keeps the rest', () =>
      spec
        .given([created()])
        .when(
          update({
            default_return_url: 'https://acme.example',
            features: { subscription_update: { products: ['prod_1'] } },
          }),
        )
        .then([
          updated({
            default_return_url: 'https://acme.example',
            features: { ...DEFAULT_PORTAL_FEATURES, subscription_update: { enabled: false, products: ['prod_1'] } },
          }),
        ]));
    it('stays the default when asked to stop being it', () =>
      spec
        .given([created()])
        .when(update({ is_default: false }))
        .then([]));
    it('records nothing for an update that changes nothing', () =>
      spec
        .given([created()])
        .when(update({ business_profile: { name: 'Acme' } }))
        .then([]));
    it('is absent to another organization', () =>
      spec
        .given([created()])
        .when(update({ name: 'x' }, 'org_2'))
        .thenThrows('No such portal configuration'));
    it('gives up being the default when another becomes it', () =>
      spec
        .given([created()])
        .when({ type: 'UnsetDefault', data: { configurationId: 'bpc_1', now: later } })
        .then([updated({ is_default: false })]));
  });
});
