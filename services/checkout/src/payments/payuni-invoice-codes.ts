import type { Environment, PaymentInstructions } from '@billing/contracts';
import { positiveNumberSetting, type ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { instructionsOf } from './instructions';
import { CodeIssueUnanswered, issuePayuniCode } from './payuni/codes';
import type { CodeCharge } from './payuni/code-charges';
import type { PayuniMerchant } from './payuni/merchant';
import { RejectedNotification, readNotification } from './payuni/notifications';
import { queryPayuniTrade } from './payuni/query';
import { payuniMerchantOf } from './settings/merchant-of';
import { payuniTradeNo } from './payuni/upp';
import type { ChargeResult, SavedCard, SavedCardChargeRequest } from './processor';

/**
 * Invoices paid by transfer through PAYUNi (docs/payments.md): a subscription first paid with an
 * ATM account or a store code renews the same way. Each renewal's charge key gets its own code,
 * issued server to server (`/api/atm`, `/api/cvs`) with a deadline; the charge answers `pending`
 * with how to pay, and asked again under the key it answers the same until PAYUNi's trade query
 * says paid (`succeeded`) or the deadline passes (`declined`, `payment_deadline_passed`), which
 * dunning counts as a failed attempt.
 */

const PREFIX = 'pm_code_payuni_';

/** Days a renewal's code stays open: `CHECKOUT_INVOICE_CODE_DAYS`, 3 by default (before dunning's first retry). */
const DEFAULT_CODE_DAYS = 3;

/** A charge's answer for invoices: a card's, or a transfer to wait for. */
export type InvoiceChargeResult = ChargeResult | { status: 'pending'; payment_instructions: PaymentInstructions };

export const isPayuniCodeMethod = (paymentMethodId: string) => paymentMethodId.startsWith(PREFIX);

/** The payment method of a customer who pays by transfer through PAYUNi, as billing keeps it (never a card). */
export const payuniCodeMethod = (method: 'atm' | 'cvs'): SavedCard => ({
  id: `${PREFIX}${method}`,
  brand: method,
  last4: '',
  exp_month: 0,
  exp_year: 0,
});

const declined = (code: string, message: string): ChargeResult => ({ status: 'declined', code, message });

/** A renewal charged to a transfer method: the code issued for its key (once), or what came of it. */
export async function chargeByPayuniCode(
  context: ServiceContext,
  owner: { organization: string; environment: Environment },
  request: SavedCardChargeRequest,
  payuni: PayuniMerchant | null,
): Promise<InvoiceChargeResult> {
  const records = dependenciesOf(context).payuniCodes;
  const known = await records.find(request.idempotencyKey);
  if (known) return codeStatus(context, payuni, known, request.now);
  if (!payuni)
    return declined('processor_unavailable', 'The customer pays through PAYUNi, which the organization no longer uses');
  const method = request.paymentMethodId.slice(PREFIX.length);
  if (method !== 'atm' && method !== 'cvs') return declined('payment_method_not_found', 'No such payment method');
  const tradeNo = payuniTradeNo(request.idempotencyKey);
  const base = { chargeKey: request.idempotencyKey, tradeNo, ...owner, instructions: null };
  let issued: Awaited<ReturnType<typeof issuePayuniCode>>;
  try {
    issued = await issuePayuniCode(payuni, {
      idempotencyKey: request.idempotencyKey,
      amount: request.amount,
      method,
      description: 'Subscription renewal',
      notifyUrl: `${dependenciesOf(context).checkoutUrl}/${tradeNo}/payuni/invoice-notify`,
      expireDays: positiveNumberSetting(context.config, 'CHECKOUT_INVOICE_CODE_DAYS', DEFAULT_CODE_DAYS),
      now: request.now,
    });
  } catch (error) {
    if (!(error instanceof CodeIssueUnanswered)) throw error;
    // A code PAYUNi may have made but no one was told of is never paid: the next attempt asks a new one.
    const message = 'PAYUNi did not answer when asked for a code; the next attempt asks again';
    return answerOf(await records.record({ ...base, status: 'not_issued', message }));
  }
  if (issued.kind === 'refused') {
    const message = issued.message || `PAYUNi refused to issue a code (${issued.status})`;
    return answerOf(await records.record({ ...base, status: 'not_issued', message }));
  }
  return answerOf(
    await records.record({ ...base, status: 'issued', instructions: instructionsOf(issued), message: null }),
  );
}

/**
 * The answer of the code recorded for a key: the first record stands, so two asks of one key at
 * once (two billing replicas) answer alike whichever of them PAYUNi answered.
 */
function answerOf(recorded: CodeCharge): InvoiceChargeResult {
  if (recorded.status === 'issued') return { status: 'pending', payment_instructions: recorded.instructions! };
  return declined('code_not_issued', recorded.message ?? 'No code was issued');
}

/**
 * PAYUNi's post about a renewal's code (issued, paid), checked with the organization's keys: a
 * payment is noted, so that billing's next ask of the key answers it without asking PAYUNi.
 * Answers the post's charge key and whether it said paid, or null when the post does not check
 * out (otherwise PAYUNi may stop resending it).
 */
export async function acceptPayuniInvoiceNotification(
  context: ServiceContext,
  tradeNo: string,
  body: Record<string, unknown>,
): Promise<{ chargeKey: string; paid: boolean } | null> {
  const charge = await dependenciesOf(context).payuniCodes.findByTrade(tradeNo);
  if (!charge) return null;
  const payuni = await payuniMerchantOf(context, charge.organization, charge.environment);
  if (!payuni) return null;
  try {
    const notification = readNotification(body, payuni.merchant);
    if (notification.tradeNo !== tradeNo) return null;
    if (notification.kind !== 'paid') return { chargeKey: charge.chargeKey, paid: false };
    await dependenciesOf(context).payuniCodes.paid(tradeNo, context.now());
    return { chargeKey: charge.chargeKey, paid: true };
  } catch (error) {
    if (error instanceof RejectedNotification) return null;
    throw error;
  }
}

/** The status query by key for a renewal's code (the reconciler's); null for a key no code was asked for. */
export async function payuniCodeChargeStatus(
  context: ServiceContext,
  payuni: PayuniMerchant,
  idempotencyKey: string,
): Promise<InvoiceChargeResult | null> {
  const known = await dependenciesOf(context).payuniCodes.find(idempotencyKey);
  return known ? codeStatus(context, payuni, known, context.now()) : null;
}

/**
 * Paid, past its deadline, or still to be paid. Billing asks a waiting invoice's key on every
 * sweep, for days: PAYUNi's trade query is asked at most every `CHECKOUT_INVOICE_CODE_CHECK_MS`
 * (10 minutes by default) before the deadline, and always once it has passed; a payment PAYUNi
 * posted is checked with the query at once. Throws when PAYUNi does not answer.
 */
async function codeStatus(
  context: ServiceContext,
  payuni: PayuniMerchant | null,
  charge: CodeCharge,
  now: Date,
): Promise<InvoiceChargeResult> {
  if (charge.status === 'not_issued') return declined('code_not_issued', charge.message ?? 'No code was issued');
  if (!payuni) throw new Error('The code is at PAYUNi, which the organization no longer uses: asking later');
  const instructions = charge.instructions!;
  const deadline = Date.parse(instructions.expires_at);
  const checkEvery = positiveNumberSetting(context.config, 'CHECKOUT_INVOICE_CODE_CHECK_MS', 10 * 60_000);
  const checkedRecently = charge.checkedAt && now.getTime() - charge.checkedAt.getTime() < checkEvery;
  if (!charge.paidAt && checkedRecently && now.getTime() < deadline) {
    return { status: 'pending', payment_instructions: instructions };
  }
  const trade = await queryPayuniTrade(payuni, charge.tradeNo, now);
  await dependenciesOf(context).payuniCodes.checked(charge.chargeKey, now);
  if (trade.status === 'paid') return { status: 'succeeded', payment_method: payuniCodeMethod(instructions.type) };
  if (trade.status === 'failed' || trade.status === 'expired' || now.getTime() >= deadline) {
    return declined('payment_deadline_passed', 'The transfer was not made before its deadline');
  }
  return { status: 'pending', payment_instructions: instructions };
}
