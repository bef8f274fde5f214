import type { Environment } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import type { PayuniMerchant } from './payuni/merchant';
import { queryPayuniTrade } from './payuni/query';
import { refundPayuniTrade } from './payuni/refund';
import { payuniTradeNo } from './payuni/upp';
import type { RefundRequest, RefundResult } from './processor';
import { type ProcessorMerchant, processorMerchantOf } from './settings/merchant-of';
import { refundAtEcpay } from './ecpay-refunds';

type Owner = { organization: string; environment: Environment };

/**
 * Gives money back for a charge, where it was taken: at PAYUNi or ECPay for a charge it made (a
 * checkout, or a renewal of a card or plan it keeps), else at the simulator. Once per
 * `idempotencyKey`, as `PaymentProcessor.refund`; throws when the processor gives no answer (the
 * caller asks again, except ECPay's, which stays pending for a person).
 */
export async function refundCharge(
  context: ServiceContext,
  owner: Owner,
  request: RefundRequest,
): Promise<RefundResult> {
  const charged = await chargedAt(context, owner, request.chargeKey);
  if (charged?.processor === 'payuni') return refundAtPayuni(context, charged.merchant, request);
  if (charged?.processor === 'ecpay') return refundAtEcpay(context, charged.merchant, request);
  return dependenciesOf(context).processor.refund(request);
}

/**
 * The organization's merchant at its processor when the charge is that processor's: one the
 * simulator has no record of, of an organization that pays through ECPay or PAYUNi. Null otherwise.
 */
export async function chargedAt(
  context: ServiceContext,
  owner: Owner,
  chargeKey: string,
): Promise<ProcessorMerchant | null> {
  const simulated = await dependenciesOf(context).processor.lookup(chargeKey);
  if (simulated?.status === 'succeeded') return null;
  return processorMerchantOf(context, owner.organization, owner.environment);
}

/** PAYUNi's PaymentType of a card trade: ATM (2) and store (3) payments are not refunded through its API. */
const PAYUNI_CARD = '1';

/**
 * Whether PAYUNi refunds this charge through its API: a card trade. An ATM or convenience-store
 * payment goes back to the buyer by bank transfer, outside the API. When PAYUNi does not answer
 * the question is left to the refund itself, which asks again and stays pending meanwhile.
 */
export async function payuniRefundsByApi(
  context: ServiceContext,
  merchant: PayuniMerchant,
  chargeKey: string,
): Promise<boolean> {
  const trade = await queryPayuniTrade(merchant, payuniTradeNo(chargeKey), context.now()).catch(() => null);
  return trade?.status !== 'paid' || trade.paymentType === PAYUNI_CARD;
}

/**
 * A refund at PAYUNi (`/api/trade/close`, CloseType 2), exactly once although PAYUNi takes no
 * idempotency key: before asking, the trade's refunded total is recorded with the refund; when
 * an answer was lost, the trade query says whether that total has moved by this refund's amount
 * (made) or not at all (asked again). Any other move needs a person, and the refund stays
 * pending. This holds while one refund of a charge is asked at a time.
 */
async function refundAtPayuni(
  context: ServiceContext,
  merchant: PayuniMerchant,
  request: RefundRequest,
): Promise<RefundResult> {
  const records = dependenciesOf(context).payuni;
  const refundId = `payuni_${request.idempotencyKey}`;
  const known = await records.findRefund(request.idempotencyKey);
  if (known?.status === 'refunded') return { status: 'succeeded', refund_id: refundId };
  if (known?.status === 'refused') return { status: 'failed', message: known.message ?? 'PAYUNi refused the refund' };
  const trade = await queryPayuniTrade(merchant, payuniTradeNo(request.chargeKey), request.now);
  if (trade.status !== 'paid') return { status: 'failed', message: 'PAYUNi does not show this charge as paid' };
  if (known) {
    if (trade.refunded === known.refundedBefore + known.amount) {
      await records.settleRefund(request.idempotencyKey, 'refunded');
      return { status: 'succeeded', refund_id: refundId };
    }
    if (trade.refunded !== known.refundedBefore) {
      throw new Error(`PAYUNi's refunded total for ${request.chargeKey} moved by another amount: for a person`);
    }
  }
  const asked = await records.askRefund({
    idempotencyKey: request.idempotencyKey,
    chargeKey: request.chargeKey,
    amount: request.amount,
    refundedBefore: trade.refunded,
  });
  const outcome = await refundPayuniTrade(
    merchant,
    { payuniTradeNo: trade.payuniTradeNo, amount: asked.amount },
    request.now,
  );
  if (outcome.status === 'refunded') {
    await records.settleRefund(request.idempotencyKey, 'refunded');
    return { status: 'succeeded', refund_id: refundId };
  }
  await records.settleRefund(request.idempotencyKey, 'refused', outcome.message);
  return { status: 'failed', message: outcome.message || 'PAYUNi refused the refund' };
}
