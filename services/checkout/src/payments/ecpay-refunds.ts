import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { merchantTradeNo } from './ecpay/aio';
import type { EcpayMerchant } from './ecpay/merchant';
import { queryTrade } from './ecpay/query';
import { EcpayRefundUnanswered, refundEcpayTrade } from './ecpay/refund';
import type { RefundRequest, RefundResult } from './processor';
import { nextDailyCapture } from './ecpay/capture';
import { deferRefund, deferredRefund, refundDeferredUntil } from './refund-deferrals';

/**
 * Refunds of card payments ECPay took (docs/payments.md): a checkout's trade, a subscription's
 * first payment (its plan's trade), or a renewal (the plan period matched to it). ECPay takes no
 * key for a refund, so each is asked at most once (`EcpayRefunds`); a refund whose answer was
 * lost stays pending for a person, never asked again.
 */

/**
 * The ECPay authorisation a charge key paid with: the trade (or plan period), what it took,
 * whether it was a card, and when it was made (null when not known: a plan's period matched
 * before its time was kept).
 */
type EcpayAuthorisation = {
  merchantTradeNo: string;
  ecpayTradeNo: string;
  amount: number;
  card: boolean;
  authorisedAt: Date | null;
};

/**
 * The authorisation behind `chargeKey`: the plan period matched to a renewal's key, else the
 * checkout trade ECPay reports paid under the key's MerchantTradeNo; null when ECPay shows none.
 * Throws when ECPay does not answer.
 */
export async function ecpayAuthorisationOf(
  context: ServiceContext,
  merchant: EcpayMerchant,
  chargeKey: string,
): Promise<EcpayAuthorisation | null> {
  const period = await dependenciesOf(context).ecpayPeriods.find(chargeKey);
  if (period?.status === 'claimed' && period.executionTradeNo) {
    const { merchantTradeNo: tradeNo, executionTradeNo: ecpayTradeNo, amount } = period;
    return { merchantTradeNo: tradeNo, ecpayTradeNo, amount, card: true, authorisedAt: period.authorisedAt };
  }
  const tradeNo = merchantTradeNo(chargeKey);
  const trade = await queryTrade(merchant, tradeNo, context.now());
  if (trade.status !== 'paid') return null;
  const card = trade.paymentType.startsWith('Credit');
  return {
    merchantTradeNo: tradeNo,
    ecpayTradeNo: trade.ecpayTradeNo,
    amount: trade.amount,
    card,
    authorisedAt: trade.paidAt,
  };
}

/**
 * The refund at ECPay (CreditDetail/DoAction: R, or N and E for a whole one before capture), asked
 * at most once under its key; a part of a payment asked before ECPay's daily capture waits for it
 * (`deferred`, nothing asked of ECPay until then).
 */
export async function refundAtEcpay(
  context: ServiceContext,
  merchant: EcpayMerchant,
  request: RefundRequest,
): Promise<RefundResult> {
  const records = dependenciesOf(context).ecpayRefunds;
  const refundId = `ecpay_${request.idempotencyKey}`;
  const lost = () =>
    new Error(
      `ECPay's answer to refund ${request.idempotencyKey} was lost; ECPay takes no key, so it is not asked twice: read the trade in ECPay's site`,
    );
  const known = await records.find(request.idempotencyKey);
  if (known?.status === 'refunded') return { status: 'succeeded', refund_id: refundId };
  if (known?.status === 'refused') return { status: 'failed', message: known.message ?? 'ECPay refused the refund' };
  if (known) throw lost();
  const waiting = await refundDeferredUntil(context.store, request.idempotencyKey, request.now);
  if (waiting) return deferred(waiting);
  const paid = await ecpayAuthorisationOf(context, merchant, request.chargeKey);
  if (!paid) return { status: 'failed', message: 'ECPay does not show this charge as paid' };
  if (!paid.card)
    return {
      status: 'failed',
      message: 'ECPay refunds cards only: an ATM or store payment goes back by bank transfer',
    };
  const capturedFrom = partBeforeCapture(paid, request.amount, request.now);
  if (capturedFrom) {
    await deferRefund(context.store, request.idempotencyKey, capturedFrom);
    return deferred(capturedFrom);
  }
  const { merchantTradeNo: tradeNo, ecpayTradeNo } = paid;
  if (
    !(await records.ask({
      idempotencyKey: request.idempotencyKey,
      merchantTradeNo: tradeNo,
      ecpayTradeNo,
      amount: request.amount,
    }))
  ) {
    throw lost();
  }
  try {
    const outcome = await refundEcpayTrade(merchant, {
      merchantTradeNo: tradeNo,
      ecpayTradeNo,
      amount: request.amount,
      authorised: paid.amount,
    });
    if (outcome.status === 'refunded') {
      await records.settle(request.idempotencyKey, 'refunded');
      return { status: 'succeeded', refund_id: refundId };
    }
    const message = outcome.message || `ECPay refused the refund (${outcome.code})`;
    await records.settle(request.idempotencyKey, 'refused', message);
    return { status: 'failed', message };
  } catch (error) {
    if (error instanceof EcpayRefundUnanswered) throw lost();
    throw error;
  }
}

/** A quarter of an hour into ECPay's daily capture: a part of an authorisation can be refunded (R) from then. */
const CAPTURE_UNDER_WAY_MS = 15 * 60_000;

/**
 * A part of a card authorisation asked before ECPay's 20:15 capture (ECPay documents no action
 * for it: R needs the capture under way or done): when to ask, or null when it may be asked now
 * (a whole refund is abandoned before the capture, N; an authorisation made at an unknown time
 * is asked as it is).
 */
function partBeforeCapture(paid: EcpayAuthorisation, amount: number, now: Date): Date | null {
  if (amount === paid.amount || !paid.authorisedAt) return null;
  const askFrom = new Date(nextDailyCapture(paid.authorisedAt).getTime() + CAPTURE_UNDER_WAY_MS);
  return now < askFrom ? askFrom : null;
}

const deferred = (until: Date) =>
  deferredRefund('ECPay gives back part of a card payment once its daily capture at 20:15 has begun', until);
