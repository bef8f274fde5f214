import type { EventStore } from '@billing/eventstore';
import { type ServiceContext, positiveNumberSetting, startPeriodic } from '@billing/runtime';
import { merchantTradeNo } from '../payments/ecpay/aio';
import { queryTrade } from '../payments/ecpay/query';
import { queryPayuniTrade } from '../payments/payuni/query';
import { payuniTradeNo } from '../payments/payuni/upp';
import { processorMerchantOf } from '../payments/settings/merchant-of';
import { reconcileRenewalCharges } from '../payments/renewal-charges';
import { runSessionCommands } from './command';
import { sessionsTable } from './read-model';
import type { ExternalProcessor, Session } from './session';

/**
 * The reverse of "Payments to refund by hand" (docs/payments.md): a checkout the platform
 * completed as paid through ECPay or PAYUNi is asked of the processor once, a few minutes after
 * it completed. The processor not showing it paid, or showing another amount, is recorded on the
 * session (`CheckoutPaymentUnmatched`, reason `not_paid_at_processor`) and listed for the
 * operator. A processor that does not answer is asked again on the next pass.
 */

/** How long after completion a payment is first asked about, and how far back the pass looks. */
const SETTLED_AFTER_MS = 5 * 60_000;
const LOOK_BACK_MS = 7 * 86_400_000;
const DEFAULT_RECONCILE_INTERVAL_MS = 10 * 60_000;
const BATCH = 50;

export async function migrateProcessorReconciliations(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schema}.processor_reconciliations (
      charge_key text PRIMARY KEY,
      session_id text NOT NULL,
      outcome text NOT NULL,
      checked_at timestamptz NOT NULL
    );
    -- The pass looks for sessions completed through a processor of the merchant's own.
    CREATE INDEX IF NOT EXISTS checkout_sessions_completed_at_processor ON ${sessionsTable(schema)}
      ((document->>'completed_at')) WHERE status = 'COMPLETE' AND document->'charge'->>'processor' IS NOT NULL;
  `);
}

type Outcome = 'matched' | 'not_paid' | 'unverifiable';

/** One pass: the sessions completed through ECPay or PAYUNi in the window and not yet asked about. Answers what each came to. */
export async function reconcileProcessorCharges(context: ServiceContext): Promise<Record<string, Outcome>> {
  const { store, now, logger } = context;
  const at = now();
  const outcomes: Record<string, Outcome> = {};
  for (const session of await sessionsToReconcile(store, at)) {
    try {
      const outcome = await reconcile(context, session);
      if (!outcome) continue;
      await store.database.query(
        `INSERT INTO ${store.tables.schema}.processor_reconciliations (charge_key, session_id, outcome, checked_at)
         VALUES ($1, $2, $3, $4) ON CONFLICT (charge_key) DO NOTHING`,
        [session.charge!.key, session.id, outcome, at.toISOString()],
      );
      outcomes[session.id] = outcome;
    } catch (err) {
      logger.warn(
        { err, session: session.id },
        'reconciling a payment with its processor failed; next pass asks again',
      );
    }
  }
  return outcomes;
}

async function sessionsToReconcile(store: EventStore, at: Date): Promise<Session[]> {
  const { schema } = store.tables;
  const { rows } = await store.database.query<{ document: Session }>(
    `SELECT s.document FROM ${sessionsTable(schema)} s
      WHERE s.status = 'COMPLETE' AND s.document->'charge'->>'processor' IS NOT NULL
        AND s.document->>'completed_at' BETWEEN $1 AND $2
        AND NOT EXISTS (SELECT 1 FROM ${schema}.processor_reconciliations r WHERE r.charge_key = s.document->'charge'->>'key')
      ORDER BY s.document->>'completed_at' LIMIT ${BATCH}`,
    [new Date(at.getTime() - LOOK_BACK_MS).toISOString(), new Date(at.getTime() - SETTLED_AFTER_MS).toISOString()],
  );
  return rows.map((row) => row.document);
}

/** What the processor says of the session's charge; null when it gave no answer to trust (asked again). */
async function reconcile(context: ServiceContext, session: Session): Promise<Outcome | null> {
  const processor = session.charge!.processor!;
  // Nothing was taken (a free trial's card verified, its NT$1 given back): nothing to compare.
  if (session.intent.amount === 0) return 'matched';
  const shown = await paidAtProcessor(context, session, processor).catch(() => null);
  if (shown === null) return null;
  if (shown === 'unverifiable') return 'unverifiable';
  if (shown.paid && shown.amount === session.intent.amount) return 'matched';
  context.logger.error(
    { session: session.id, processor, trade: shown.tradeNo },
    'a payment recorded here is not paid at the processor: check it there',
  );
  await runSessionCommands(
    context,
    session.id,
    null,
    [
      {
        type: 'RecordUnmatchedPayment',
        data: {
          processor,
          tradeNo: shown.tradeNo,
          amount: session.intent.amount,
          reason: 'not_paid_at_processor',
          now: context.now(),
        },
      },
    ],
    { organization: session.organization, environment: session.environment, occurredAt: context.now() },
  );
  return 'not_paid';
}

/** The processor's trade of the session's charge: paid and for how much; `unverifiable` when the organization no longer pays through it. */
async function paidAtProcessor(
  context: ServiceContext,
  session: Session,
  processor: ExternalProcessor,
): Promise<{ paid: boolean; amount: number; tradeNo: string } | 'unverifiable'> {
  const key = session.charge!.key;
  const own = await processorMerchantOf(context, session.organization, session.environment);
  if (own?.processor === 'ecpay' && processor === 'ecpay') {
    const tradeNo = merchantTradeNo(key);
    const trade = await queryTrade(own.merchant, tradeNo, context.now());
    return { paid: trade.status === 'paid', amount: trade.status === 'paid' ? trade.amount : 0, tradeNo };
  }
  if (own?.processor === 'payuni' && processor === 'payuni') {
    const tradeNo = payuniTradeNo(key);
    const trade = await queryPayuniTrade(own.merchant, tradeNo, context.now());
    return { paid: trade.status === 'paid', amount: trade.status === 'paid' ? trade.amount : 0, tradeNo };
  }
  return 'unverifiable';
}

/**
 * The background pass: every `CHECKOUT_RECONCILE_INTERVAL_MS` (default 10 minutes), the
 * checkouts, then the renewals charged at a processor (payments/renewal-charges.ts).
 */
export function startProcessorReconciliation(context: ServiceContext): () => Promise<void> {
  const interval = positiveNumberSetting(
    context.config,
    'CHECKOUT_RECONCILE_INTERVAL_MS',
    DEFAULT_RECONCILE_INTERVAL_MS,
  );
  return startPeriodic(async () => {
    await reconcileProcessorCharges(context);
    await reconcileRenewalCharges(context);
  }, interval);
}
