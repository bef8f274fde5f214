import type { EventStore } from '@billing/eventstore';
import type { ChargeResult } from './processor';
import type { ChargeLedger, RefundLedger, SandboxRefund } from './sandbox';

export const sandboxChargesTable = (schema: string) => `${schema}.sandbox_charges`;
export const sandboxRefundsTable = (schema: string) => `${schema}.sandbox_refunds`;
/** The card entered last in each embedded checkout's card form (the provider's side; no number, no CVC). */
export const sandboxCardFormsTable = (schema: string) => `${schema}.sandbox_card_forms`;

/** The simulator's answers by idempotency key, in checkout's own schema. */
export async function migrateSandboxChargeLedger(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${sandboxChargesTable(schema)} (
      idempotency_key text PRIMARY KEY,
      result jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE IF NOT EXISTS ${sandboxCardFormsTable(schema)} (
      form_token text PRIMARY KEY,
      card jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE IF NOT EXISTS ${sandboxRefundsTable(schema)} (
      idempotency_key text PRIMARY KEY,
      charge_key text NOT NULL,
      amount integer NOT NULL,
      refund_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

/**
 * The sandbox's ledger in the database: it outlives a restart, and of two processes charging
 * one key at once the first insert wins and both answer with it.
 */
export function sandboxChargeLedger(store: EventStore): ChargeLedger {
  const table = sandboxChargesTable(store.tables.schema);
  const find = async (key: string) => {
    const { rows } = await store.database.query<{ result: ChargeResult }>(
      `SELECT result FROM ${table} WHERE idempotency_key = $1`,
      [key],
    );
    return rows[0]?.result ?? null;
  };
  const findMany = async (keys: string[]) => {
    const { rows } = await store.database.query<{ idempotency_key: string; result: ChargeResult }>(
      `SELECT idempotency_key, result FROM ${table} WHERE idempotency_key = ANY($1::text[])`,
      [keys],
    );
    return new Map(rows.map((row) => [row.idempotency_key, row.result]));
  };
  return {
    find,
    remember: async (key, result) => {
      const { rows } = await store.database.query(
        `INSERT INTO ${table} (idempotency_key, result) VALUES ($1, $2) ON CONFLICT (idempotency_key) DO NOTHING
         RETURNING 1`,
        [key, JSON.stringify(result)],
      );
      // Inserted: this is the key's answer. Otherwise the one kept first is.
      return rows.length > 0 ? result : ((await find(key)) ?? result);
    },
    findMany,
    rememberMany: async (entries) => {
      await store.database.query(
        `INSERT INTO ${table} (idempotency_key, result)
         SELECT key, result FROM jsonb_to_recordset($1::jsonb) AS e(key text, result jsonb)
         ON CONFLICT (idempotency_key) DO NOTHING`,
        [JSON.stringify(entries.map(([key, result]) => ({ key, result })))],
      );
      const kept = await findMany(entries.map(([key]) => key));
      return new Map(entries.map(([key, result]) => [key, kept.get(key) ?? result]));
    },
  };
}

/** The sandbox's refunds in the database: one per idempotency key, the first insert wins. */
export function sandboxRefundLedger(store: EventStore): RefundLedger {
  const table = sandboxRefundsTable(store.tables.schema);
  return {
    remember: async (refund) => {
      await store.database.query(
        `INSERT INTO ${table} (idempotency_key, charge_key, amount, refund_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (idempotency_key) DO NOTHING`,
        [refund.idempotency_key, refund.charge_key, refund.amount, refund.refund_id],
      );
      const { rows } = await store.database.query<SandboxRefund>(
        `SELECT idempotency_key, charge_key, amount, refund_id FROM ${table} WHERE idempotency_key = $1`,
        [refund.idempotency_key],
      );
      return rows[0] ?? refund;
    },
  };
}
