import type { CreatedPaymentMethod, Environment } from '@billing/contracts';
import type { EventStore } from '@billing/eventstore';

/**
 * The portal's card charges that PAYUNi sent to the customer's bank (3-D Secure), by their
 * MerTradeNo, in checkout's own schema: whose card it is, where the customer comes back to, and
 * what PAYUNi's signed result said (the card kept, or declined). Written when PAYUNi answers with
 * the bank's URL; settled once by its post to NotifyURL or the customer's browser at ReturnURL.
 */
export async function migratePortalChallenges(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schema}.payuni_portal_challenges (
      trade_no text PRIMARY KEY,
      charge_key text NOT NULL UNIQUE,
      customer_id text NOT NULL,
      organization text NOT NULL,
      environment text NOT NULL,
      amount integer NOT NULL,
      return_url text NOT NULL,
      status text NOT NULL DEFAULT 'challenged',
      payment_method jsonb,
      decline_code text,
      decline_message text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export type PortalChallenge = {
  tradeNo: string;
  chargeKey: string;
  customerId: string;
  organization: string;
  environment: Environment;
  /** Integer TWD. */
  amount: number;
  /** The portal's page the customer comes back to (it holds the portal's access token: never logged). */
  returnUrl: string;
  status: 'challenged' | 'paid' | 'declined';
  paymentMethod: CreatedPaymentMethod | null;
  decline: { code: string; message: string } | null;
};

type Row = {
  trade_no: string;
  charge_key: string;
  customer_id: string;
  organization: string;
  environment: Environment;
  amount: number;
  return_url: string;
  status: PortalChallenge['status'];
  payment_method: CreatedPaymentMethod | null;
  decline_code: string | null;
  decline_message: string | null;
};

const challengeOf = (row: Row): PortalChallenge => ({
  tradeNo: row.trade_no,
  chargeKey: row.charge_key,
  customerId: row.customer_id,
  organization: row.organization,
  environment: row.environment,
  amount: row.amount,
  returnUrl: row.return_url,
  status: row.status,
  paymentMethod: row.payment_method,
  decline: row.decline_code ? { code: row.decline_code, message: row.decline_message ?? '' } : null,
});

export class PortalChallenges {
  constructor(private readonly store: EventStore) {}

  private get table() {
    return `${this.store.tables.schema}.payuni_portal_challenges`;
  }

  private async one(where: string, value: string): Promise<PortalChallenge | null> {
    const { rows } = await this.store.database.query<Row>(`SELECT * FROM ${this.table} WHERE ${where} = $1`, [value]);
    return rows[0] ? challengeOf(rows[0]) : null;
  }

  async record(challenge: Omit<PortalChallenge, 'status' | 'paymentMethod' | 'decline'>): Promise<void> {
    await this.store.database.query(
      `INSERT INTO ${this.table} (trade_no, charge_key, customer_id, organization, environment, amount, return_url)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (trade_no) DO NOTHING`,
      [
        challenge.tradeNo,
        challenge.chargeKey,
        challenge.customerId,
        challenge.organization,
        challenge.environment,
        challenge.amount,
        challenge.returnUrl,
      ],
    );
  }

  findByTrade(tradeNo: string) {
    return this.one('trade_no', tradeNo);
  }

  findByKey(chargeKey: string) {
    return this.one('charge_key', chargeKey);
  }

  /** PAYUNi's result: the card kept, or the decline. The first one stands. */
  async settle(
    tradeNo: string,
    outcome: { paymentMethod: CreatedPaymentMethod } | { decline: { code: string; message: string } },
  ): Promise<void> {
    const paid = 'paymentMethod' in outcome;
    await this.store.database.query(
      `UPDATE ${this.table} SET status = $2, payment_method = $3, decline_code = $4, decline_message = $5
        WHERE trade_no = $1 AND status = 'challenged'`,
      [
        tradeNo,
        paid ? 'paid' : 'declined',
        paid ? JSON.stringify(outcome.paymentMethod) : null,
        paid ? null : outcome.decline.code,
        paid ? null : outcome.decline.message,
      ],
    );
  }
}
