import type { Environment, PaymentInstructions } from '@billing/contracts';
import type { EventStore } from '@billing/eventstore';

/**
 * The ECPay trades of invoices paid by transfer (renewals of a subscription whose customer pays
 * by ATM or store code through ECPay), by the renewal's charge key, in checkout's own schema.
 * ECPay issues an account or code only on its own page, with the buyer: a row is made when
 * billing asks the key, with the page (`page_token`) where the buyer asks ECPay for it, and
 * fills in as the buyer opens it and ECPay posts the account and the payment.
 */
export async function migrateEcpayInvoiceTrades(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schema}.ecpay_invoice_trades (
      charge_key text PRIMARY KEY,
      trade_no text NOT NULL UNIQUE,
      page_token text NOT NULL UNIQUE,
      organization text NOT NULL,
      environment text NOT NULL,
      method text NOT NULL,
      amount integer NOT NULL,
      deadline timestamptz NOT NULL,
      -- The account or code ECPay posted (PaymentInfoURL) or answered (QueryPaymentInfo).
      instructions jsonb,
      -- When the buyer's browser was given the form to ECPay: before it, ECPay knows no such trade.
      opened_at timestamptz,
      checked_at timestamptz,
      paid_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export type EcpayInvoiceTrade = {
  chargeKey: string;
  /** The MerchantTradeNo of the key (`merchantTradeNo`). */
  tradeNo: string;
  /** The secret part of the page's address. */
  pageToken: string;
  organization: string;
  environment: Environment;
  method: 'atm' | 'cvs';
  /** Integer TWD. */
  amount: number;
  /** Unpaid by then, the attempt fails (unless ECPay's account runs longer: `instructions.expires_at`). */
  deadline: Date;
  instructions: PaymentInstructions | null;
  openedAt: Date | null;
  checkedAt: Date | null;
  paidAt: Date | null;
};

type Row = {
  charge_key: string;
  trade_no: string;
  page_token: string;
  organization: string;
  environment: Environment;
  method: 'atm' | 'cvs';
  amount: number;
  deadline: Date;
  instructions: PaymentInstructions | null;
  opened_at: Date | null;
  checked_at: Date | null;
  paid_at: Date | null;
};

const dateOrNull = (value: Date | null) => (value ? new Date(value) : null);

const tradeOf = (row: Row): EcpayInvoiceTrade => ({
  chargeKey: row.charge_key,
  tradeNo: row.trade_no,
  pageToken: row.page_token,
  organization: row.organization,
  environment: row.environment,
  method: row.method,
  amount: row.amount,
  deadline: new Date(row.deadline),
  instructions: row.instructions,
  openedAt: dateOrNull(row.opened_at),
  checkedAt: dateOrNull(row.checked_at),
  paidAt: dateOrNull(row.paid_at),
});

export class EcpayInvoiceTrades {
  constructor(private readonly store: EventStore) {}

  private get table() {
    return `${this.store.tables.schema}.ecpay_invoice_trades`;
  }

  private async one(where: string, value: string): Promise<EcpayInvoiceTrade | null> {
    const { rows } = await this.store.database.query<Row>(`SELECT * FROM ${this.table} WHERE ${where} = $1`, [value]);
    return rows[0] ? tradeOf(rows[0]) : null;
  }

  /** Records the trade of a charge key; the first record stands, so two asks of one key answer alike. */
  async record(trade: Omit<EcpayInvoiceTrade, 'instructions' | 'openedAt' | 'checkedAt' | 'paidAt'>) {
    await this.store.database.query(
      `INSERT INTO ${this.table}
         (charge_key, trade_no, page_token, organization, environment, method, amount, deadline)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (charge_key) DO NOTHING`,
      [
        trade.chargeKey,
        trade.tradeNo,
        trade.pageToken,
        trade.organization,
        trade.environment,
        trade.method,
        trade.amount,
        trade.deadline.toISOString(),
      ],
    );
    return (await this.find(trade.chargeKey))!;
  }

  find(chargeKey: string) {
    return this.one('charge_key', chargeKey);
  }

  findByPage(pageToken: string) {
    return this.one('page_token', pageToken);
  }

  /**
   * The buyer is sent to ECPay at `at`: noted first, and only before the deadline, so that a
   * trade ECPay may know of is always asked about, and none is opened after its attempt failed.
   * Answers whether it may be opened.
   */
  async open(chargeKey: string, at: Date): Promise<boolean> {
    const { rows } = await this.store.database.query(
      `UPDATE ${this.table} SET opened_at = COALESCE(opened_at, $2)
        WHERE charge_key = $1 AND deadline > $2 RETURNING charge_key`,
      [chargeKey, at.toISOString()],
    );
    return rows.length > 0;
  }

  /** The account or code ECPay issued; the first one stands (ECPay issues one per trade). */
  async issued(tradeNo: string, instructions: PaymentInstructions): Promise<void> {
    await this.store.database.query(
      `UPDATE ${this.table} SET instructions = COALESCE(instructions, $2) WHERE trade_no = $1`,
      [tradeNo, JSON.stringify(instructions)],
    );
  }

  /** ECPay's trade query was asked about it at `at`. */
  async checked(chargeKey: string, at: Date): Promise<void> {
    await this.store.database.query(`UPDATE ${this.table} SET checked_at = $2 WHERE charge_key = $1`, [
      chargeKey,
      at.toISOString(),
    ]);
  }

  /** ECPay's signed post said it was paid. */
  async paid(tradeNo: string, at: Date): Promise<void> {
    await this.store.database.query(`UPDATE ${this.table} SET paid_at = COALESCE(paid_at, $2) WHERE trade_no = $1`, [
      tradeNo,
      at.toISOString(),
    ]);
  }
}
