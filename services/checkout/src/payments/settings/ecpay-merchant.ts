import type { Environment, PaymentMethodKind } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../../dependencies';
import type { EcpayMerchant } from '../ecpay/merchant';
import { storedProcessor } from './aggregate';
import { openCredentials } from './credentials';

/**
 * The organization's ECPay merchant in this environment, its credentials opened, and the
 * methods it offers buyers; null when the environment does not pay through ECPay.
 */
export async function ecpayMerchantOf(
  context: ServiceContext,
  organization: string,
  environment: Environment,
): Promise<{ merchant: EcpayMerchant; methods: PaymentMethodKind[] } | null> {
  const { settings, sealedCredentials } = await storedProcessor(context.store, organization, environment);
  if (settings.processor !== 'ecpay' || !sealedCredentials || !settings.merchant_id || !settings.endpoint_url) {
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
