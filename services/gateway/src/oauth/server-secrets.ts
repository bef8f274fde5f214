import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import type { SqlExecutor } from '@billing/eventstore';
import type { JWK } from './oidc-types';
import { oauthTables } from './tables';

/** What the authorization server signs with: its ID tokens' keys and its cookies' keys. */
export interface ServerSecrets {
  jwks: { keys: JWK[] };
  cookieKeys: string[];
}

/**
 * The server's keys, made by the first gateway that needs them and kept in the database, so that
 * every replica and every restart signs and verifies with the same ones. Two gateways starting
 * together may both make a set: the first insert wins and both read it back.
 */
export async function loadServerSecrets(sql: SqlExecutor, schema: string, now: Date): Promise<ServerSecrets> {
  const jwks = await kept(sql, schema, 'jwks', () => ({ keys: [newSigningKey()] }), now);
  const cookieKeys = await kept(sql, schema, 'cookie_keys', () => [randomBytes(32).toString('base64url')], now);
  return { jwks, cookieKeys };
}

/** An RS256 key: the algorithm every OpenID Connect client verifies ID tokens with. */
function newSigningKey(): JWK {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...(privateKey.export({ format: 'jwk' }) as JWK), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

async function kept<T>(sql: SqlExecutor, schema: string, name: string, make: () => T, now: Date): Promise<T> {
  const table = oauthTables(schema).secrets;
  const found = await sql.query<{ value: T }>(`SELECT value FROM ${table} WHERE name = $1`, [name]);
  if (found.rows[0]) return found.rows[0].value;
  await sql.query(`INSERT INTO ${table} (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`, [
    name,
    JSON.stringify(make()),
    now,
  ]);
  const { rows } = await sql.query<{ value: T }>(`SELECT value FROM ${table} WHERE name = $1`, [name]);
  return rows[0]!.value;
}
