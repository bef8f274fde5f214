import type { Environment } from '@billing/contracts';
import type { EventStore } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { PayuniMerchant } from './payuni/merchant';
import { queryPayuniTrade } from './payuni/query';
import { RefundUnanswered, cancelPayuniAuthorization, refundPayuniTrade } from './payuni/refund';
import { payuniMerchantOf } from './settings/merchant-of';

/**
 * A card saved without a charge through PAYUNi (a free trial; docs/payments.md, "Free trials
 * through PAYUNi"). PAYUNi keeps a card (its CreditHash) once it has authorised it, so the card is
 * authorised for NT$1 (`VERIFICATION_AMOUNT`, under the session's own trade number, 3-D Secure
 * and all) and that authorisation is then given back: canceled while its capture is only
 * requested (`/api/trade/cancel`), refunded once captured (`/api/trade/close`). Each is noted
 * before anything is given back, and the sweep finishes any that did not end: nothing of the
 * NT$1 is kept.
 */
export const VERIFICATION_AMOUNT = 1;

/**
 * A verification not ended a minute after it was noted is the sweep's, asked again every ten
 * minutes (one at the bank's page may be paid later); one not ended in a day is for a person.
 */
const SWEEP_AFTER_MS = 60_000;
const ASK_AGAIN_MS = 10 * 60_000;
const ABANDONED_AFTER_MS = 24 * 3600_000;

export async function migratePayuniVerifications(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schema}.payuni_verifications (
      trade_no text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      status text NOT NULL,
      noted_at timestamptz NOT NULL,
      -- When the sweep asks PAYUNi about it next.
      next_at timestamptz NOT NULL
    );
  `);
}

type Owner = { organization: string; environment: Environment };
type Verification = Owner & { tradeNo: string };

/**
 * Notes a verification before its NT$1 is asked of PAYUNi, so that the sweep gives it back
 * whatever comes of the ask (an answer lost, a buyer gone at the bank's page). Once only.
 */
export async function noteVerification(context: ServiceContext, verification: Verification): Promise<void> {
  const { store, now } = context;
  await store.database.query(
    `INSERT INTO ${store.tables.schema}.payuni_verifications (trade_no, organization, environment, status, noted_at, next_at)
     VALUES ($1, $2, $3, 'to_give_back', $4, $5) ON CONFLICT (trade_no) DO NOTHING`,
    [
      verification.tradeNo,
      verification.organization,
      verification.environment,
      now().toISOString(),
      new Date(now().getTime() + SWEEP_AFTER_MS).toISOString(),
    ],
  );
}

/**
 * Gives back the NT$1 that verified a card under PAYUNi's MerTradeNo `tradeNo`, canceled or
 * refunded; every verification is noted (`noteVerification`) before its NT$1 is asked. Never
 * throws: a verification not given back now is the sweep's.
 */
export async function giveBackVerification(
  context: ServiceContext,
  merchant: PayuniMerchant,
  verification: Verification,
): Promise<void> {
  await settleVerification(context, merchant, verification.tradeNo).catch((err: unknown) => {
    context.logger.warn({ err, trade: verification.tradeNo }, 'a card verification not given back yet; the sweep does');
  });
}

/** Ends one verification by PAYUNi's word on its trade; true once nothing of it is kept (or there was nothing). */
async function settleVerification(context: ServiceContext, merchant: PayuniMerchant, tradeNo: string) {
  const trade = await queryPayuniTrade(merchant, tradeNo, context.now());
  let ended = true;
  if (trade.status === 'paid' && trade.capture !== 'canceled' && trade.refunded < trade.amount) {
    const target = { payuniTradeNo: trade.payuniTradeNo, amount: trade.amount - trade.refunded };
    const outcome =
      trade.capture === 'requested'
        ? await cancelPayuniAuthorization(merchant, target, context.now())
        : await refundPayuniTrade(merchant, target, context.now());
    ended = outcome.status === 'refunded';
    if (outcome.status === 'refused') {
      context.logger.warn({ trade: tradeNo, code: outcome.code }, 'PAYUNi refused to give a verification back');
    }
  } else if (trade.status === 'unpaid') {
    ended = false; // at the bank's 3-D Secure page yet: asked again later
  }
  if (ended) {
    const { store } = context;
    await store.database.query(
      `UPDATE ${store.tables.schema}.payuni_verifications SET status = 'given_back' WHERE trade_no = $1`,
      [tradeNo],
    );
  }
  return ended;
}

/**
 * The sweep: every verification not given back yet and due (a minute after it was noted, then
 * every ten minutes), asked of PAYUNi again (a lost answer, a cancellation refused because the
 * capture came first: refunded then). Answers how many ended.
 */
export async function settlePayuniVerifications(context: ServiceContext): Promise<number> {
  const { store, now, logger } = context;
  const { rows } = await store.database.query<Verification & { noted_at: Date | string }>(
    `SELECT trade_no AS "tradeNo", organization, environment, noted_at FROM ${store.tables.schema}.payuni_verifications
      WHERE status = 'to_give_back' AND next_at <= $1 ORDER BY next_at LIMIT 50`,
    [now().toISOString()],
  );
  let ended = 0;
  for (const row of rows) {
    await store.database.query(
      `UPDATE ${store.tables.schema}.payuni_verifications SET next_at = $2 WHERE trade_no = $1`,
      [row.tradeNo, new Date(now().getTime() + ASK_AGAIN_MS).toISOString()],
    );
    const payuni = await payuniMerchantOf(context, row.organization, row.environment);
    if (!payuni) continue;
    try {
      if (await settleVerification(context, payuni.merchant, row.tradeNo)) ended++;
      else if (now().getTime() - new Date(row.noted_at).getTime() > ABANDONED_AFTER_MS) {
        // Never paid (left at the bank's page) or refused all day: logged once, for a person.
        logger.warn({ trade: row.tradeNo }, 'a card verification not given back after a day: for a person');
        await store.database.query(
          `UPDATE ${store.tables.schema}.payuni_verifications SET status = 'for_a_person' WHERE trade_no = $1`,
          [row.tradeNo],
        );
      }
    } catch (err) {
      if (!(err instanceof RefundUnanswered))
        logger.warn({ err, trade: row.tradeNo }, 'a card verification not settled');
    }
  }
  return ended;
}
