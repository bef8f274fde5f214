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

export async function migratePayuniVerifications(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schema}.payuni_verifications (
      trade_no text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      status text NOT NULL,
      noted_at timestamptz NOT NULL
    );
  `);
}

type Owner = { organization: string; environment: Environment };
type Verification = Owner & { tradeNo: string };

/**
 * Gives back the NT$1 that verified a card under PAYUNi's MerTradeNo `tradeNo`: noted first (the
 * sweep's if this does not end), then canceled or refunded. Never throws: a verification not
 * given back now is the sweep's.
 */
export async function giveBackVerification(
  context: ServiceContext,
  merchant: PayuniMerchant,
  verification: Verification,
): Promise<void> {
  const { store, now } = context;
  await store.database.query(
    `INSERT INTO ${store.tables.schema}.payuni_verifications (trade_no, organization, environment, status, noted_at)
     VALUES ($1, $2, $3, 'to_give_back', $4) ON CONFLICT (trade_no) DO NOTHING`,
    [verification.tradeNo, verification.organization, verification.environment, now().toISOString()],
  );
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

/** A verification not ended a minute after it was noted is the sweep's; one unpaid for a day has nothing to give back. */
const SWEEP_AFTER_MS = 60_000;
const ABANDONED_AFTER_MS = 24 * 3600_000;

/**
 * The sweep: every verification not given back yet, a minute old, asked of PAYUNi again (a lost
 * answer, a cancellation refused because the capture came first: refunded then). Answers how
 * many ended.
 */
export async function settlePayuniVerifications(context: ServiceContext): Promise<number> {
  const { store, now, logger } = context;
  const { rows } = await store.database.query<Verification & { noted_at: Date | string }>(
    `SELECT trade_no AS "tradeNo", organization, environment, noted_at FROM ${store.tables.schema}.payuni_verifications
      WHERE status = 'to_give_back' AND noted_at <= $1 ORDER BY noted_at LIMIT 50`,
    [new Date(now().getTime() - SWEEP_AFTER_MS).toISOString()],
  );
  let ended = 0;
  for (const row of rows) {
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
