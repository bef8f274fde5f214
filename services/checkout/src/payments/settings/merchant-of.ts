import type { Environment, PaymentMethodKind } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../../dependencies';
import type { EcpayMerchant } from '../ecpay/merchant';
import type { PayuniMerchant } from '../payuni/merchant';
import { type StoredProcessor, storedProcessor } from './aggregate';
import { openCredentials } from '@billing/service';

type Merchants = { ecpay: EcpayMerchant; payuni: PayuniMerchant };

/** An organization's merchant account at its processor, its credentials opened, and the methods it offers buyers. */
export type ProcessorMerchant = {
  [P in keyof Merchants]: { processor: P; merchant: Merchants[P]; methods: PaymentMethodKind[] };
}[keyof Merchants];

/** The organization's merchant account at the processor it set for this environment; null for the simulator or none. */
export async function processorMerchantOf(
  context: ServiceContext,
  organization: string,
  environment: Environment,
): Promise<ProcessorMerchant | null> {
  return processorMerchantFrom(context, await storedProcessor(context.store, organization, environment));
}

/** The merchant account of settings read already; null for the simulator or none. */
export function processorMerchantFrom(
  context: ServiceContext,
  { settings, sealedCredentials }: StoredProcessor,
): ProcessorMerchant | null {
  const { processor } = settings;
  if (processor !== 'ecpay' && processor !== 'payuni') return null;
  if (!sealedCredentials || !settings.merchant_id || !settings.endpoint_url) return null;
  const { hash_key, hash_iv } = openCredentials(sealedCredentials, dependenciesOf(context).credentialsKey);
  const merchant = {
    merchantId: settings.merchant_id,
    hashKey: hash_key!,
    hashIV: hash_iv!,
    baseUrl: settings.endpoint_url,
  };
  return { processor, merchant, methods: settings.methods };
}

/** The organization's merchant account at `processor` in this environment; null when the environment does not pay through it. */
export async function merchantOf<P extends keyof Merchants>(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  processor: P,
): Promise<{ merchant: Merchants[P]; methods: PaymentMethodKind[] } | null> {
  const found = await processorMerchantOf(context, organization, environment);
  return found?.processor === processor ? (found as { merchant: Merchants[P]; methods: PaymentMethodKind[] }) : null;
}

/** The organization's ECPay merchant in this environment, or null. */
export const ecpayMerchantOf = (context: ServiceContext, organization: string, environment: Environment) =>
  merchantOf(context, organization, environment, 'ecpay');

/** The organization's PAYUNi merchant in this environment, or null. */
export const payuniMerchantOf = (context: ServiceContext, organization: string, environment: Environment) =>
  merchantOf(context, organization, environment, 'payuni');
