import type { SqlExecutor } from '@billing/eventstore';
import type { Adapter, AdapterPayload } from './oidc-types';
import { findApp } from './apps';
import { clientMetadata } from './client-metadata';
import { oauthTables } from './tables';

/**
 * oidc-provider's storage on the gateway's database (PostgreSQL or PGlite): every model the
 * provider keeps (sessions, interactions, grants, codes, access and refresh tokens) is a row of
 * one table, so tokens and grants survive restarts and every gateway replica sees the same ones.
 * Clients are the registered apps (oauth_apps), read-only here.
 */
export function sqlAdapterFactory(sql: SqlExecutor, schema: string, now: () => Date = () => new Date()) {
  return (model: string): Adapter =>
    model === 'Client' ? new AppClientAdapter(sql, schema) : new SqlModelAdapter(model, sql, schema, now);
}

export class SqlModelAdapter implements Adapter {
  private readonly table: string;

  constructor(
    private readonly model: string,
    private readonly sql: SqlExecutor,
    schema: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.table = oauthTables(schema).models;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const expiresAt = expiresIn ? new Date(this.now().getTime() + expiresIn * 1000) : null;
    await this.sql.query(
      `INSERT INTO ${this.table} (model, id, payload, grant_id, client_id, uid, user_code, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
         client_id = EXCLUDED.client_id, uid = EXCLUDED.uid, user_code = EXCLUDED.user_code,
         expires_at = EXCLUDED.expires_at`,
      [
        this.model,
        id,
        JSON.stringify(payload),
        payload.grantId ?? null,
        payload.clientId ?? null,
        payload.uid ?? null,
        payload.userCode ?? null,
        expiresAt,
      ],
    );
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('id = $2', id);
  }

  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('uid = $2', uid);
  }

  findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('user_code = $2', userCode);
  }

  async consume(id: string): Promise<void> {
    await this.sql.query(
      `UPDATE ${this.table} SET consumed_at = $3,
         payload = jsonb_set(payload, '{consumed}', to_jsonb($4::bigint))
       WHERE model = $1 AND id = $2`,
      [this.model, id, this.now(), Math.floor(this.now().getTime() / 1000)],
    );
  }

  async destroy(id: string): Promise<void> {
    await this.sql.query(`DELETE FROM ${this.table} WHERE model = $1 AND id = $2`, [this.model, id]);
  }

  /** Every model of the grant goes, whatever this adapter's model: the provider calls it once per model. */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.sql.query(`DELETE FROM ${this.table} WHERE grant_id = $1 OR (model = 'Grant' AND id = $1)`, [grantId]);
  }

  private async findWhere(condition: string, value: string): Promise<AdapterPayload | undefined> {
    const { rows } = await this.sql.query<{ payload: AdapterPayload }>(
      `SELECT payload FROM ${this.table}
       WHERE model = $1 AND ${condition} AND (expires_at IS NULL OR expires_at > $3)`,
      [this.model, value, this.now()],
    );
    return rows[0]?.payload;
  }
}

/** Clients are the apps merchants registered; a deleted app is no client. */
class AppClientAdapter implements Adapter {
  constructor(
    private readonly sql: SqlExecutor,
    private readonly schema: string,
  ) {}

  async find(id: string): Promise<AdapterPayload | undefined> {
    const app = await findApp(this.sql, this.schema, id);
    return app ? (clientMetadata(app) as AdapterPayload) : undefined;
  }

  async upsert(): Promise<void> {
    throw new Error('Apps are registered through the admin API');
  }

  async findByUid(): Promise<undefined> {
    return undefined;
  }

  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async consume(): Promise<void> {}

  async destroy(): Promise<void> {}

  async revokeByGrantId(): Promise<void> {}
}

/** Removes every row of an app's tokens, codes and grants (the app was deleted). */
export async function destroyClientModels(sql: SqlExecutor, schema: string, clientId: string): Promise<void> {
  const table = oauthTables(schema).models;
  await sql.query(
    `DELETE FROM ${table} WHERE client_id = $1
       OR grant_id IN (SELECT id FROM ${table} WHERE model = 'Grant' AND client_id = $1)`,
    [clientId],
  );
}

/** Expired rows, deleted now and then. */
export async function purgeExpiredModels(sql: SqlExecutor, schema: string, now: Date): Promise<void> {
  await sql.query(`DELETE FROM ${oauthTables(schema).models} WHERE expires_at < $1`, [now]);
}
