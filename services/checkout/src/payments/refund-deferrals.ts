import type { EventStore } from '@billing/eventstore';

/**
 * Refunds a processor cannot make yet, by refund key, with when to ask again: a part of a card
 * payment before the processor captured it (PAYUNi, ECPay). The refund stays pending meanwhile,
 * and nothing is asked of the processor until then (ECPay answers callers who ask too often with
 * HTTP 403 for half an hour).
 */
export async function migrateRefundDeferrals(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schema}.processor_refund_deferrals (
      idempotency_key text PRIMARY KEY,
      until timestamptz NOT NULL
    );
  `);
}

/** The refund under `idempotencyKey` is not asked of the processor before `until`. */
export async function deferRefund(store: EventStore, idempotencyKey: string, until: Date): Promise<void> {
  await store.database.query(
    `INSERT INTO ${store.tables.schema}.processor_refund_deferrals (idempotency_key, until) VALUES ($1, $2)
     ON CONFLICT (idempotency_key) DO UPDATE SET until = EXCLUDED.until`,
    [idempotencyKey, until.toISOString()],
  );
}

/** Until when the refund under `idempotencyKey` waits; null when it may be asked now. */
export async function refundDeferredUntil(store: EventStore, idempotencyKey: string, now: Date): Promise<Date | null> {
  const { rows } = await store.database.query<{ until: Date | string }>(
    `SELECT until FROM ${store.tables.schema}.processor_refund_deferrals WHERE idempotency_key = $1`,
    [idempotencyKey],
  );
  const until = rows[0] ? new Date(rows[0].until) : null;
  return until && until > now ? until : null;
}

/** What a refund that waits answers (`RefundResult`'s `deferred`). */
export const deferredRefund = (message: string, until: Date) => ({ status: 'deferred' as const, message, until });
