import type { SqlExecutor } from '@billing/eventstore';

/** How long a key is remembered (DESIGN: 24 hours). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60_000;
/** A request still "in flight" after this long is taken as crashed: its key may be used again. */
export const ABANDONED_AFTER_MS = 60_000;

/**
 * Keys are per API key (issue 11), so the table replaced `idempotency_keys`, whose primary key
 * was the organization and environment. The old table is left as it is: gateways of the previous
 * version still use it during a rolling upgrade, and it can be dropped once none runs. Keys
 * claimed before the upgrade are not carried over.
 */
export const idempotencyTable = (schema: string) => `${schema}.idempotency_requests`;

export const idempotencyDdl = (schema: string) => `
  CREATE SCHEMA IF NOT EXISTS ${schema};
  CREATE TABLE IF NOT EXISTS ${idempotencyTable(schema)} (
    api_key_id text NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    state text NOT NULL,
    started_at timestamptz NOT NULL,
    response_status integer,
    response_headers jsonb,
    response_body text,
    PRIMARY KEY (api_key_id, key)
  );
`;

/** Keys are the API key's, as Stripe scopes them: two keys of one environment never share one. */
export interface IdempotencyScope {
  apiKeyId: string;
  key: string;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Claim =
  | { outcome: 'proceed' }
  | { outcome: 'replay'; response: StoredResponse }
  | { outcome: 'in_flight' }
  | { outcome: 'mismatch' };

type Row = {
  request_hash: string;
  state: 'in_flight' | 'done';
  started_at: Date | string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
};

/**
 * The gateway's memory of `Idempotency-Key`s in PostgreSQL: a key is claimed with one INSERT
 * (the primary key decides between two concurrent requests), and its response is kept for
 * replay. Every time comes from the caller's clock.
 */
export class IdempotencyStore {
  constructor(
    private readonly sql: SqlExecutor,
    private readonly schema: string,
  ) {}

  async claim(scope: IdempotencyScope, requestHash: string, now: Date): Promise<Claim> {
    const table = idempotencyTable(this.schema);
    const inserted = await this.sql.query(
      `INSERT INTO ${table} (api_key_id, key, request_hash, state, started_at)
       VALUES ($1, $2, $3, 'in_flight', $4) ON CONFLICT DO NOTHING`,
      [scope.apiKeyId, scope.key, requestHash, now],
    );
    if (inserted.rowCount === 1) return { outcome: 'proceed' };
    const { rows } = await this.sql.query<Row>(
      `SELECT request_hash, state, started_at, response_status, response_headers, response_body
       FROM ${table} WHERE api_key_id = $1 AND key = $2`,
      [scope.apiKeyId, scope.key],
    );
    const row = rows[0];
    if (!row) return this.claim(scope, requestHash, now);
    const age = now.getTime() - new Date(row.started_at).getTime();
    if (age >= IDEMPOTENCY_WINDOW_MS) return this.takeOver(scope, row, requestHash, now);
    if (row.request_hash !== requestHash) return { outcome: 'mismatch' };
    if (row.state === 'done') {
      return {
        outcome: 'replay',
        response: { status: row.response_status!, headers: row.response_headers ?? {}, body: row.response_body ?? '' },
      };
    }
    return age >= ABANDONED_AFTER_MS ? this.takeOver(scope, row, requestHash, now) : { outcome: 'in_flight' };
  }

  async complete(scope: IdempotencyScope, response: StoredResponse): Promise<void> {
    await this.sql.query(
      `UPDATE ${idempotencyTable(this.schema)} SET state = 'done', response_status = $3, response_headers = $4,
         response_body = $5 WHERE api_key_id = $1 AND key = $2`,
      [scope.apiKeyId, scope.key, response.status, JSON.stringify(response.headers), response.body],
    );
  }

  /** Forgets a claim whose request failed on the server side, so that a retry runs it again. */
  async release(scope: IdempotencyScope): Promise<void> {
    await this.sql.query(
      `DELETE FROM ${idempotencyTable(this.schema)} WHERE api_key_id = $1 AND key = $2 AND state = 'in_flight'`,
      [scope.apiKeyId, scope.key],
    );
  }

  /** Deletes the keys older than the 24-hour window; returns how many. */
  async purge(now: Date): Promise<number> {
    const { rowCount } = await this.sql.query(`DELETE FROM ${idempotencyTable(this.schema)} WHERE started_at <= $1`, [
      new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS),
    ]);
    return rowCount;
  }

  /** Replaces an expired or abandoned claim, unless another request replaced it first. */
  private async takeOver(scope: IdempotencyScope, row: Row, requestHash: string, now: Date): Promise<Claim> {
    const updated = await this.sql.query(
      `UPDATE ${idempotencyTable(this.schema)} SET request_hash = $3, state = 'in_flight', started_at = $4,
         response_status = NULL, response_headers = NULL, response_body = NULL
       WHERE api_key_id = $1 AND key = $2 AND started_at = $5`,
      [scope.apiKeyId, scope.key, requestHash, now, new Date(row.started_at)],
    );
    return updated.rowCount === 1 ? { outcome: 'proceed' } : { outcome: 'in_flight' };
  }
}
