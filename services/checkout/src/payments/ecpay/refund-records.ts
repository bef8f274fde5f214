import type { EventStore } from '@billing/eventstore';

/**
 * The refunds checkout asked of ECPay, in its own schema. ECPay takes no key for a refund and its
 * refund query needs details the platform does not hold, so each refund is asked at most once:
 * recorded as `asked` before the request, and settled by ECPay's answer. A refund whose answer
 * was lost stays `asked` and is never asked again: a person reads it in ECPay's site.
 */
export async function migrateEcpayRefunds(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schema}.ecpay_refunds (
      idempotency_key text PRIMARY KEY,
      merchant_trade_no text NOT NULL,
      ecpay_trade_no text NOT NULL,
      amount integer NOT NULL,
      status text NOT NULL,
      message text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export type EcpayRefundRecord = {
  idempotencyKey: string;
  status: 'asked' | 'refunded' | 'refused';
  message: string | null;
};

export class EcpayRefunds {
  constructor(private readonly store: EventStore) {}

  private get schema() {
    return this.store.tables.schema;
  }

  /** Records the refund as asked; false when it was recorded already (asked before, whatever came of it). */
  async ask(refund: { idempotencyKey: string; merchantTradeNo: string; ecpayTradeNo: string; amount: number }) {
    const { rows } = await this.store.database.query(
      `INSERT INTO ${this.schema}.ecpay_refunds (idempotency_key, merchant_trade_no, ecpay_trade_no, amount, status)
       VALUES ($1, $2, $3, $4, 'asked') ON CONFLICT (idempotency_key) DO NOTHING RETURNING idempotency_key`,
      [refund.idempotencyKey, refund.merchantTradeNo, refund.ecpayTradeNo, refund.amount],
    );
    return rows.length > 0;
  }

  async find(idempotencyKey: string): Promise<EcpayRefundRecord | null> {
    const { rows } = await this.store.database.query<{ status: EcpayRefundRecord['status']; message: string | null }>(
      `SELECT status, message FROM ${this.schema}.ecpay_refunds WHERE idempotency_key = $1`,
      [idempotencyKey],
    );
    return rows[0] ? { idempotencyKey, ...rows[0] } : null;
  }

  /** ECPay's answer about a refund asked. */
  async settle(idempotencyKey: string, status: 'refunded' | 'refused', message: string | null = null) {
    await this.store.database.query(
      `UPDATE ${this.schema}.ecpay_refunds SET status = $2, message = $3 WHERE idempotency_key = $1`,
      [idempotencyKey, status, message],
    );
  }
}
