import type { Environment } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import type { PayuniMerchant } from './payuni/merchant';
import { type PayuniTradeStatus, queryPayuniTrade } from './payuni/query';
import { cancelPayuniAuthorization, refundPayuniTrade } from './payuni/refund';
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
 * A refund at PAYUNi, exactly once although PAYUNi takes no idempotency key: before asking, the
 * trade's refunded total is recorded with the refund; when an answer was lost, the trade query
 * says whether that total has moved by this refund's amount (made) or not at all (asked again).
 * Any other move needs a person, and the refund stays pending. This holds while one refund of a
 * charge is asked at a time.
 *
 * Which call by the trade's capture (CloseStatus, `queryPayuniTrade`): a captured one (or one
 * whose capture is under way or not shown) is refunded (`/api/trade/close`, CloseType 2); one
 * whose capture is only requested, on the day of payment, has its authorisation canceled whole
 * (`/api/trade/cancel`), and a part of it cannot be given back until it is captured: `failed`,
 * to be asked again the next day. A cancellation whose answer was lost is made when the trade
 * shows its capture canceled (CloseStatus 3) or the trade canceled (TradeStatus 3).
 */
async function refundAtPayuni(
  context: ServiceContext,
  merchant: PayuniMerchant,
  request: RefundRequest,
): Promise<RefundResult> {
  const records = dependenciesOf(context).payuni;
  const refundId = `payuni_${request.idempotencyKey}`;
  const made = async () => {
    await records.settleRefund(request.idempotencyKey, 'refunded');
    return { status: 'succeeded', refund_id: refundId } as const;
  };
  const known = await records.findRefund(request.idempotencyKey);
  if (known?.status === 'refunded') return { status: 'succeeded', refund_id: refundId };
  if (known?.status === 'refused') return { status: 'failed', message: known.message ?? 'PAYUNi refused the refund' };
  const trade = await queryPayuniTrade(merchant, payuniTradeNo(request.chargeKey), request.now);
  if (known && known.refundedBefore === 0 && authorisationCanceled(trade)) return made();
  if (trade.status !== 'paid') return { status: 'failed', message: 'PAYUNi does not show this charge as paid' };
  if (known) {
    if (trade.refunded === known.refundedBefore + known.amount) return made();
    if (trade.refunded !== known.refundedBefore) {
      throw new Error(`PAYUNi's refunded total for ${request.chargeKey} moved by another amount: for a person`);
    }
  }
  const refusal = refusalBeforeAsking(trade, request.amount);
  if (refusal) return { status: 'failed', message: refusal };
  const asked = await records.askRefund({
    idempotencyKey: request.idempotencyKey,
    chargeKey: request.chargeKey,
    amount: request.amount,
    refundedBefore: trade.refunded,
  });
  const target = { payuniTradeNo: trade.payuniTradeNo, amount: asked.amount };
  const outcome =
    trade.capture === 'requested'
      ? await cancelPayuniAuthorization(merchant, target, request.now)
      : await refundPayuniTrade(merchant, target, request.now);
  if (outcome.status === 'refunded') return made();
  await records.settleRefund(request.idempotencyKey, 'refused', outcome.message);
  return { status: 'failed', message: outcome.message || 'PAYUNi refused the refund' };
}

type PaidPayuniTrade = Extract<PayuniTradeStatus, { status: 'paid' }>;

/** Whether PAYUNi shows the trade's authorisation canceled: nothing of it was taken. */
const authorisationCanceled = (trade: PayuniTradeStatus) =>
  (trade.status === 'paid' && trade.capture === 'canceled') || (trade.status === 'failed' && trade.tradeStatus === '3');

/** Why PAYUNi cannot give `amount` of the trade back now, before anything is asked; null when it can. */
function refusalBeforeAsking(trade: PaidPayuniTrade, amount: number): string | null {
  if (trade.capture === 'canceled')
    return "PAYUNi shows this payment's authorisation canceled: nothing is left to refund";
  if (trade.capture === 'requested' && (amount !== trade.amount || trade.refunded > 0)) {
    return 'PAYUNi gives back part of a card payment only once it is captured, the day after the payment: refund it again tomorrow';
  }
  return null;
}
