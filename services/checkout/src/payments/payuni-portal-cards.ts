import {
  ApiError,
  type CreatedPaymentMethod,
  type Environment,
  type PortalCardChallenge,
  notFound,
  randomBase62,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { payuniCardShown } from './payuni-saved-cards';
import {
  CardChargeUnanswered,
  type PayuniCard,
  type PayuniCardFields,
  authorizeEmbeddedCard,
  payuniScriptUrl,
  readCardNotification,
  requestSdkToken,
} from './payuni/embed';
import type { PayuniMerchant } from './payuni/merchant';
import { RejectedNotification } from './payuni/notifications';
import type { PortalChallenge } from './payuni/portal-challenges';
import { queryPayuniTrade } from './payuni/query';
import { payuniMerchantOf } from './settings/merchant-of';
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
 * so the invoice is paid once. A card whose bank asks for the customer (3-D Secure) sends them
 * to the bank when the portal gave a page to come back to (`returnUrl`): PAYUNi's signed result,
 * posted to NotifyURL or brought by the browser to ReturnURL, settles it once
 * (`acceptPortalCardResult`), and the portal reads it (`portalCardResult`). Without one (a card
 * verified with nothing due), such a card is refused.
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

export type PortalCardCharge = {
  customerId: string;
  idempotencyKey: string;
  amount: number;
  description: string;
  /** The portal's page the customer comes back to from the bank; none refuses a card that asks for it. */
  returnUrl?: string;
};

const refused = (code: string, message: string) =>
  ApiError.of('payment_required', message, [{ path: 'card_number', code, message }]);

/**
 * Charges `charge.amount` to the card last bound to the customer's portal fields, under
 * `charge.idempotencyKey`, and keeps the card: answers it as billing saves it (`pm_payuni_...`),
 * or the bank's page when it asks for the customer and `charge.returnUrl` was given. Declined, or
 * asking for 3-D Secure without a page to come back to: 402. No card bound: 422. PAYUNi not
 * answering: 502, and the charge may have been made: billing's retry under the same key asks
 * PAYUNi about it.
 */
export async function chargePortalCard(
  context: ServiceContext,
  owner: Owner,
  merchant: PayuniMerchant,
  charge: PortalCardCharge,
): Promise<CreatedPaymentMethod | PortalCardChallenge> {
  const records = dependenciesOf(context).payuni;
  const sdkToken = await records.sdkToken(fieldsKey(charge.customerId));
  if (!sdkToken) throw ApiError.of('validation_error', 'Enter a card in the card fields first');
  await records.useSdkToken(fieldsKey(charge.customerId), context.now());
  const tradeNo = payuniTradeNo(charge.idempotencyKey);
  // After 3-D Secure PAYUNi posts the result to NotifyURL and sends the browser to ReturnURL with it.
  const at = `${dependenciesOf(context).checkoutUrl}/${tradeNo}/payuni`;
  let outcome: Awaited<ReturnType<typeof authorizeEmbeddedCard>>;
  try {
    outcome = await authorizeEmbeddedCard(
      merchant,
      {
        sdkToken,
        tradeNo,
        amount: charge.amount,
        description: charge.description,
        returnUrl: `${at}/card-return`,
        notifyUrl: `${at}/card-notify`,
        threeDSecure: charge.returnUrl !== undefined,
      },
      context.now(),
    );
  } catch (error) {
    if (!(error instanceof CardChargeUnanswered)) throw error;
    throw new ApiError(502, 'processor_unavailable', 'PAYUNi did not answer; the charge is asked about again');
  }
  if (outcome.status === 'requires_3d') {
    if (!charge.returnUrl) throw refused('authentication_required', 'The card asks for a challenge step (3-D Secure)');
    const { customerId, idempotencyKey: chargeKey, amount, returnUrl } = charge;
    await dependenciesOf(context).portalChallenges.record({
      tradeNo,
      chargeKey,
      customerId,
      ...owner,
      amount,
      returnUrl,
    });
    return { status: 'requires_action', redirect_url: outcome.url };
  }
  if (outcome.status === 'declined') throw refused(outcome.code, outcome.message);
  return keepCard(context, owner, charge.customerId, tradeNo, outcome.card);
}

/** The card PAYUNi charged, kept for renewals under the customer's CreditToken: as billing saves it. */
async function keepCard(
  context: ServiceContext,
  owner: Owner,
  customerId: string,
  tradeNo: string,
  card: PayuniCard,
): Promise<CreatedPaymentMethod> {
  if (!card.creditHash) {
    context.logger.error({ trade: tradeNo }, 'PAYUNi charged a portal card without keeping it (no CreditHash)');
    throw new ApiError(502, 'processor_unavailable', 'PAYUNi did not keep the card');
  }
  const saved = await dependenciesOf(context).payuni.saveCard(
    owner,
    { creditToken: creditTokenOf(customerId), creditHash: card.creditHash },
    payuniCardShown(card),
  );
  return { object: 'payment_method', ...saved };
}

/**
 * PAYUNi's result of a portal card's 3-D Secure step (NotifyURL, or the customer's browser at
 * ReturnURL) about `challenge`, checked with the organization's keys and matched to the trade and
 * its amount: the card kept, or the decline, recorded once however often it comes. Answers
 * whether the post checked out (a result PAYUNi does not know yet does; the portal then asks its
 * trade query).
 */
export async function acceptPortalCardResult(
  context: ServiceContext,
  challenge: PortalChallenge,
  body: Record<string, unknown>,
): Promise<boolean> {
  const { tradeNo } = challenge;
  const payuni = await payuniMerchantOf(context, challenge.organization, challenge.environment);
  if (!payuni) return false;
  let result: ReturnType<typeof readCardNotification>;
  try {
    result = readCardNotification(body, payuni.merchant);
  } catch (error) {
    if (error instanceof RejectedNotification) return false;
    if (error instanceof CardChargeUnanswered) return true;
    throw error;
  }
  const { outcome } = result;
  if (result.tradeNo !== tradeNo) return false;
  if (challenge.status !== 'challenged' || outcome.status === 'requires_3d') return true;
  const challenges = dependenciesOf(context).portalChallenges;
  if (outcome.status === 'declined') {
    await challenges.settle(tradeNo, { decline: { code: outcome.code, message: outcome.message } });
  } else if (outcome.amount !== challenge.amount) {
    context.logger.error({ trade: tradeNo }, 'PAYUNi reported another amount for a portal card; not recorded');
    return false;
  } else {
    const owner = { organization: challenge.organization, environment: challenge.environment };
    const paymentMethod = await keepCard(context, owner, challenge.customerId, tradeNo, outcome.card);
    await challenges.settle(tradeNo, { paymentMethod });
  }
  return true;
}

/**
 * What came of a portal card's 3-D Secure step, for the portal's page the customer came back
 * to: the kept card, or 402 declined. Not settled by PAYUNi's post yet: its trade query is asked;
 * failed is a decline, anything else not known yet (null: the pending charge is then the
 * reconciler's). 404 for a key no such charge was made under for this customer.
 */
export async function portalCardResult(
  context: ServiceContext,
  merchant: PayuniMerchant,
  request: { customerId: string; idempotencyKey: string },
): Promise<CreatedPaymentMethod | null> {
  const challenges = dependenciesOf(context).portalChallenges;
  const challenge = await challenges.findByKey(request.idempotencyKey);
  if (!challenge || challenge.customerId !== request.customerId) {
    throw notFound('No card was sent to its bank under this key');
  }
  if (challenge.status === 'challenged') {
    const trade = await queryPayuniTrade(merchant, challenge.tradeNo, context.now()).catch(() => null);
    if (trade?.status !== 'failed') return null;
    await challenges.settle(challenge.tradeNo, {
      decline: { code: 'card_declined', message: 'PAYUNi did not take the charge' },
    });
  }
  const settled = (await challenges.findByKey(request.idempotencyKey))!;
  if (settled.paymentMethod) return settled.paymentMethod;
  throw refused(settled.decline?.code ?? 'card_declined', settled.decline?.message || 'The card was declined');
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
  // Without a page to come back to, a card that asks for its bank was refused above.
  if (!('object' in saved)) throw refused('authentication_required', 'The card asks for a challenge step (3-D Secure)');
  return saved;
}
