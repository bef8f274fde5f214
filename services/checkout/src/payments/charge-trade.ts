import type { ChargeTrade } from '@billing/contracts';
import { ecpayPlanTradeNo, isEcpayPlan } from './ecpay-plans';
import { isEcpayCodeMethod } from './ecpay-invoice-codes';
import { merchantTradeNo } from './ecpay/aio';
import { isPayuniCodeMethod } from './payuni-invoice-codes';
import { isPayuniCard } from './payuni-saved-cards';
import { payuniTradeNo } from './payuni/upp';

/**
 * The trade of a saved payment method's charge under `chargeKey`, as the processor's back office
 * names it: the plan's MerchantTradeNo at ECPay (ECPay charges the plan each period), the
 * MerchantTradeNo of the key at ECPay for a transfer, the MerTradeNo derived from the key at
 * PAYUNi (cards and transfer codes), the key at the simulator.
 */
export function chargeTradeOf(paymentMethodId: string, chargeKey: string): ChargeTrade {
  if (isEcpayPlan(paymentMethodId))
    return { processor: 'ecpay', processor_reference: ecpayPlanTradeNo(paymentMethodId) };
  if (isEcpayCodeMethod(paymentMethodId))
    return { processor: 'ecpay', processor_reference: merchantTradeNo(chargeKey) };
  if (isPayuniCard(paymentMethodId) || isPayuniCodeMethod(paymentMethodId)) {
    return { processor: 'payuni', processor_reference: payuniTradeNo(chargeKey) };
  }
  return { processor: 'sandbox', processor_reference: chargeKey };
}

/** Whether a saved payment method is kept at a processor (ECPay, PAYUNi) rather than by the simulator. */
export const isAtProcessor = (paymentMethodId: string) =>
  isEcpayPlan(paymentMethodId) ||
  isEcpayCodeMethod(paymentMethodId) ||
  isPayuniCard(paymentMethodId) ||
  isPayuniCodeMethod(paymentMethodId);
