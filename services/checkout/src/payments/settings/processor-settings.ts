import {
  type ConfigurePaymentProcessorBody,
  type Environment,
  type PaymentMethodKind,
  type PaymentProcessorSettings,
  settingsEnvironmentOf,
  validationError,
} from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';
import { ECPAY_PRODUCTION_URL, ECPAY_STAGING_URL } from '../ecpay/merchant';
import { PAYUNI_PRODUCTION_URL, PAYUNI_SANDBOX_URL } from '../payuni/merchant';

/**
 * Which processor takes an organization's payments in one environment: one aggregate per
 * organization and environment, on `payment_processor-<organization>-<environment>`. Its
 * events carry the credentials sealed (`credentials.ts`), never in the clear.
 */
export const processorSettingsId = (organization: string, environment: Environment) => `${organization}-${environment}`;
export const processorSettingsStream = (id: string) => `payment_processor-${id}`;

export type PaymentProcessorConfigured = {
  type: 'PaymentProcessorConfigured';
  data: {
    organization: string;
    environment: Environment;
    object: PaymentProcessorSettings;
    sealed_credentials: string | null;
  };
};
export type PaymentProcessorRemoved = {
  type: 'PaymentProcessorRemoved';
  data: { organization: string; environment: Environment; removed_at: string };
};
export type ProcessorSettingsEvent = PaymentProcessorConfigured | PaymentProcessorRemoved;

export const processorSettingsEvents = streamEvents<ProcessorSettingsEvent>({
  PaymentProcessorConfigured: true,
  PaymentProcessorRemoved: true,
});

export type ProcessorSettingsState =
  | { status: 'Default' }
  | { status: 'Configured'; settings: PaymentProcessorSettings; sealedCredentials: string | null };

export const initialState = (): ProcessorSettingsState => ({ status: 'Default' });

export function evolve(_state: ProcessorSettingsState, event: ProcessorSettingsEvent): ProcessorSettingsState {
  return event.type === 'PaymentProcessorConfigured'
    ? { status: 'Configured', settings: event.data.object, sealedCredentials: event.data.sealed_credentials }
    : { status: 'Default' };
}

/** `sealed` holds the body's credentials sealed by the caller (the decider reads no key and no clock). */
export type ConfigureProcessor = {
  type: 'ConfigureProcessor';
  data: {
    organization: string;
    environment: Environment;
    body: ConfigurePaymentProcessorBody;
    sealed: string | null;
    now: Date;
  };
};
export type RemoveProcessor = {
  type: 'RemoveProcessor';
  data: { organization: string; environment: Environment; now: Date };
};
export type ProcessorSettingsCommand = ConfigureProcessor | RemoveProcessor;

/** What an organization has until it sets a processor: the simulator in Sandbox, nothing in Production. */
export function defaultProcessorSettings(organization: string, environment: Environment): PaymentProcessorSettings {
  const sandbox = environment === 'SANDBOX';
  return {
    object: 'payment_processor',
    organization_id: organization,
    environment: settingsEnvironmentOf(environment),
    processor: sandbox ? 'sandbox' : 'none',
    merchant_id: null,
    endpoint_url: null,
    methods: sandbox ? ['card'] : [],
    credentials_set: false,
    updated_at: null,
  };
}

export function processorSettingsOf(state: ProcessorSettingsState, organization: string, environment: Environment) {
  return state.status === 'Configured' ? state.settings : defaultProcessorSettings(organization, environment);
}

export function decide(command: ProcessorSettingsCommand, state: ProcessorSettingsState): ProcessorSettingsEvent[] {
  const { organization, environment, now } = command.data;
  if (command.type === 'RemoveProcessor') {
    if (state.status === 'Default') return [];
    return [{ type: 'PaymentProcessorRemoved', data: { organization, environment, removed_at: now.toISOString() } }];
  }
  const { body, sealed } = command.data;
  const production = environment === 'PRODUCTION';
  if (body.processor === 'sandbox') {
    if (production) {
      throw validationError([
        { path: 'processor', code: 'invalid_value', message: 'The sandbox simulator does not charge in Production' },
      ]);
    }
    return [
      configured(organization, environment, { ...defaultProcessorSettings(organization, environment) }, null, now),
    ];
  }
  const provider = PROVIDERS[body.processor];
  if (production && body.endpoint_url) {
    throw validationError([
      { path: 'endpoint_url', code: 'invalid_value', message: `Production always uses ${provider.productionSite}` },
    ]);
  }
  if (!sealed) throw new Error(`${provider.name} credentials must be sealed before they are recorded`);
  const settings: PaymentProcessorSettings = {
    ...defaultProcessorSettings(organization, environment),
    processor: body.processor,
    merchant_id: body.merchant_id,
    endpoint_url: production ? provider.productionUrl : (body.endpoint_url ?? provider.sandboxUrl),
    methods: body.methods ?? provider.methods,
    credentials_set: true,
  };
  return [configured(organization, environment, settings, sealed, now)];
}

/** Each real processor's sites and the methods it offers by default. */
const PROVIDERS = {
  ecpay: {
    name: 'ECPay',
    productionSite: "ECPay's production site",
    productionUrl: ECPAY_PRODUCTION_URL,
    sandboxUrl: ECPAY_STAGING_URL,
    methods: ['card', 'atm', 'cvs'] as PaymentMethodKind[],
  },
  payuni: {
    name: 'PAYUNi',
    productionSite: "PAYUNi's production site",
    productionUrl: PAYUNI_PRODUCTION_URL,
    sandboxUrl: PAYUNI_SANDBOX_URL,
    methods: ['card', 'atm', 'cvs'] as PaymentMethodKind[],
  },
} as const;

function configured(
  organization: string,
  environment: Environment,
  settings: PaymentProcessorSettings,
  sealed: string | null,
  now: Date,
): PaymentProcessorConfigured {
  return {
    type: 'PaymentProcessorConfigured',
    data: {
      organization,
      environment,
      object: { ...settings, updated_at: now.toISOString() },
      sealed_credentials: sealed,
    },
  };
}
