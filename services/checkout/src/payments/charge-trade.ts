import type { ChargeTrade } from '@billing/contracts';
import { ecpayPlanTradeNo, isEcpayPlan } from './ecpay-plans';
import { isPayuniCodeMethod } from './payuni-invoice-codes';
import { isPayuniCard } from './payuni-saved-cards';
import { payuniTradeNo } from './payuni/upp';

/**
 * The trade of a saved payment method's charge under `chargeKey`, as the processor's back office
 * names it: the plan's MerchantTradeNo at ECPay (ECPay charges the plan each period), the
 * MerTradeNo derived from the key at PAYUNi (cards and transfer codes), the key at the simulator.
 */
export function chargeTradeOf(paymentMethodId: string, chargeKey: string): ChargeTrade {
  if (isEcpayPlan(paymentMethodId)) return { processor: 'ecpay', processor_reference: ecpayPlanTradeNo(paymentMethodId) };
  if (isPayuniCard(paymentMethodId) || isPayuniCodeMethod(paymentMethodId)) {
    return { processor: 'payuni', processor_reference: payuniTradeNo(chargeKey) };
  }
  return { processor: 'sandbox', processor_reference: chargeKey };
}
