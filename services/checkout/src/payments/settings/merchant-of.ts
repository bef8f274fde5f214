import type { Environment, PaymentMethodKind } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../../dependencies';
import type { EcpayMerchant } from '../ecpay/merchant';
import type { PayuniMerchant } from '../payuni/merchant';
import { storedProcessor } from './aggregate';
import { openCredentials } from './credentials';

type Merchants = { ecpay: EcpayMerchant; payuni: PayuniMerchant };

/**
 * The organization's merchant account at `processor` in this environment, its credentials
 * opened, and the methods it offers buyers; null when the environment does not pay through it.
 */
export async function merchantOf<P extends keyof Merchants>(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  processor: P,
): Promise<{ merchant: Merchants[P]; methods: PaymentMethodKind[] } | null> {
  const { settings, sealedCredentials } = await storedProcessor(context.store, organization, environment);
  if (settings.processor !== processor || !sealedCredentials || !settings.merchant_id || !settings.endpoint_url) {
    return null;
  }
  const { hash_key, hash_iv } = openCredentials(sealedCredentials, dependenciesOf(context).credentialsKey);
  return {
    merchant: {
      merchantId: settings.merchant_id,
      hashKey: hash_key!,
      hashIV: hash_iv!,
      baseUrl: settings.endpoint_url,
    },
    methods: settings.methods,
  };
}

/** The organization's ECPay merchant in this environment, or null. */
export const ecpayMerchantOf = (context: ServiceContext, organization: string, environment: Environment) =>
  merchantOf(context, organization, environment, 'ecpay');

/** The organization's PAYUNi merchant in this environment, or null. */
export const payuniMerchantOf = (context: ServiceContext, organization: string, environment: Environment) =>
  merchantOf(context, organization, environment, 'payuni');
