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
import { deferRefund, deferredRefund, refundDeferredUntil } from './refund-deferrals';

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
 * (`/api/trade/cancel`), and a part of it cannot be given back until it is captured: `deferred`
 * to the next morning, nothing asked of PAYUNi until then. A cancellation whose answer was lost
 * is made when the trade shows its capture canceled (CloseStatus 3) or the trade canceled
 * (TradeStatus 3).
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
  const waiting = await refundDeferredUntil(context.store, request.idempotencyKey, request.now);
  if (waiting) return deferred(waiting);
  const trade = await queryPayuniTrade(merchant, payuniTradeNo(request.chargeKey), request.now);
  if (known && known.refundedBefore === 0 && authorisationCanceled(trade)) return made();
  if (trade.status !== 'paid') return { status: 'failed', message: 'PAYUNi does not show this charge as paid' };
  if (known) {
    if (trade.refunded === known.refundedBefore + known.amount) return made();
    if (trade.refunded !== known.refundedBefore) {
      throw new Error(`PAYUNi's refunded total for ${request.chargeKey} moved by another amount: for a person`);
    }
  }
  if (trade.capture === 'canceled') {
    return {
      status: 'failed',
      message: "PAYUNi shows this payment's authorisation canceled: nothing is left to refund",
    };
  }
  if (partBeforeCapture(trade, request.amount)) {
    const until = nextMorningInTaiwan(request.now);
    await deferRefund(context.store, request.idempotencyKey, until);
    return deferred(until);
  }
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

/** A part of a trade whose capture is only requested: PAYUNi cannot give it back before the capture (a whole one is canceled). */
const partBeforeCapture = (trade: PaidPayuniTrade, amount: number) =>
  trade.capture === 'requested' && (amount !== trade.amount || trade.refunded > 0);

const deferred = (until: Date) =>
  deferredRefund('PAYUNi gives back part of a card payment once it is captured, the day after the payment', until);

/**
 * When a refund waiting for PAYUNi's capture is asked again: 09:00 in Taiwan after `now`. PAYUNi
 * does not say when it captures; its merchants are told to refund a trade paid today tomorrow.
 * Not captured by then, it waits for the next morning.
 */
export function nextMorningInTaiwan(now: Date): Date {
  const taipeiDay = new Date(now.getTime() + 8 * 3600_000).toISOString().slice(0, 10);
  const morning = new Date(`${taipeiDay}T09:00:00+08:00`);
  return morning > now ? morning : new Date(morning.getTime() + 24 * 3600_000);
}
