import type { Environment } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { cardBrandOf } from './card-brand';
import { CardChargeUnanswered, type PayuniCard, chargeCreditToken } from './payuni/embed';
import type { PayuniMerchant } from './payuni/merchant';
import { queryPayuniTrade } from './payuni/query';
import { payuniTradeNo } from './payuni/upp';
import type { ChargeResult, SavedCardChargeRequest } from './processor';

/** A card PAYUNi charged, as the platform shows it (brand from its first six digits; expiry 0 when PAYUNi gave none). */
export const payuniCardShown = (card: PayuniCard) => ({
  brand: cardBrandOf(card.first6),
  last4: card.last4,
  exp_month: card.expMonth ?? 0,
  exp_year: card.expYear ?? 0,
});

/** The platform's reference to a card PAYUNi keeps (`PayuniRecords.saveCard`). */
export const isPayuniCard = (paymentMethodId: string) => paymentMethodId.startsWith('pm_payuni_');

type Owner = { organization: string; environment: Environment };

/** What a released key answers: nothing was charged under it, nor will be (as the simulator's). */
const RELEASED: ChargeResult = {
  status: 'declined',
  code: 'attempt_released',
  message: 'The attempt was given up before it was charged',
};

const declined = (code: string, message: string): ChargeResult => ({ status: 'declined', code, message });

/**
 * A renewal's charge of a card PAYUNi keeps (`/api/credit` with its CreditToken and CreditHash),
 * once per key (`payuni` is the organization's merchant, null when it no longer uses PAYUNi): the key's trade number is PAYUNi's MerTradeNo, so a repeat of a charge PAYUNi
 * made is refused there (an unsigned error, read as no answer) and answered here from PAYUNi's
 * trade query. An answer PAYUNi did not
 * give, and the query cannot settle, throws: the caller records the outcome as unknown and the
 * reconciler asks `payuniChargeStatus` later.
 */
export async function chargePayuniSavedCard(
  context: ServiceContext,
  owner: Owner,
  request: SavedCardChargeRequest,
  payuni: PayuniMerchant | null,
): Promise<ChargeResult> {
  const { payuni: records } = dependenciesOf(context);
  if (await records.isReleased(request.idempotencyKey)) return RELEASED;
  if (!payuni)
    return declined('processor_unavailable', 'The card was saved at PAYUNi, which the organization no longer uses');
  const saved = await records.findCard(request.paymentMethodId, owner);
  if (!saved) return declined('payment_method_not_found', 'No such saved card');
  const tradeNo = payuniTradeNo(request.idempotencyKey);
  const succeeded: ChargeResult = { status: 'succeeded', payment_method: saved.card };
  try {
    const outcome = await chargeCreditToken(
      payuni,
      {
        tradeNo,
        amount: request.amount,
        description: 'Subscription renewal',
        creditToken: saved.creditToken,
        creditHash: saved.creditHash,
      },
      request.now,
    );
    if (outcome.status === 'paid') return succeeded;
    if (outcome.status === 'requires_3d') return declined('authentication_required', 'The card asks for the buyer');
    return declined(outcome.code, outcome.message);
  } catch (error) {
    if (!(error instanceof CardChargeUnanswered)) throw error;
  }
  const answer = await settledByQuery(payuni, tradeNo, request.now, succeeded);
  if (!answer) throw new CardChargeUnanswered('PAYUNi did not answer the charge and does not know it yet');
  return answer;
}

/**
 * The status query by the platform's key (the reconciler's): PAYUNi's answer about the key's
 * trade; with `release`, a trade PAYUNi never saw is given up here, so a charge asked under
 * the key later is refused before PAYUNi. Null: PAYUNi does not know it (and it was not
 * released). Throws when PAYUNi does not answer.
 */
export async function payuniChargeStatus(
  context: ServiceContext,
  payuni: PayuniMerchant,
  idempotencyKey: string,
  release: boolean,
): Promise<ChargeResult | null> {
  const { payuni: records } = dependenciesOf(context);
  if (await records.isReleased(idempotencyKey)) return RELEASED;
  const paid: ChargeResult = {
    status: 'succeeded',
    payment_method: { id: 'pm_payuni_unknown', brand: 'unknown', last4: '', exp_month: 0, exp_year: 0 },
  };
  const answer = await settledByQuery(payuni, payuniTradeNo(idempotencyKey), context.now(), paid);
  if (answer || !release) return answer;
  await records.release(idempotencyKey);
  return RELEASED;
}

/** Paid or failed by PAYUNi's trade query; null when PAYUNi has no final answer about the trade. */
async function settledByQuery(
  merchant: PayuniMerchant,
  tradeNo: string,
  now: Date,
  succeeded: ChargeResult,
): Promise<ChargeResult | null> {
  const status = await queryPayuniTrade(merchant, tradeNo, now);
  if (status.status === 'paid') return succeeded;
  if (status.status === 'failed') return declined('card_declined', 'PAYUNi did not take the charge');
  return null;
}
