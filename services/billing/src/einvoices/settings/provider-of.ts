import { EINVOICE_CREDENTIALS, type CredentialsKey, credentialsKeyOf, openCredentials } from '@billing/service';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { amegoEinvoiceProvider } from '../providers/amego/client';
import { ecpayEinvoiceProvider } from '../providers/ecpay/client';
import type { EinvoiceProvider } from '../providers/port';
import { storedEinvoiceSettings } from './einvoice-settings';

const keys = new WeakMap<ServiceContext, CredentialsKey>();

/** What e-invoice credentials are sealed with (EINVOICE_CREDENTIALS_KEY, else derived from INTERNAL_SECRET). */
export function einvoiceCredentialsKey(context: ServiceContext): CredentialsKey {
  let key = keys.get(context);
  if (!key) {
    key = credentialsKeyOf(context.config, context.internalSecret, EINVOICE_CREDENTIALS);
    keys.set(context, key);
  }
  return key;
}

/**
 * The organization's e-invoice provider in the environment, from its settings, or null when it
 * has none (or another than `expected`, the one an e-invoice was asked of: its merchant order
 * number means nothing to another provider). Credentials are opened here and go nowhere else.
 */
export async function einvoiceProviderOf(
  context: ServiceContext,
  tenant: Tenant,
  expected: 'ecpay' | 'amego',
): Promise<EinvoiceProvider | null> {
  const { settings, sealedCredentials } = await storedEinvoiceSettings(context.store, tenant);
  if (settings.provider !== expected || !sealedCredentials || !settings.endpoint_url) return null;
  const credentials = openCredentials(sealedCredentials, einvoiceCredentialsKey(context));
  if (settings.provider === 'ecpay') {
    return ecpayEinvoiceProvider({
      merchantId: settings.merchant_id ?? '',
      hashKey: credentials.hash_key ?? '',
      hashIV: credentials.hash_iv ?? '',
      baseUrl: settings.endpoint_url,
    });
  }
  return amegoEinvoiceProvider({
    sellerTaxId: settings.seller_tax_id ?? '',
    appKey: credentials.app_key ?? '',
    baseUrl: settings.endpoint_url,
  });
}
