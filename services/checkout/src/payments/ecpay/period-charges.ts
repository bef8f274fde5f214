import type { EventStore } from '@billing/eventstore';

/**
 * Which period of an ECPay card plan paid which renewal, in checkout's own schema. ECPay charges
 * a plan on its own schedule and takes no key from the platform, so each renewal charge key is
 * matched to one authorisation ECPay made (its ExecLog TradeNo), never two keys to one: the
 * unique index is what keeps a period from paying two invoices.
 */
export async function migrateEcpayPeriodCharges(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schema}.ecpay_period_charges (
      charge_key text PRIMARY KEY,
      merchant_trade_no text NOT NULL,
      amount integer NOT NULL,
      status text NOT NULL,
      execution_trade_no text UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    -- When ECPay's plan query was last asked for it (ECPay answers HTTP 403 to callers too quick).
    ALTER TABLE ${schema}.ecpay_period_charges ADD COLUMN IF NOT EXISTS checked_at timestamptz;
    -- When ECPay authorised the period matched (its process_date): a part of it refunded before
    -- ECPay's daily capture waits for it.
    ALTER TABLE ${schema}.ecpay_period_charges ADD COLUMN IF NOT EXISTS authorised_at timestamptz;
  `);
}

/** A renewal charge asked of a plan: `asked` until a period ECPay charged is matched to it, or it is given up. */
export type PeriodCharge = {
  chargeKey: string;
  merchantTradeNo: string;
  amount: number;
  status: 'asked' | 'claimed' | 'released';
  executionTradeNo: string | null;
  /** When ECPay's plan query was last asked for it. */
  checkedAt: Date | null;
  /** When ECPay authorised the period matched to it; null before, or when ECPay did not say. */
  authorisedAt: Date | null;
};

type Row = {
  charge_key: string;
  merchant_trade_no: string;
  amount: number;
  status: PeriodCharge['status'];
  execution_trade_no: string | null;
  checked_at: Date | null;
  authorised_at: Date | null;
};

const chargeOf = (row: Row): PeriodCharge => ({
  chargeKey: row.charge_key,
  merchantTradeNo: row.merchant_trade_no,
  amount: row.amount,
  status: row.status,
  executionTradeNo: row.execution_trade_no,
  checkedAt: row.checked_at ? new Date(row.checked_at) : null,
  authorisedAt: row.authorised_at ? new Date(row.authorised_at) : null,
});

export class EcpayPeriodCharges {
  constructor(private readonly store: EventStore) {}

  private get schema() {
    return this.store.tables.schema;
  }

  /** Records the renewal charge asked under `chargeKey`, unless it was asked already (then the first record is answered). */
  async ask(chargeKey: string, merchantTradeNo: string, amount: number): Promise<PeriodCharge> {
    await this.store.database.query(
      `INSERT INTO ${this.schema}.ecpay_period_charges (charge_key, merchant_trade_no, amount, status)
       VALUES ($1, $2, $3, 'asked') ON CONFLICT (charge_key) DO NOTHING`,
      [chargeKey, merchantTradeNo, amount],
    );
    return (await this.find(chargeKey))!;
  }

  async find(chargeKey: string): Promise<PeriodCharge | null> {
    const { rows } = await this.store.database.query<Row>(
      `SELECT * FROM ${this.schema}.ecpay_period_charges WHERE charge_key = $1`,
      [chargeKey],
    );
    return rows[0] ? chargeOf(rows[0]) : null;
  }

  /** ECPay's plan query was asked for the charge at `at`. */
  async checked(chargeKey: string, at: Date): Promise<void> {
    await this.store.database.query(
      `UPDATE ${this.schema}.ecpay_period_charges SET checked_at = $2 WHERE charge_key = $1`,
      [chargeKey, at.toISOString()],
    );
  }

  /** ECPay posted a period of the plan: its waiting renewals ask ECPay again at once. */
  async periodPosted(merchantTradeNo: string): Promise<void> {
    await this.store.database.query(
      `UPDATE ${this.schema}.ecpay_period_charges SET checked_at = NULL WHERE merchant_trade_no = $1 AND status = 'asked'`,
      [merchantTradeNo],
    );
  }

  /** The authorisations of a plan already matched to a renewal. */
  async claimedExecutions(merchantTradeNo: string): Promise<Set<string>> {
    const { rows } = await this.store.database.query<{ execution_trade_no: string }>(
      `SELECT execution_trade_no FROM ${this.schema}.ecpay_period_charges
        WHERE merchant_trade_no = $1 AND execution_trade_no IS NOT NULL`,
      [merchantTradeNo],
    );
    return new Set(rows.map((row) => row.execution_trade_no));
  }

  /**
   * Matches the asked charge to one authorisation; false when another charge took it first (the
   * unique index refuses a second) or this charge is no longer asked.
   */
  async claim(chargeKey: string, executionTradeNo: string, authorisedAt: Date | null): Promise<boolean> {
    try {
      const { rows } = await this.store.database.query(
        `UPDATE ${this.schema}.ecpay_period_charges SET status = 'claimed', execution_trade_no = $2, authorised_at = $3
          WHERE charge_key = $1 AND status = 'asked' RETURNING charge_key`,
        [chargeKey, executionTradeNo, authorisedAt?.toISOString() ?? null],
      );
      return rows.length > 0;
    } catch (error) {
      if ((error as { code?: string }).code === '23505') return false;
      throw error;
    }
  }

  /** Gives up a charge no period was matched to: a later period goes to the next charge asked. */
  async release(chargeKey: string): Promise<void> {
    await this.store.database.query(
      `UPDATE ${this.schema}.ecpay_period_charges SET status = 'released' WHERE charge_key = $1 AND status = 'asked'`,
      [chargeKey],
    );
  }
}
