import type { CallerIdentity, Environment } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import { sessionsTable } from './read-model';
import type { Session } from './session';
import type { KnownSession } from './command';

export async function findSession(sql: SqlExecutor, schema: string, id: string): Promise<Session | null> {
  const { rows } = await sql.query<{ document: Session }>(
    `SELECT document FROM ${sessionsTable(schema)} WHERE id = $1`,
    [id],
  );
  return rows[0]?.document ?? null;
}

/** The session with the stream version its row is at: what a command on it can start from. */
export async function findSessionRow(
  sql: SqlExecutor,
  schema: string,
  id: string,
): Promise<(KnownSession & { session: Session }) | null> {
  const { rows } = await sql.query<{ document: Session; stream_version: number }>(
    `SELECT document, stream_version FROM ${sessionsTable(schema)} WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  return row ? { session: row.document, version: row.stream_version } : null;
}

/** Another organization's or environment's session is absent to the caller. */
export async function findCallerSession(
  sql: SqlExecutor,
  schema: string,
  caller: CallerIdentity,
  id: string,
): Promise<Session | null> {
  const session = await findSession(sql, schema, id);
  return session && session.organization === caller.organization && session.environment === caller.environment
    ? session
    : null;
}

/** The session that sold the order, if it is the caller's organization's and environment's. */
export async function findCallerSessionByOrder(
  sql: SqlExecutor,
  schema: string,
  caller: Pick<CallerIdentity, 'organization' | 'environment'>,
  orderId: string,
): Promise<Session | null> {
  const { rows } = await sql.query<{ document: Session }>(
    `SELECT document FROM ${sessionsTable(schema)}
     WHERE document->'order'->>'id' = $1 AND organization = $2 AND environment = $3`,
    [orderId, caller.organization, caller.environment],
  );
  return rows[0]?.document ?? null;
}

/** OPEN sessions whose expiry has passed on `now`, oldest first. */
export async function findDueSessions(sql: SqlExecutor, schema: string, now: Date, limit = 100) {
  const { rows } = await sql.query<{ id: string; organization: string; environment: Environment }>(
    `SELECT id, organization, environment FROM ${sessionsTable(schema)} WHERE status = 'OPEN' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
    [now.toISOString(), limit],
  );
  return rows;
}

/** OPEN sessions with a recorded charge: their completion failed, and the sweep completes them. */
export async function findChargedOpenSessions(sql: SqlExecutor, schema: string, limit = 100): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM ${sessionsTable(schema)} WHERE status = 'OPEN' AND jsonb_typeof(document->'charge') = 'object' LIMIT $1`,
    [limit],
  );
  return rows.map((row) => row.id);
}
