import {
  type ConfigureEinvoiceBody,
  type EinvoiceSettings,
  type EinvoiceSettingsConfiguredData,
  type Environment,
  isValidTaxId,
  settingsEnvironmentOf,
  validationError,
} from '@billing/contracts';
import { AMEGO_API_URL } from '../providers/amego/merchant';
import { ECPAY_EINVOICE_PRODUCTION_URL, ECPAY_EINVOICE_STAGE_URL } from '../providers/ecpay/merchant';
import { type EventStore, type SqlExecutor, defineAggregate, streamEvents } from '@billing/eventstore';

/**
 * Which e-invoice provider issues an organization's e-invoices in one environment, on
 * `einvoice_settings-<organization>-<environment>`. Set whole (PUT); its event carries the
 * credentials sealed, never in the clear.
 */
export const einvoiceSettingsId = (organization: string, environment: Environment) => `${organization}-${environment}`;
export const einvoiceSettingsStream = (id: string) => `einvoice_settings-${id}`;

export type EinvoiceSettingsConfigured = { type: 'EinvoiceSettingsConfigured'; data: EinvoiceSettingsConfiguredData };
export const einvoiceSettingsEvents = streamEvents<EinvoiceSettingsConfigured>({ EinvoiceSettingsConfigured: true });

export type EinvoiceSettingsState = { settings: EinvoiceSettings | null; sealedCredentials: string | null };

const ECPAY_EINVOICE_URLS = { sandbox: ECPAY_EINVOICE_STAGE_URL, production: ECPAY_EINVOICE_PRODUCTION_URL };
/** Amego has one host: the seller's account decides whether it is a test one. */
const AMEGO_EINVOICE_URLS = { sandbox: AMEGO_API_URL, production: AMEGO_API_URL };

export function defaultEinvoiceSettings(organization: string, environment: Environment): EinvoiceSettings {
  return {
    object: 'einvoice_settings',
    organization_id: organization,
    environment: settingsEnvironmentOf(environment),
    provider: 'none',
    enabled: false,
    merchant_id: null,
    seller_tax_id: null,
    tax_type: 'TAXED',
    donation_offered: true,
    endpoint_url: null,
    credentials_set: false,
    updated_at: null,
  };
}

export type ConfigureEinvoice = {
  type: 'ConfigureEinvoice';
  data: {
    organization: string;
    environment: Environment;
    body: ConfigureEinvoiceBody;
    /** The body's credentials sealed by the caller (the decider reads no key). */
    sealed: string | null;
    now: Date;
  };
};

export function decide(command: ConfigureEinvoice, _state: EinvoiceSettingsState): EinvoiceSettingsConfigured[] {
  const { organization, environment, body, sealed, now } = command.data;
  const base = defaultEinvoiceSettings(organization, environment);
  const configured = (settings: EinvoiceSettings, sealedCredentials: string | null): EinvoiceSettingsConfigured => ({
    type: 'EinvoiceSettingsConfigured',
    data: {
      organization,
      environment,
      object: { ...settings, updated_at: now.toISOString() },
      sealed_credentials: sealedCredentials,
    },
  });
  if (body.provider === 'none') return [configured(base, null)];
  const production = environment === 'PRODUCTION';
  const urls = body.provider === 'ecpay' ? ECPAY_EINVOICE_URLS : AMEGO_EINVOICE_URLS;
  if (production && body.endpoint_url) {
    throw validationError([
      { path: 'endpoint_url', code: 'invalid_value', message: `Production always uses ${urls.production}` },
    ]);
  }
  if (production && !isValidTaxId(body.seller_tax_id)) {
    throw validationError([
      { path: 'seller_tax_id', code: 'invalid_tax_id', message: 'seller_tax_id must have a valid check digit' },
    ]);
  }
  if (!sealed) throw new Error('e-invoice credentials must be sealed before they are recorded');
  const settings: EinvoiceSettings = {
    ...base,
    provider: body.provider,
    enabled: true,
    merchant_id: body.provider === 'ecpay' ? body.merchant_id : null,
    seller_tax_id: body.seller_tax_id,
    tax_type: body.tax_type ?? 'TAXED',
    donation_offered: body.donation_offered ?? true,
    endpoint_url: production ? urls.production : (body.endpoint_url ?? urls.sandbox),
    credentials_set: true,
  };
  return [configured(settings, sealed)];
}

export const einvoiceSettingsAggregate = defineAggregate({
  stream: einvoiceSettingsStream,
  events: einvoiceSettingsEvents,
  initialState: (): EinvoiceSettingsState => ({ settings: null, sealedCredentials: null }),
  evolve: (_state: EinvoiceSettingsState, event: EinvoiceSettingsConfigured): EinvoiceSettingsState => ({
    settings: event.data.object,
    sealedCredentials: event.data.sealed_credentials,
  }),
  decide,
});

/**
 * The settings in force and the credentials as stored (sealed); the defaults while never set.
 * Read with `sql` (a transaction's own, inside one: PGlite has one connection).
 */
export async function storedEinvoiceSettings(
  store: EventStore,
  tenant: { organization: string; environment: Environment },
  sql: SqlExecutor = store.database,
): Promise<{ settings: EinvoiceSettings; sealedCredentials: string | null }> {
  const { organization, environment } = tenant;
  const stream = einvoiceSettingsAggregate.stream(einvoiceSettingsId(organization, environment));
  const state = einvoiceSettingsAggregate.fold((await store.readStreams([stream], sql)).get(stream) ?? []);
  return {
    settings: state.settings ?? defaultEinvoiceSettings(organization, environment),
    sealedCredentials: state.sealedCredentials,
  };
}
