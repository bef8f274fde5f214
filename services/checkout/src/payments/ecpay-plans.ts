import { dependenciesOf } from '../dependencies';
import { type ServiceContext, positiveNumberSetting } from '@billing/runtime';
import { cardBrandOf } from './card-brand';
import { type EcpayMerchant, parseEcpayDateTime } from './ecpay/merchant';
import { type PeriodInfo, periodAction, queryPeriod } from './ecpay/period';
import type { PeriodCharge } from './ecpay/period-charges';
import type { ChargeResult, SavedCard, SavedCardChargeRequest } from './processor';

/**
 * Renewals of subscriptions paid through ECPay's card plan (docs/payments.md). ECPay charges the
 * plan itself, on its own schedule, the same amount each period: a renewal is not a charge
 * asked of ECPay but a period ECPay charged, matched to the renewal's key once
 * (`EcpayPeriodCharges`). A period ECPay has not charged yet is an answer not known yet: the
 * caller records the renewal as pending and the reconciler asks again (`ecpayPlanChargeStatus`).
 */

const PREFIX = 'pm_ecpay_';

/** The platform's reference to an ECPay plan, the subscription's payment method: its MerchantTradeNo. */
export const ecpayPlanReference = (merchantTradeNo: string) => `${PREFIX}${merchantTradeNo}`;
export const isEcpayPlan = (paymentMethodId: string) => paymentMethodId.startsWith(PREFIX);
/** The plan's MerchantTradeNo, from its reference. */
export const ecpayPlanTradeNo = (paymentMethodId: string) => paymentMethodId.slice(PREFIX.length);

/** How often a renewal waiting for its period asks ECPay's plan query: `CHECKOUT_PLAN_CHECK_MS`, 10 minutes. */
function askedRecently(context: ServiceContext, charge: PeriodCharge, now: Date): boolean {
  const every = positiveNumberSetting(context.config, 'CHECKOUT_PLAN_CHECK_MS', 10 * 60_000);
  return charge.checkedAt !== null && now.getTime() - charge.checkedAt.getTime() < every;
}

/** ECPay has not charged the period yet, or did not answer: not known, asked again later. */
export class PlanChargeNotKnown extends Error {}

const RELEASED: ChargeResult = {
  status: 'declined',
  code: 'attempt_released',
  message: 'The attempt was given up before ECPay charged a period for it',
};
const declined = (code: string, message: string): ChargeResult => ({ status: 'declined', code, message });

/** The plan's card as the platform shows it (ECPay gives its first six and last four digits). */
export function planCard(info: Pick<PeriodInfo, 'merchantTradeNo' | 'card'>): SavedCard {
  return {
    id: ecpayPlanReference(info.merchantTradeNo),
    brand: cardBrandOf(info.card.first6),
    last4: info.card.last4,
    exp_month: 0,
    exp_year: 0,
  };
}

/** A renewal paid by the plan `request.paymentMethodId`: the period ECPay charged for it, once per key. */
export async function chargeEcpayPlan(
  context: ServiceContext,
  request: SavedCardChargeRequest,
  ecpay: EcpayMerchant | null,
): Promise<ChargeResult> {
  const records = dependenciesOf(context).ecpayPeriods;
  const known = await records.find(request.idempotencyKey);
  if (known?.status === 'released') return RELEASED;
  if (!ecpay) return declined('processor_unavailable', 'The plan is at ECPay, which the organization no longer uses');
  const charge =
    known ?? (await records.ask(request.idempotencyKey, ecpayPlanTradeNo(request.paymentMethodId), request.amount));
  // Billing asks a waiting renewal's key on every sweep; ECPay answers callers too quick with 403.
  if (charge.status === 'asked' && askedRecently(context, charge, request.now)) {
    throw new PlanChargeNotKnown('ECPay was asked about this period a moment ago; the renewal waits');
  }
  const answer = await matchPeriod(context, ecpay, charge, request.now);
  if (!answer) throw new PlanChargeNotKnown('ECPay has not charged this period yet; the renewal waits for it');
  return answer;
}

/**
 * The status query by key (the reconciler's) for a renewal asked of a plan: matched, declined, or
 * still not charged (null; with `release` the key is given up, and a period ECPay charges later
 * goes to the next renewal asked). A key never asked of a plan: null.
 */
export async function ecpayPlanChargeStatus(
  context: ServiceContext,
  ecpay: EcpayMerchant,
  idempotencyKey: string,
  release: boolean,
): Promise<ChargeResult | null> {
  const records = dependenciesOf(context).ecpayPeriods;
  const charge = await records.find(idempotencyKey);
  if (!charge) return null;
  if (charge.status === 'released') return RELEASED;
  if (!release && charge.status === 'asked' && askedRecently(context, charge, context.now())) return null;
  const answer = await matchPeriod(context, ecpay, charge, context.now());
  if (answer || !release) return answer;
  await records.release(idempotencyKey);
  // A renewal that took a period between the two reads keeps it.
  const after = (await records.find(idempotencyKey))!;
  return after.status === 'claimed' ? matchPeriod(context, ecpay, after, context.now()) : RELEASED;
}

/**
 * Matches the charge to the oldest authorisation after the buyer's first that no other renewal
 * took: paid, the charge succeeded; the latest failed, ECPay is asked to authorise it again
 * (補授權) once and asked again; nothing charged yet, null. Throws when ECPay does not answer.
 */
async function matchPeriod(
  context: ServiceContext,
  ecpay: EcpayMerchant,
  charge: PeriodCharge,
  now: Date,
  reauthorised = false,
): Promise<ChargeResult | null> {
  const records = dependenciesOf(context).ecpayPeriods;
  const info = await queryPeriod(ecpay, charge.merchantTradeNo, now).catch((error: Error) => {
    throw new PlanChargeNotKnown(error.message);
  });
  await records.checked(charge.chargeKey, now);
  const succeeded: ChargeResult = { status: 'succeeded', payment_method: planCard(info) };
  if (charge.status === 'claimed') return succeeded;
  const claimed = await records.claimedExecutions(charge.merchantTradeNo);
  const open = info.executions.slice(1).filter((execution) => !claimed.has(execution.tradeNo));
  const paid = open.find((execution) => execution.succeeded);
  if (paid) {
    if (paid.amount !== charge.amount) {
      return declined(
        'amount_mismatch',
        `ECPay's plan charges NT$${paid.amount} each period; this renewal is NT$${charge.amount}`,
      );
    }
    if (await records.claim(charge.chargeKey, paid.tradeNo, parseEcpayDateTime(paid.processDate))) return succeeded;
    // Another renewal took that period first: the next one, if any.
    return matchPeriod(context, ecpay, (await records.find(charge.chargeKey))!, now, reauthorised);
  }
  const last = open.at(-1);
  if (last && !last.succeeded && info.execStatus === '1' && !reauthorised) {
    const asked = await periodAction(ecpay, charge.merchantTradeNo, 'ReAuth', now).catch(() => null);
    if (asked?.ok) return matchPeriod(context, ecpay, charge, now, true);
  }
  if (last && !last.succeeded) {
    return declined('card_declined', `ECPay could not charge the card for this period (RtnCode ${last.code})`);
  }
  if (info.execStatus !== '1') {
    return declined('processor_unavailable', "ECPay's plan for this subscription no longer charges");
  }
  return null;
}

/**
 * The periods ECPay charged on the plan (after the buyer's first) that no renewal took: money for
 * no invoice, once the plan is stopped. Throws when ECPay does not answer.
 */
export async function unclaimedPeriods(
  context: ServiceContext,
  ecpay: EcpayMerchant,
  merchantTradeNo: string,
): Promise<PeriodInfo['executions']> {
  const info = await queryPeriod(ecpay, merchantTradeNo, context.now());
  const claimed = await dependenciesOf(context).ecpayPeriods.claimedExecutions(merchantTradeNo);
  return info.executions.slice(1).filter((execution) => execution.succeeded && !claimed.has(execution.tradeNo));
}

/**
 * Stops the plan's later charges at ECPay (the subscription ended). True once ECPay confirms or
 * says the plan is no longer running; false when it gave no answer (asked again later).
 */
export async function cancelEcpayPlan(
  context: ServiceContext,
  ecpay: EcpayMerchant,
  merchantTradeNo: string,
): Promise<boolean> {
  const answer = await periodAction(ecpay, merchantTradeNo, 'Cancel', context.now()).catch(() => null);
  if (answer?.ok) return true;
  const info = await queryPeriod(ecpay, merchantTradeNo, context.now()).catch(() => null);
  return info !== null && info.execStatus !== '1';
}
