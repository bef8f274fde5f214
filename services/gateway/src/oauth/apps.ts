import { createHash, timingSafeEqual } from 'node:crypto';
import { type Environment, randomBase62 } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import { oauthTables } from './tables';

/** An app a merchant connected: it acts for one organization in one environment, as a key does. */
export interface OAuthApp {
  client_id: string;
  organization_id: string;
  environment: Environment;
  name: string;
  redirect_uris: string[];
  secret_hash: string;
  created_at: string;
}

export interface NewApp {
  organization: string;
  environment: Environment;
  name: string;
  redirectUris: string[];
}

export const hashClientSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Whether `presented` is the secret whose hash is `secretHash`, in constant time. */
export function clientSecretMatches(secretHash: string, presented: string): boolean {
  const expected = Buffer.from(secretHash, 'hex');
  const actual = createHash('sha256').update(presented).digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

const APP_COLUMNS = `client_id, organization_id, environment, name, redirect_uris, secret_hash,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

/** Registers an app; its secret is returned once and kept only as a hash. */
export async function registerApp(
  sql: SqlExecutor,
  schema: string,
  app: NewApp,
  now: Date,
): Promise<{ app: OAuthApp; clientSecret: string }> {
  const clientId = `app_${randomBase62()}`;
  const clientSecret = `appsecret_${randomBase62(40)}`;
  const { rows } = await sql.query<OAuthApp>(
    `INSERT INTO ${oauthTables(schema).apps}
       (client_id, organization_id, environment, name, redirect_uris, secret_hash, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${APP_COLUMNS}`,
    [
      clientId,
      app.organization,
      app.environment,
      app.name,
      JSON.stringify(app.redirectUris),
      hashClientSecret(clientSecret),
      now,
    ],
  );
  return { app: rows[0]!, clientSecret };
}

export async function findApp(sql: SqlExecutor, schema: string, clientId: string): Promise<OAuthApp | undefined> {
  const { rows } = await sql.query<OAuthApp>(
    `SELECT ${APP_COLUMNS} FROM ${oauthTables(schema).apps} WHERE client_id = $1 AND deleted_at IS NULL`,
    [clientId],
  );
  return rows[0];
}

/** An organization's apps, latest first (an organization registers a handful). */
export async function listApps(sql: SqlExecutor, schema: string, organization: string): Promise<OAuthApp[]> {
  const { rows } = await sql.query<OAuthApp>(
    `SELECT ${APP_COLUMNS} FROM ${oauthTables(schema).apps}
     WHERE organization_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, client_id DESC LIMIT 100`,
    [organization],
  );
  return rows;
}

/** Marks the app deleted; false when the organization has no such app. */
export async function markAppDeleted(
  sql: SqlExecutor,
  schema: string,
  organization: string,
  clientId: string,
  now: Date,
): Promise<boolean> {
  const { rows } = await sql.query(
    `UPDATE ${oauthTables(schema).apps} SET deleted_at = $3
     WHERE client_id = $1 AND organization_id = $2 AND deleted_at IS NULL RETURNING client_id`,
    [clientId, organization, now],
  );
  return rows.length > 0;
}

/** A grant an owner gave an app: who, which scopes, when. */
export interface AppConnection {
  user_id: string;
  scopes: string[];
  connected_at: string;
}

/** The grants of these apps, by client id, latest first (from the authorization server's records). */
export async function connectionsOf(
  sql: SqlExecutor,
  schema: string,
  clientIds: string[],
): Promise<Map<string, AppConnection[]>> {
  const byApp = new Map<string, AppConnection[]>(clientIds.map((id) => [id, []]));
  if (clientIds.length === 0) return byApp;
  const { rows } = await sql.query<{ client_id: string; payload: GrantPayload }>(
    `SELECT client_id, payload FROM ${oauthTables(schema).models}
     WHERE model = 'Grant' AND client_id = ANY($1::text[]) AND (expires_at IS NULL OR expires_at > now())
     ORDER BY (payload->>'iat')::bigint DESC`,
    [clientIds],
  );
  for (const { client_id, payload } of rows) {
    byApp.get(client_id)?.push({
      user_id: payload.accountId,
      scopes: grantedScopes(payload),
      connected_at: new Date(payload.iat * 1000).toISOString(),
    });
  }
  return byApp;
}

interface GrantPayload {
  accountId: string;
  iat: number;
  openid?: { scope?: string };
  resources?: Record<string, string>;
}

const grantedScopes = (grant: GrantPayload) => [
  ...new Set([grant.openid?.scope ?? '', ...Object.values(grant.resources ?? {})].join(' ').split(' ').filter(Boolean)),
];

/** The app as the admin API shows it (never its secret's hash). */
export const appView = (app: OAuthApp, connections: AppConnection[] = []) => ({
  object: 'oauth_app' as const,
  id: app.client_id,
  client_id: app.client_id,
  name: app.name,
  environment: app.environment,
  redirect_uris: app.redirect_uris,
  created_at: app.created_at,
  connections,
});
