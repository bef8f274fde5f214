import type { ChargeTrade } from '@billing/contracts';
import { merchantTradeNo } from './ecpay/aio';
import { payuniTradeNo } from './payuni/upp';

/**
 * The trade of a checkout session's charge under `chargeKey`, as the processor's back office names
 * it: ECPay's MerchantTradeNo or PAYUNi's MerTradeNo, both derived from the key as it was sent;
 * the simulator's, the key (`processor` absent: the simulator).
 */
export function sessionTradeOf(processor: 'ecpay' | 'payuni' | undefined, chargeKey: string): ChargeTrade {
  if (processor === 'ecpay') return { processor, processor_reference: merchantTradeNo(chargeKey) };
  if (processor === 'payuni') return { processor, processor_reference: payuniTradeNo(chargeKey) };
  return { processor: 'sandbox', processor_reference: chargeKey };
}
