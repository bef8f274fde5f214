import type { Environment, PaymentInstructions } from '@billing/contracts';
import type { EventStore } from '@billing/eventstore';

/**
 * The ATM accounts and store codes checkout issued at PAYUNi for invoices (renewals of a
 * subscription paid by transfer), by the renewal's charge key, in checkout's own schema: what
 * the customer was told to pay, by when, and where PAYUNi's posts about it are checked.
 */
export async function migratePayuniCodeCharges(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schema}.payuni_code_charges (
      charge_key text PRIMARY KEY,
      trade_no text NOT NULL UNIQUE,
      organization text NOT NULL,
      environment text NOT NULL,
      status text NOT NULL,
      instructions jsonb,
      message text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    -- When PAYUNi's trade query was last asked about it, and when PAYUNi's post said it was paid.
    ALTER TABLE ${schema}.payuni_code_charges ADD COLUMN IF NOT EXISTS checked_at timestamptz;
    ALTER TABLE ${schema}.payuni_code_charges ADD COLUMN IF NOT EXISTS paid_at timestamptz;
  `);
}

/** A code asked for a charge key: `issued` with its instructions, or `not_issued` (PAYUNi refused, or never answered). */
export type CodeCharge = {
  chargeKey: string;
  tradeNo: string;
  organization: string;
  environment: Environment;
  status: 'issued' | 'not_issued';
  instructions: PaymentInstructions | null;
  message: string | null;
  /** When PAYUNi's trade query was last asked about it. */
  checkedAt?: Date | null;
  /** When PAYUNi's signed post said it was paid. */
  paidAt?: Date | null;
};

type Row = {
  charge_key: string;
  trade_no: string;
  organization: string;
  environment: Environment;
  status: CodeCharge['status'];
  instructions: PaymentInstructions | null;
  message: string | null;
  checked_at: Date | null;
  paid_at: Date | null;
};

const chargeOf = (row: Row): CodeCharge => ({
  chargeKey: row.charge_key,
  tradeNo: row.trade_no,
  organization: row.organization,
  environment: row.environment,
  status: row.status,
  instructions: row.instructions,
  message: row.message,
  checkedAt: row.checked_at ? new Date(row.checked_at) : null,
  paidAt: row.paid_at ? new Date(row.paid_at) : null,
});

export class PayuniCodeCharges {
  constructor(private readonly store: EventStore) {}

  private get schema() {
    return this.store.tables.schema;
  }

  /** Records what came of asking a code for `chargeKey`; the first record stands. */
  async record(charge: CodeCharge): Promise<CodeCharge> {
    await this.store.database.query(
      `INSERT INTO ${this.schema}.payuni_code_charges
         (charge_key, trade_no, organization, environment, status, instructions, message)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (charge_key) DO NOTHING`,
      [
        charge.chargeKey,
        charge.tradeNo,
        charge.organization,
        charge.environment,
        charge.status,
        charge.instructions ? JSON.stringify(charge.instructions) : null,
        charge.message,
      ],
    );
    return (await this.find(charge.chargeKey))!;
  }

  async find(chargeKey: string): Promise<CodeCharge | null> {
    const { rows } = await this.store.database.query<Row>(
      `SELECT * FROM ${this.schema}.payuni_code_charges WHERE charge_key = $1`,
      [chargeKey],
    );
    return rows[0] ? chargeOf(rows[0]) : null;
  }

  /** PAYUNi's trade query was asked about the code at `at`. */
  async checked(chargeKey: string, at: Date): Promise<void> {
    await this.store.database.query(
      `UPDATE ${this.schema}.payuni_code_charges SET checked_at = $2 WHERE charge_key = $1`,
      [chargeKey, at.toISOString()],
    );
  }

  /** PAYUNi's signed post said the code was paid. */
  async paid(tradeNo: string, at: Date): Promise<void> {
    await this.store.database.query(
      `UPDATE ${this.schema}.payuni_code_charges SET paid_at = COALESCE(paid_at, $2) WHERE trade_no = $1`,
      [tradeNo, at.toISOString()],
    );
  }

  async findByTrade(tradeNo: string): Promise<CodeCharge | null> {
    const { rows } = await this.store.database.query<Row>(
      `SELECT * FROM ${this.schema}.payuni_code_charges WHERE trade_no = $1`,
      [tradeNo],
    );
    return rows[0] ? chargeOf(rows[0]) : null;
  }
}
