import { ApiError, type CreatedPaymentMethod, type Environment, randomBase62 } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { payuniCardShown } from './payuni-saved-cards';
import {
  CardChargeUnanswered,
  type PayuniCardFields,
  authorizeEmbeddedCard,
  payuniScriptUrl,
  requestSdkToken,
} from './payuni/embed';
import type { PayuniMerchant } from './payuni/merchant';
import { payuniTradeNo } from './payuni/upp';
import { VERIFICATION_AMOUNT, giveBackVerification, noteVerification } from './payuni-verifications';

/**
 * A new card in the customer portal for an organization that pays through PAYUNi
 * (docs/payments.md, "A new card in the portal"). PAYUNi keeps a card (a CreditHash) only once
 * it has charged it, so the portal takes a new card where a payment is due: the customer types
 * it into PAYUNi's card fields on the portal's page, and checkout charges the first overdue
 * invoice with it, under the key billing's retry of that invoice uses (`<invoice>:<attempt>`);
 * with nothing due, the card is verified by NT$1 given back (`verifyPortalCard`).
 * The card is then kept for renewals, and billing's retry of the invoice asks PAYUNi under the
 * same key: PAYUNi refuses a MerTradeNo twice and its trade query answers the charge made here,
 * so the invoice is paid once. A card that asks for 3-D Secure is refused, as the simulator's
 * is in the portal: the portal does not send the customer to the bank.
 */

type Owner = { organization: string; environment: Environment };

/** The key under which a customer's card fields are remembered (the checkout sessions' table, by a portal's name). */
const fieldsKey = (customerId: string) => `portal:${customerId}`;

/** The payer's id at PAYUNi for a card the portal keeps: the customer's. */
const creditTokenOf = (customerId: string) => customerId;

/** PAYUNi's card fields for the portal's page at `iframeDomain`, with a new SDK token (PAYUNi's last ten minutes). */
export async function openPortalCardFields(
  context: ServiceContext,
  owner: Owner,
  merchant: PayuniMerchant,
  request: { customerId: string; iframeDomain: string },
): Promise<PayuniCardFields> {
  const token = await requestSdkToken(
    merchant,
    { iframeDomain: request.iframeDomain, creditToken: creditTokenOf(request.customerId) },
    context.now(),
  );
  await dependenciesOf(context).payuni.putSdkToken(
    fieldsKey(request.customerId),
    token.sdkToken,
    token.expiresAt,
    request.iframeDomain,
  );
  return {
    sdkToken: token.sdkToken,
    scriptUrl: payuniScriptUrl(merchant.baseUrl),
    env: owner.environment === 'PRODUCTION' ? 'P' : 'S',
  };
}

export type PortalCardCharge = { customerId: string; idempotencyKey: string; amount: number; description: string };

const refused = (code: string, message: string) =>
  ApiError.of('payment_required', message, [{ path: 'card_number', code, message }]);

/**
 * Charges `charge.amount` to the card last bound to the customer's portal fields, under
 * `charge.idempotencyKey`, and keeps the card: answers it as billing saves it (`pm_payuni_...`).
 * Declined, or asking for 3-D Secure: 402. No card bound: 422. PAYUNi not answering: 502, and
 * the charge may have been made: billing's retry under the same key asks PAYUNi about it.
 */
export async function chargePortalCard(
  context: ServiceContext,
  owner: Owner,
  merchant: PayuniMerchant,
  charge: PortalCardCharge,
): Promise<CreatedPaymentMethod> {
  const records = dependenciesOf(context).payuni;
  const sdkToken = await records.sdkToken(fieldsKey(charge.customerId));
  if (!sdkToken) throw ApiError.of('validation_error', 'Enter a card in the card fields first');
  await records.useSdkToken(fieldsKey(charge.customerId), context.now());
  const tradeNo = payuniTradeNo(charge.idempotencyKey);
  // PAYUNi answers this charge in its reply; its posts (there are none without 3-D Secure) are acknowledged only.
  const notifyUrl = `${dependenciesOf(context).checkoutUrl}/${tradeNo}/payuni/card-notify`;
  let outcome: Awaited<ReturnType<typeof authorizeEmbeddedCard>>;
  try {
    outcome = await authorizeEmbeddedCard(
      merchant,
      {
        sdkToken,
        tradeNo,
        amount: charge.amount,
        description: charge.description,
        returnUrl: notifyUrl,
        notifyUrl,
        threeDSecure: false,
      },
      context.now(),
    );
  } catch (error) {
    if (!(error instanceof CardChargeUnanswered)) throw error;
    throw new ApiError(502, 'processor_unavailable', 'PAYUNi did not answer; the charge is asked about again');
  }
  if (outcome.status === 'requires_3d') {
    throw refused('authentication_required', 'The card asks for a challenge step (3-D Secure)');
  }
  if (outcome.status === 'declined') throw refused(outcome.code, outcome.message);
  const { card } = outcome;
  if (!card.creditHash) {
    context.logger.error({ trade: tradeNo }, 'PAYUNi charged a portal card without keeping it (no CreditHash)');
    throw new ApiError(502, 'processor_unavailable', 'PAYUNi did not keep the card');
  }
  const saved = await records.saveCard(
    owner,
    { creditToken: creditTokenOf(charge.customerId), creditHash: card.creditHash },
    payuniCardShown(card),
  );
  return { object: 'payment_method', ...saved };
}

/**
 * A new card in the portal when nothing is due: verified by NT$1 under a key of its own, kept,
 * and the NT$1 given back at once, as a free trial's (payuni-verifications.ts). Noted before it
 * is asked, so that the sweep gives it back whatever comes of it. Answers and refuses as
 * `chargePortalCard`.
 */
export async function verifyPortalCard(
  context: ServiceContext,
  owner: Owner,
  merchant: PayuniMerchant,
  customerId: string,
): Promise<CreatedPaymentMethod> {
  const idempotencyKey = `seti_${randomBase62(24)}`;
  const verification = { ...owner, tradeNo: payuniTradeNo(idempotencyKey) };
  await noteVerification(context, verification);
  const saved = await chargePortalCard(context, owner, merchant, {
    customerId,
    idempotencyKey,
    amount: VERIFICATION_AMOUNT,
    description: 'Card verification',
  });
  await giveBackVerification(context, merchant, verification);
  return saved;
}
