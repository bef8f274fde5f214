import { newId } from '@billing/contracts';
import type { EventStore, SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { creditsAggregate } from './aggregate';
import type { LedgerSettings } from './decide';
import { CREDITS_MAX_ATTEMPTS } from './expire';
import type { SpendRecord } from './ledger';
import { creditTables } from './read-model';

export type SpendRequest = { amount: number; idempotencyKey: string; metadata: Record<string, string> | null };

/**
 * Spends once per key (docs/credits.md, Idempotency): a key seen before answers its spend from
 * `credit_spend_keys` (or `idempotency_key_mismatch`), read before deciding, so the ledger's state
 * need not hold every key. A repeat that raced past that read is refused by the table's primary
 * key in its append's transaction, and answers the spend that got in. Throws `insufficient_credits`.
 */
export async function spendCredits(
  store: EventStore,
  tenant: Tenant,
  customerId: string,
  now: Date,
  request: SpendRequest,
  settings: LedgerSettings,
): Promise<SpendRecord> {
  const { idempotencyKey: key } = request;
  const run = async () => {
    const earlier = await spendOfKey(store.database, store.tables.schema, customerId, key);
    const { state } = await creditsAggregate.handle(
      store,
      customerId,
      {
        type: 'SpendCredits',
        data: { customerId, now, spendId: newId('creditSpend'), ...request, earlier, ...settings },
      },
      { ...tenant, occurredAt: now, maxAttempts: CREDITS_MAX_ATTEMPTS },
    );
    return earlier ?? state.spends[key];
  };
  let spend: SpendRecord | null | undefined;
  try {
    spend = await run();
  } catch (error) {
    if (!isSpendKeyTaken(error)) throw error;
    spend = await run(); // decided again with the spend that took the key
  }
  if (!spend) throw new Error('the spend was not recorded');
  return spend;
}

const isSpendKeyTaken = (error: unknown) =>
  typeof error === 'object' &&
  error !== null &&
  (error as { code?: unknown }).code === '23505' &&
  String((error as { constraint?: unknown }).constraint ?? '').startsWith('credit_spend_keys');

type SpendKeyRow = {
  spend_id: string;
  amount: string;
  metadata: Record<string, string> | null;
  balance_after: string;
  spent_at: Date;
};

/** The spend made with `key` for the customer, or null. */
export async function spendOfKey(
  sql: SqlExecutor,
  schema: string,
  customerId: string,
  key: string,
): Promise<SpendRecord | null> {
  const { rows } = await sql.query<SpendKeyRow>(
    `SELECT spend_id, amount, metadata, balance_after, spent_at FROM ${creditTables(schema).spendKeys}
     WHERE customer_id = $1 AND idempotency_key = $2`,
    [customerId, key],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    spend_id: row.spend_id,
    amount: Number(row.amount),
    metadata: row.metadata,
    balance_after: Number(row.balance_after),
    spent_at: new Date(row.spent_at).toISOString(),
  };
}
