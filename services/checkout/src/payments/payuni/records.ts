import type { Environment } from '@billing/contracts';
import { randomBase62 } from '@billing/contracts';
import type { EventStore } from '@billing/eventstore';
import { type CredentialsKey, openCredentials, sealCredentials } from '@billing/service';

/**
 * What checkout keeps of its PAYUNi payments, in its own schema: the card tokens PAYUNi gave
 * (CreditToken and CreditHash, the hash sealed like the merchant's keys) under the
 * platform's `pm_payuni_` reference; the SDK token each checkout's card fields were opened
 * with; the refunds asked of PAYUNi, with what its trade showed refunded before each (PAYUNi
 * takes no idempotency key for a refund); and the charge keys given up at the reconciler's
 * request (docs/payments.md).
 */
export async function migratePayuniRecords(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schema}.payuni_cards (
      payment_method_id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      credit_token text NOT NULL,
      sealed_credit_hash text NOT NULL,
      card jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE IF NOT EXISTS ${schema}.payuni_sdk_tokens (
      session_id text PRIMARY KEY,
      sdk_token text NOT NULL,
      expires_at timestamptz
    );
    -- A token is reused by the next page view of the same origin until a charge is asked with it.
    ALTER TABLE ${schema}.payuni_sdk_tokens ADD COLUMN IF NOT EXISTS iframe_domain text;
    ALTER TABLE ${schema}.payuni_sdk_tokens ADD COLUMN IF NOT EXISTS used_at timestamptz;
    CREATE TABLE IF NOT EXISTS ${schema}.payuni_refunds (
      idempotency_key text PRIMARY KEY,
      charge_key text NOT NULL,
      amount integer NOT NULL,
      refunded_before integer NOT NULL,
      status text NOT NULL,
      message text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE IF NOT EXISTS ${schema}.payuni_released_keys (
      idempotency_key text PRIMARY KEY,
      released_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

/** A refund asked of PAYUNi: `asked` until PAYUNi's answer (or its trade) says how it ended. */
export type PayuniRefundRecord = {
  idempotencyKey: string;
  chargeKey: string;
  amount: number;
  /** What PAYUNi's trade showed refunded just before this refund was asked. */
  refundedBefore: number;
  status: 'asked' | 'refunded' | 'refused';
  message: string | null;
};

/** A card PAYUNi keeps for charges without the buyer, as the platform shows it. */
export type PayuniSavedCard = {
  id: string;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
};

export class PayuniRecords {
  constructor(
    private readonly store: EventStore,
    private readonly key: CredentialsKey,
  ) {}

  private get schema() {
    return this.store.tables.schema;
  }

  /** Keeps PAYUNi's token of a card and answers the platform's reference to it (`pm_payuni_...`). */
  async saveCard(
    owner: { organization: string; environment: Environment },
    token: { creditToken: string; creditHash: string },
    card: Omit<PayuniSavedCard, 'id'>,
  ): Promise<PayuniSavedCard> {
    const id = `pm_payuni_${randomBase62(24)}`;
    await this.store.database.query(
      `INSERT INTO ${this.schema}.payuni_cards
         (payment_method_id, organization, environment, credit_token, sealed_credit_hash, card)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        id,
        owner.organization,
        owner.environment,
        token.creditToken,
        sealCredentials({ credit_hash: token.creditHash }, this.key),
        JSON.stringify(card),
      ],
    );
    return { id, ...card };
  }

  /** The organization's card `id` in this environment with its token, or null. */
  async findCard(
    id: string,
    owner: { organization: string; environment: Environment },
  ): Promise<{ card: PayuniSavedCard; creditToken: string; creditHash: string } | null> {
    const { rows } = await this.store.database.query<{
      credit_token: string;
      sealed_credit_hash: string;
      card: Omit<PayuniSavedCard, 'id'>;
    }>(
      `SELECT credit_token, sealed_credit_hash, card FROM ${this.schema}.payuni_cards
        WHERE payment_method_id = $1 AND organization = $2 AND environment = $3`,
      [id, owner.organization, owner.environment],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      card: { id, ...row.card },
      creditToken: row.credit_token,
      creditHash: openCredentials(row.sealed_credit_hash, this.key).credit_hash!,
    };
  }

  /** Remembers the SDK token the checkout's card fields were opened with last, for the page at `iframeDomain`. */
  async putSdkToken(sessionId: string, sdkToken: string, expiresAt: Date | null, iframeDomain: string): Promise<void> {
    await this.store.database.query(
      `INSERT INTO ${this.schema}.payuni_sdk_tokens (session_id, sdk_token, expires_at, iframe_domain) VALUES ($1, $2, $3, $4)
       ON CONFLICT (session_id) DO UPDATE SET sdk_token = EXCLUDED.sdk_token, expires_at = EXCLUDED.expires_at,
         iframe_domain = EXCLUDED.iframe_domain, used_at = NULL`,
      [sessionId, sdkToken, expiresAt, iframeDomain],
    );
  }

  /**
   * The session's token for another view of the page at `iframeDomain`: one no charge was asked
   * with yet, lasting past `until`; null when a new one must be asked of PAYUNi.
   */
  async reusableSdkToken(sessionId: string, iframeDomain: string, until: Date): Promise<string | null> {
    const { rows } = await this.store.database.query<{ sdk_token: string }>(
      `SELECT sdk_token FROM ${this.schema}.payuni_sdk_tokens
        WHERE session_id = $1 AND iframe_domain = $2 AND used_at IS NULL AND expires_at > $3`,
      [sessionId, iframeDomain, until.toISOString()],
    );
    return rows[0]?.sdk_token ?? null;
  }

  /** A charge was asked with the session's token: the next page view asks PAYUNi for a new one. */
  async useSdkToken(sessionId: string, at: Date): Promise<void> {
    await this.store.database.query(`UPDATE ${this.schema}.payuni_sdk_tokens SET used_at = $2 WHERE session_id = $1`, [
      sessionId,
      at.toISOString(),
    ]);
  }

  async sdkToken(sessionId: string): Promise<string | null> {
    const { rows } = await this.store.database.query<{ sdk_token: string }>(
      `SELECT sdk_token FROM ${this.schema}.payuni_sdk_tokens WHERE session_id = $1`,
      [sessionId],
    );
    return rows[0]?.sdk_token ?? null;
  }

  /**
   * The refund asked under `idempotencyKey`: recorded as asked, with PAYUNi's refunded total
   * before it, unless it was recorded already (then the first record is answered).
   */
  async askRefund(refund: Omit<PayuniRefundRecord, 'status' | 'message'>): Promise<PayuniRefundRecord> {
    const { rows } = await this.store.database.query<{
      idempotency_key: string;
      charge_key: string;
      amount: number;
      refunded_before: number;
      status: PayuniRefundRecord['status'];
      message: string | null;
    }>(
      `WITH asked AS (
         INSERT INTO ${this.schema}.payuni_refunds (idempotency_key, charge_key, amount, refunded_before, status)
         VALUES ($1, $2, $3, $4, 'asked') ON CONFLICT (idempotency_key) DO NOTHING RETURNING *
       )
       SELECT * FROM asked UNION ALL
       SELECT * FROM ${this.schema}.payuni_refunds WHERE idempotency_key = $1 AND NOT EXISTS (SELECT 1 FROM asked)`,
      [refund.idempotencyKey, refund.chargeKey, refund.amount, refund.refundedBefore],
    );
    const row = rows[0]!;
    return {
      idempotencyKey: row.idempotency_key,
      chargeKey: row.charge_key,
      amount: row.amount,
      refundedBefore: row.refunded_before,
      status: row.status,
      message: row.message,
    };
  }

  async findRefund(idempotencyKey: string): Promise<PayuniRefundRecord | null> {
    const { rows } = await this.store.database.query<{
      charge_key: string;
      amount: number;
      refunded_before: number;
      status: PayuniRefundRecord['status'];
      message: string | null;
    }>(`SELECT * FROM ${this.schema}.payuni_refunds WHERE idempotency_key = $1`, [idempotencyKey]);
    const row = rows[0];
    if (!row) return null;
    return {
      idempotencyKey,
      chargeKey: row.charge_key,
      amount: row.amount,
      refundedBefore: row.refunded_before,
      status: row.status,
      message: row.message,
    };
  }

  /** PAYUNi's final answer about a refund. */
  async settleRefund(idempotencyKey: string, status: 'refunded' | 'refused', message: string | null = null) {
    await this.store.database.query(
      `UPDATE ${this.schema}.payuni_refunds SET status = $2, message = $3 WHERE idempotency_key = $1`,
      [idempotencyKey, status, message],
    );
  }

  /** Gives up a charge key PAYUNi never saw: a charge asked under it later is refused here, before PAYUNi. */
  async release(idempotencyKey: string): Promise<void> {
    await this.store.database.query(
      `INSERT INTO ${this.schema}.payuni_released_keys (idempotency_key) VALUES ($1) ON CONFLICT DO NOTHING`,
      [idempotencyKey],
    );
  }

  async isReleased(idempotencyKey: string): Promise<boolean> {
    const { rows } = await this.store.database.query(
      `SELECT 1 FROM ${this.schema}.payuni_released_keys WHERE idempotency_key = $1`,
      [idempotencyKey],
    );
    return rows.length > 0;
  }
}
