import type { Environment } from '@billing/contracts';
import type { EventStore, SqlExecutor } from '@billing/eventstore';

// Charges asked of the processor whose outcome billing has not recorded yet, by the processor
// idempotency key they were asked under (docs/lost-answers.md). A row is written before the
// charge is asked and deleted once its outcome is recorded; a row left behind (a lost answer,
// a crash between the charge and its record) is the reconciler's work.

export const pendingChargesTable = (schema: string) => `${schema}.pending_charges`;

/**
 * What a charge was for, so that the reconciler can record a late outcome where it belongs:
 * `invoice`, attempt `attempt` of invoice `subject` (renewals, dunning, a new card's retry);
 * `first_period`, the first period of the directly created subscription `subject`.
 */
export type ChargePurpose = 'invoice' | 'first_period';

export type PendingCharge = {
  key: string;
  organization: string;
  environment: Environment;
  purpose: ChargePurpose;
  subject: string;
  attempt: number;
  amount: number;
  /** What recording it needs beyond the subject: a first period's customer and plan. */
  detail?: unknown;
};

export async function migratePendingCharges(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${pendingChargesTable(schema)} (
      idempotency_key text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      purpose text NOT NULL,
      subject text NOT NULL,
      attempt integer NOT NULL,
      amount integer NOT NULL,
      detail jsonb,
      asked_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

/** Notes charges about to be asked (one statement for many); a key noted already keeps its first row. */
export async function notePendingCharges(sql: SqlExecutor, schema: string, charges: PendingCharge[]): Promise<void> {
  if (charges.length === 0) return;
  await sql.query(
    `INSERT INTO ${pendingChargesTable(schema)} (idempotency_key, organization, environment, purpose, subject, attempt, amount, detail)
     SELECT key, organization, environment, purpose, subject, attempt, amount, detail
       FROM jsonb_to_recordset($1::jsonb) AS c(key text, organization text, environment text, purpose text,
                                               subject text, attempt integer, amount integer, detail jsonb)
     ON CONFLICT (idempotency_key) DO NOTHING`,
    [JSON.stringify(charges)],
  );
}

/** Whether a charge under `key` was asked and its outcome is not recorded yet. */
export async function isChargePending(sql: SqlExecutor, schema: string, key: string): Promise<boolean> {
  const { rows } = await sql.query(`SELECT 1 FROM ${pendingChargesTable(schema)} WHERE idempotency_key = $1`, [key]);
  return rows.length > 0;
}

/** Forgets charges whose outcome is recorded (or known never to have happened). */
export async function forgetPendingCharges(sql: SqlExecutor, schema: string, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await sql.query(`DELETE FROM ${pendingChargesTable(schema)} WHERE idempotency_key = ANY($1::text[])`, [keys]);
}

/**
 * Charges asked at least `olderThanMs` ago (real time: how long the call may have lasted) and
 * still not recorded, oldest first: no call of their own can still be waiting for them.
 */
export async function stalePendingCharges(
  sql: SqlExecutor,
  schema: string,
  olderThanMs: number,
  limit = 100,
): Promise<PendingCharge[]> {
  const { rows } = await sql.query<PendingCharge>(
    `SELECT idempotency_key AS key, organization, environment, purpose, subject, attempt, amount, detail
       FROM ${pendingChargesTable(schema)}
      WHERE asked_at < now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY asked_at LIMIT $2`,
    [olderThanMs, limit],
  );
  return rows;
}

/** Every charge not recorded yet, for the operator (`GET /admin/v1/.../pending_charges`). */
export async function listPendingCharges(
  sql: SqlExecutor,
  schema: string,
  tenant: { organization: string; environment: Environment },
): Promise<Array<PendingCharge & { asked_at: string }>> {
  const { rows } = await sql.query<PendingCharge & { asked_at: Date }>(
    `SELECT idempotency_key AS key, organization, environment, purpose, subject, attempt, amount, asked_at
       FROM ${pendingChargesTable(schema)} WHERE organization = $1 AND environment = $2 ORDER BY asked_at`,
    [tenant.organization, tenant.environment],
  );
  return rows.map((row) => ({ ...row, asked_at: new Date(row.asked_at).toISOString() }));
}
