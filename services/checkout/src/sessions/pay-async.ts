import {
  ApiError,
  type AsyncPaymentProcessor,
  type UnmatchedPaymentReason,
  type PaymentInstructions,
  type PaymentMethodKind,
  conflict,
  notFound,
  randomBase62,
  validationError,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { merchantOf } from '../payments/settings/merchant-of';
import { PROCESSOR_UNAVAILABLE } from '../payments/settings/refusal';
import { type KnownSession, runSessionCommands } from './command';
import type { SessionCommand } from './decide';
import { buyerAtPayment, recordProcessorCharge } from './pay';
import { findSessionRow } from './queries';
import { statusAt } from './resource';
import { type BuyerInput, type CardSummary, type Session, buyerOf } from './session';

/**
 * Payments made on a processor's own pages (docs/payments.md): an ATM account or a
 * convenience-store code the buyer pays later, and ECPay's card page. The session opens one
 * trade at the processor under its charge key; the processor's signed posts then say the code
 * was issued (the session waits for it), the money arrived (the session completes) or the trade
 * failed. ECPay (pay-ecpay.ts) and PAYUNi (pay-payuni-codes.ts) read their own posts into a
 * `TradeNotice`; what a notice does to the session is decided here, once for both.
 */

const PROCESSOR_NAMES: Record<AsyncPaymentProcessor, string> = { ecpay: 'ECPay', payuni: 'PAYUNi' };

/**
 * The session a processor's post names, with the organization's merchant at that processor:
 * 404 for no such session, 400 when its environment does not pay through the processor.
 */
export async function sessionAtProcessor<P extends AsyncPaymentProcessor>(
  context: ServiceContext,
  sessionId: string,
  processor: P,
): Promise<{ session: Session; merchant: NonNullable<Awaited<ReturnType<typeof merchantOf<P>>>>['merchant'] }> {
  const row = await findSessionRow(context.store.database, context.store.tables.schema, sessionId);
  const session = row?.session;
  if (!row || !session) throw notFound(`No such checkout session: ${sessionId}`);
  const found = await merchantOf(context, session.organization, session.environment, processor);
  if (!found) throw ApiError.of('bad_request', `This checkout does not pay through ${PROCESSOR_NAMES[processor]}`);
  return { session, merchant: found.merchant };
}

/** A processor's post about a trade, once its signature and merchant checked out. */
export type TradeNotice =
  | { kind: 'issued'; tradeNo: string; instructions: PaymentInstructions }
  /** `paymentMethod`: what charges the subscription later (an ECPay card plan), when there is one. */
  | { kind: 'paid'; tradeNo: string; amount: number; paymentMethod?: CardSummary }
  | { kind: 'failed'; tradeNo: string; message: string }
  /** The processor does not know the outcome yet: nothing is recorded, the sweep asks later. */
  | { kind: 'pending'; tradeNo: string };

/** The trade a session opened: its charge key names it at the processor. */
export type OpenedTrade = { session: Session; key: string; method: PaymentMethodKind };

export const processorUnavailable = (message: string) =>
  ApiError.of('payment_required', message, [{ path: 'payment', code: PROCESSOR_UNAVAILABLE, message }]);

/**
 * Starts the session's one trade on the processor's pages with the method the buyer chose
 * (one of `methods`: the caller decides what the session may take). One trade per session: a buyer who comes back without a code is asked to
 * start a new checkout rather than given a second trade that could be paid beside the first.
 */
export async function openProcessorTrade(
  context: ServiceContext,
  row: KnownSession & { session: Session },
  input: BuyerInput & { method: string },
  processor: { name: AsyncPaymentProcessor; methods: readonly PaymentMethodKind[] },
): Promise<OpenedTrade> {
  const { now } = context;
  const label = PROCESSOR_NAMES[processor.name];
  const { session } = row;
  const sessionId = session.id;
  if ((session.ui_mode ?? 'hosted') !== 'hosted') throw notFound(`No such checkout session: ${sessionId}`);
  if (session.status === 'COMPLETE') throw conflict('This checkout session is already paid');
  if (statusAt(session, now()) === 'EXPIRED') throw conflict('This checkout session has expired');
  if (session.async_payment || session.pending_charge?.processor === processor.name) {
    throw conflict(`This payment was opened at ${label} already: finish it there, or start a new checkout`);
  }
  const method = input.method as PaymentMethodKind;
  if (!processor.methods.includes(method)) {
    throw validationError([
      { path: 'method', code: 'invalid_value', message: `Choose one of: ${processor.methods.join(', ')}` },
    ]);
  }
  if (!session.customer_email && !input.email) {
    throw validationError([{ path: 'email', code: 'required', message: 'email is required' }]);
  }
  const customerId = await buyerAtPayment(context, session, { email: input.email, name: input.name });
  const buyer = buyerOf(input, customerId);
  const attemptId = `pay_${randomBase62(24)}`;
  const { state } = await runSessionCommands(
    context,
    sessionId,
    row,
    [
      {
        type: 'StartPayment',
        data: { sessionId, attemptId, buyer, processor: processor.name, amount: session.intent.amount, now: now() },
      },
    ],
    { organization: session.organization, environment: session.environment, occurredAt: now() },
  );
  const started = state.status === 'Exists' ? state.session : session;
  return { session: started, key: started.pending_charge!.key, method };
}

/**
 * What a processor's notice does to the session whose trade it names (`tradeNoOf` the charge
 * key's trade number): a code issued makes the session wait for it; the money recorded
 * completes it (once, however often the notice comes); a failure ends the attempt. Money the
 * session cannot take is recorded for a refund by hand. Throws `ApiError` 400 for a notice about
 * another trade or another amount.
 */
export async function acceptTradeNotice(
  context: ServiceContext,
  session: Session,
  processor: AsyncPaymentProcessor,
  tradeNoOf: (key: string) => string,
  notice: TradeNotice,
): Promise<void> {
  const { now, logger } = context;
  const label = PROCESSOR_NAMES[processor];
  const key = session.pending_charge?.key ?? session.charge?.key;
  if (!key || notice.tradeNo !== tradeNoOf(key)) {
    if (notice.kind === 'paid') return recordUnmatched(context, session, processor, notice, 'paid_other_trade');
    throw ApiError.of('bad_request', 'Not the trade of this checkout session');
  }
  const amount = notice.kind === 'paid' ? notice.amount : notice.kind === 'issued' ? notice.instructions.amount : null;
  if (amount !== null && amount !== session.intent.amount) {
    logger.error({ session: session.id, trade: notice.tradeNo }, `${label} reported another amount; not recorded`);
    throw ApiError.of('bad_request', 'The amount is not the checkout amount');
  }
  const run = (command: SessionCommand) =>
    runSessionCommands(context, session.id, null, [command], {
      organization: session.organization,
      environment: session.environment,
      occurredAt: now(),
    });
  const pending = session.pending_charge;
  switch (notice.kind) {
    case 'issued':
      await run({
        type: 'RecordAsyncPayment',
        data: { chargeKey: key, processor, tradeNo: notice.tradeNo, instructions: notice.instructions, now: now() },
      });
      return;
    case 'paid':
      if (session.status !== 'OPEN' && !session.charge) {
        // Expired before the processor's post (a code whose issue never reached us, paid at the last hour).
        return recordUnmatched(context, session, processor, notice, 'paid_after_expiry');
      }
      await recordProcessorCharge(context, session, notice.paymentMethod ?? null);
      return;
    case 'failed':
      if (pending) {
        await run({
          type: 'FailPayment',
          data: {
            attemptId: pending.attempt_id,
            code: 'processor_declined',
            message: notice.message || `${label} did not take the payment`,
            requiresAction: false,
            now: now(),
          },
        });
      }
      return;
    case 'pending':
      return;
  }
}

/**
 * Money a processor took that the session cannot record: kept on the session's stream and
 * listed for the operator (`GET /admin/v1/organizations/{org_id}/unmatched_payments`), to refund by hand.
 */
async function recordUnmatched(
  context: ServiceContext,
  session: Session,
  processor: AsyncPaymentProcessor,
  paid: Extract<TradeNotice, { kind: 'paid' }>,
  reason: UnmatchedPaymentReason,
): Promise<void> {
  const { now, logger } = context;
  logger.error(
    { session: session.id, trade: paid.tradeNo, reason },
    `${PROCESSOR_NAMES[processor]} was paid for a trade the checkout cannot take: refund it`,
  );
  await runSessionCommands(
    context,
    session.id,
    null,
    [
      {
        type: 'RecordUnmatchedPayment',
        data: { processor, tradeNo: paid.tradeNo, amount: paid.amount, reason, now: now() },
      },
    ],
    { organization: session.organization, environment: session.environment, occurredAt: now() },
  );
}
