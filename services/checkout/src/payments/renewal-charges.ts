import type { Environment } from '@billing/contracts';
import type { EventStore } from '@billing/eventstore';
import { type ServiceContext } from '@billing/runtime';
import { chargeTradeOf } from './charge-trade';
import { isEcpayPlan } from './ecpay-plans';
import { queryPeriod } from './ecpay/period';
import { queryTrade } from './ecpay/query';
import { queryPayuniTrade } from './payuni/query';
import { processorMerchantOf } from './settings/merchant-of';
import type { SavedCardChargeRequest } from './processor';
import { recordUnmatchedRenewalPayment } from './unmatched';
import { dependenciesOf } from '../dependencies';

/**
 * Renewal charges made at a merchant's processor (a PAYUNi kept card, a PAYUNi transfer code, an
 * ECPay plan's period), by the key billing charged under, and whether the processor agrees with
 * what billing was answered (docs/payments.md, "Payments that do not match the processor"):
 *
 * - answered `succeeded`: a few minutes later the processor must show the trade paid for the
 *   amount; a trade voided in the processor's site, or a chargeback, is listed
 *   (`not_paid_at_processor`) for the operator to check before delivering more;
 * - answered `declined` because a transfer's deadline passed: the processor must not show it paid;
 *   a transfer it took after the platform gave up on it is money no invoice took
 *   (`paid_after_deadline`), to refund or to credit by hand. PAYUNi's post about such a payment
 *   asks again at once.
 *
 * Each answer is asked about once; a processor that does not answer is asked on the next pass.
 */

/** How long after an answer the processor is asked, and how far back a pass looks. */
const SETTLED_AFTER_MS = 5 * 60_000;
const LOOK_BACK_MS = 7 * 86_400_000;
const BATCH = 50;

type Owner = { organization: string; environment: Environment };
type Answer = 'succeeded' | 'declined';
/** A charge's answer to billing (`InvoiceChargeResult`), as far as it matters here. */
type Answered = { status: string; code?: string };
export type RenewalOutcome = 'matched' | 'unmatched' | 'unverifiable';

type Row = {
  charge_key: string;
  organization: string;
  environment: Environment;
  processor: 'payuni' | 'ecpay';
  payment_method: string;
  trade_no: string;
  amount: number;
  answer: Answer;
};

export async function migrateRenewalCharges(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schema}.processor_renewal_charges (
      charge_key text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      processor text NOT NULL,
      payment_method text NOT NULL,
      trade_no text NOT NULL,
      amount integer NOT NULL,
      answer text,
      answered_at timestamptz,
      outcome text,
      checked_at timestamptz
    );
    CREATE INDEX IF NOT EXISTS processor_renewal_charges_to_check ON ${schema}.processor_renewal_charges (answered_at)
      WHERE answer IS NOT NULL AND outcome IS NULL;
  `);
}

/** A renewal about to be charged at the processor: noted once per key, before it is asked. */
export async function noteRenewalCharge(
  store: EventStore,
  owner: Owner,
  request: SavedCardChargeRequest,
): Promise<void> {
  const { processor, processor_reference: tradeNo } = chargeTradeOf(request.paymentMethodId, request.idempotencyKey);
  if (processor === 'sandbox') return;
  await store.database.query(
    `INSERT INTO ${store.tables.schema}.processor_renewal_charges
       (charge_key, organization, environment, processor, payment_method, trade_no, amount)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (charge_key) DO NOTHING`,
    [
      request.idempotencyKey,
      owner.organization,
      owner.environment,
      processor,
      request.paymentMethodId,
      tradeNo,
      request.amount,
    ],
  );
}

/** The answer billing was given for a noted key, when it is one the processor can contradict. */
export async function noteRenewalAnswer(
  store: EventStore,
  chargeKey: string,
  result: Answered,
  at: Date,
): Promise<void> {
  const answer = checkedAnswerOf(result);
  if (!answer) return;
  await store.database.query(
    `UPDATE ${store.tables.schema}.processor_renewal_charges SET answer = $2, answered_at = $3
      WHERE charge_key = $1 AND outcome IS NULL AND answer IS DISTINCT FROM $2`,
    [chargeKey, answer, at.toISOString()],
  );
}

/** Succeeded, or a transfer given up at its deadline (one the buyer may still make); other declines took nothing. */
export function checkedAnswerOf(result: Answered): Answer | null {
  if (result.status === 'succeeded') return 'succeeded';
  if (result.status === 'declined' && result.code === 'payment_deadline_passed') return 'declined';
  return null;
}

/** One pass: every answer given at least a few minutes ago, in the last seven days, not asked about yet. */
export async function reconcileRenewalCharges(context: ServiceContext): Promise<Record<string, RenewalOutcome>> {
  const { store, logger } = context;
  const at = context.now();
  const { rows } = await store.database.query<Row>(
    `SELECT * FROM ${store.tables.schema}.processor_renewal_charges
      WHERE answer IS NOT NULL AND outcome IS NULL AND answered_at BETWEEN $1 AND $2
      ORDER BY answered_at LIMIT ${BATCH}`,
    [new Date(at.getTime() - LOOK_BACK_MS).toISOString(), new Date(at.getTime() - SETTLED_AFTER_MS).toISOString()],
  );
  const outcomes: Record<string, RenewalOutcome> = {};
  for (const row of rows) {
    try {
      outcomes[row.charge_key] = await checkRenewalCharge(context, row);
    } catch (err) {
      logger.warn(
        { err, charge_key: row.charge_key },
        'asking the processor about a renewal failed; next pass asks again',
      );
    }
  }
  return outcomes;
}

/**
 * The processor (PAYUNi, ECPay) posted that a renewal's transfer was paid: when billing was told
 * it was not (its deadline passed), the processor is asked at once instead of on a pass.
 */
export async function recheckLateTransfer(context: ServiceContext, chargeKey: string): Promise<void> {
  const { store } = context;
  const { rows } = await store.database.query<Row>(
    `UPDATE ${store.tables.schema}.processor_renewal_charges SET outcome = NULL, checked_at = NULL
      WHERE charge_key = $1 AND answer = 'declined' AND outcome IS DISTINCT FROM 'unmatched' RETURNING *`,
    [chargeKey],
  );
  if (rows[0]) await checkRenewalCharge(context, rows[0]);
}

/** After a processor's checked post about a renewal's transfer: a payment it reports is asked about at once. */
export async function recheckIfPaid(
  context: ServiceContext,
  checked: { chargeKey: string; paid: boolean } | null,
): Promise<void> {
  if (!checked?.paid) return;
  await recheckLateTransfer(context, checked.chargeKey).catch((err: unknown) =>
    context.logger.warn({ err }, 'a late transfer could not be checked now; the next pass asks'),
  );
}

async function checkRenewalCharge(context: ServiceContext, row: Row): Promise<RenewalOutcome> {
  const shown = await paidAtProcessor(context, row);
  const outcome: RenewalOutcome =
    shown === 'unverifiable' ? 'unverifiable' : agrees(row, shown) ? 'matched' : 'unmatched';
  if (outcome === 'unmatched') {
    const reason = row.answer === 'succeeded' ? 'not_paid_at_processor' : 'paid_after_deadline';
    context.logger.error(
      { charge_key: row.charge_key, processor: row.processor, trade: row.trade_no, reason },
      "a renewal's payment here and at the processor disagree: check it there",
    );
    await recordUnmatchedRenewalPayment(context.store, row, {
      chargeKey: row.charge_key,
      processor: row.processor,
      tradeNo: row.trade_no,
      // What billing recorded as paid, or what the processor took after the deadline.
      amount: row.answer === 'succeeded' ? row.amount : (shown as Shown).amount,
      reason,
      at: context.now(),
    });
  }
  await context.store.database.query(
    `UPDATE ${context.store.tables.schema}.processor_renewal_charges SET outcome = $2, checked_at = $3 WHERE charge_key = $1`,
    [row.charge_key, outcome, context.now().toISOString()],
  );
  return outcome;
}

type Shown = { paid: boolean; amount: number };

/** Paid for the amount billing was told; not paid at all when billing was told the deadline passed. */
export const agrees = (row: Pick<Row, 'answer' | 'amount'>, shown: Shown) =>
  row.answer === 'succeeded' ? shown.paid && shown.amount === row.amount : !shown.paid;

/**
 * What the processor shows of the renewal: PAYUNi's trade query of the key's trade; ECPay's plan
 * query, for the period matched to the key, or its trade query of the key's trade (a transfer). `unverifiable` when the organization no longer pays
 * through it. Throws when the processor does not answer.
 */
async function paidAtProcessor(context: ServiceContext, row: Row): Promise<Shown | 'unverifiable'> {
  const own = await processorMerchantOf(context, row.organization, row.environment);
  if (own?.processor === 'payuni' && row.processor === 'payuni') {
    const trade = await queryPayuniTrade(own.merchant, row.trade_no, context.now());
    return trade.status === 'paid' ? { paid: true, amount: trade.amount } : { paid: false, amount: 0 };
  }
  if (own?.processor === 'ecpay' && row.processor === 'ecpay' && isEcpayPlan(row.payment_method)) {
    const period = await dependenciesOf(context).ecpayPeriods.find(row.charge_key);
    const info = await queryPeriod(own.merchant, row.trade_no, context.now());
    const execution = info.executions.find((e) => e.tradeNo === period?.executionTradeNo);
    return execution?.succeeded ? { paid: true, amount: execution.amount } : { paid: false, amount: 0 };
  }
  if (own?.processor === 'ecpay' && row.processor === 'ecpay') {
    const trade = await queryTrade(own.merchant, row.trade_no, context.now());
    return trade.status === 'paid' ? { paid: true, amount: trade.amount } : { paid: false, amount: 0 };
  }
  return 'unverifiable';
}
