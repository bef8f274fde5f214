import { createHash, randomBytes } from 'node:crypto';
import { randomBase62 } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';

export type Role = 'owner' | 'member';
export const ROLES: readonly Role[] = ['owner', 'member'];

export interface DashboardUser {
  id: string;
  organization_id: string;
  email: string;
  role: Role;
  password_hash: string | null;
  created_at: string;
}

/** Who a session is: the operator (admin token, every organization) or one organization's user. */
export type Principal = { kind: 'operator' } | { kind: 'user'; user: DashboardUser };

export interface Session {
  principal: Principal;
  csrfToken: string;
  expiresAt: Date;
}

export const newUserId = () => `usr_${randomBase62()}`;
export const newSecret = () => randomBytes(32).toString('base64url');
export const digest = (value: string) => createHash('sha256').update(value).digest('hex');

export function dashboardTables(schema: string) {
  return {
    users: `${schema}.dashboard_users`,
    sessions: `${schema}.dashboard_sessions`,
    lockouts: `${schema}.dashboard_lockouts`,
  };
}

export function dashboardDdl(schema: string): string {
  const t = dashboardTables(schema);
  return `
    CREATE TABLE IF NOT EXISTS ${t.users} (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      email text NOT NULL UNIQUE,
      role text NOT NULL,
      password_hash text,
      invite_hash text UNIQUE,
      invite_expires_at timestamptz,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX IF NOT EXISTS dashboard_users_by_organization ON ${t.users} (organization_id, created_at);
    CREATE TABLE IF NOT EXISTS ${t.sessions} (
      token_hash text PRIMARY KEY,
      user_id text,
      operator boolean NOT NULL,
      csrf_token text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    );
    CREATE TABLE IF NOT EXISTS ${t.lockouts} (
      principal text PRIMARY KEY,
      failures integer NOT NULL,
      first_failure_at timestamptz NOT NULL,
      locked_until timestamptz
    );
  `;
}

const USER_COLUMNS = 'id, organization_id, email, role, password_hash, created_at';
const iso = (value: Date | string) => new Date(value).toISOString();
const asUser = (row: DashboardUser & { created_at: Date | string }): DashboardUser => ({
  ...row,
  created_at: iso(row.created_at),
});

/** Users, sessions and lockouts of the dashboard, in the gateway's schema. */
export class DashboardStore {
  private readonly t: ReturnType<typeof dashboardTables>;

  constructor(
    private readonly sql: SqlExecutor,
    schema: string,
  ) {
    this.t = dashboardTables(schema);
  }

  async createUser(user: {
    organizationId: string;
    email: string;
    role: Role;
    passwordHash: string | null;
    inviteHash: string | null;
    inviteExpiresAt: Date | null;
    now: Date;
  }): Promise<DashboardUser | undefined> {
    const { rows } = await this.sql.query<DashboardUser>(
      `INSERT INTO ${this.t.users} (id, organization_id, email, role, password_hash, invite_hash, invite_expires_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (email) DO NOTHING RETURNING ${USER_COLUMNS}`,
      [
        newUserId(),
        user.organizationId,
        user.email,
        user.role,
        user.passwordHash,
        user.inviteHash,
        user.inviteExpiresAt,
        user.now,
      ],
    );
    return rows[0] && asUser(rows[0]);
  }

  async userByEmail(email: string): Promise<DashboardUser | undefined> {
    const { rows } = await this.sql.query<DashboardUser>(
      `SELECT ${USER_COLUMNS} FROM ${this.t.users} WHERE email = $1`,
      [email],
    );
    return rows[0] && asUser(rows[0]);
  }

  async userById(id: string): Promise<DashboardUser | undefined> {
    const { rows } = await this.sql.query<DashboardUser>(`SELECT ${USER_COLUMNS} FROM ${this.t.users} WHERE id = $1`, [
      id,
    ]);
    return rows[0] && asUser(rows[0]);
  }

  async usersOf(organizationId: string): Promise<DashboardUser[]> {
    const { rows } = await this.sql.query<DashboardUser>(
      `SELECT ${USER_COLUMNS} FROM ${this.t.users} WHERE organization_id = $1 ORDER BY created_at, id`,
      [organizationId],
    );
    return rows.map(asUser);
  }

  async userByInvite(inviteHash: string, now: Date): Promise<DashboardUser | undefined> {
    const { rows } = await this.sql.query<DashboardUser>(
      `SELECT ${USER_COLUMNS} FROM ${this.t.users} WHERE invite_hash = $1 AND invite_expires_at > $2`,
      [inviteHash, now],
    );
    return rows[0] && asUser(rows[0]);
  }

  async setPassword(userId: string, passwordHash: string): Promise<void> {
    await this.sql.query(
      `UPDATE ${this.t.users} SET password_hash = $2, invite_hash = NULL, invite_expires_at = NULL WHERE id = $1`,
      [userId, passwordHash],
    );
  }

  /** Removes the user of that organization and ends their sessions; false when there is none. */
  async deleteUser(organizationId: string, userId: string): Promise<boolean> {
    const { rows } = await this.sql.query(
      `DELETE FROM ${this.t.users} WHERE id = $1 AND organization_id = $2 RETURNING id`,
      [userId, organizationId],
    );
    await this.sql.query(`DELETE FROM ${this.t.sessions} WHERE user_id = $1`, [userId]);
    return rows.length > 0;
  }

  async createSession(principal: Principal, now: Date, ttlMs: number): Promise<{ token: string; session: Session }> {
    const token = newSecret();
    const csrfToken = newSecret();
    const expiresAt = new Date(now.getTime() + ttlMs);
    await this.sql.query(
      `INSERT INTO ${this.t.sessions} (token_hash, user_id, operator, csrf_token, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        digest(token),
        principal.kind === 'user' ? principal.user.id : null,
        principal.kind === 'operator',
        csrfToken,
        now,
        expiresAt,
      ],
    );
    return { token, session: { principal, csrfToken, expiresAt } };
  }

  async findSession(token: string, now: Date): Promise<Session | undefined> {
    const { rows } = await this.sql.query<{
      user_id: string | null;
      operator: boolean;
      csrf_token: string;
      expires_at: Date | string;
    }>(
      `SELECT user_id, operator, csrf_token, expires_at FROM ${this.t.sessions} WHERE token_hash = $1 AND expires_at > $2`,
      [digest(token), now],
    );
    const row = rows[0];
    if (!row) return undefined;
    const base = { csrfToken: row.csrf_token, expiresAt: new Date(row.expires_at) };
    if (row.operator) return { principal: { kind: 'operator' }, ...base };
    const user = row.user_id ? await this.userById(row.user_id) : undefined;
    return user && { principal: { kind: 'user', user }, ...base };
  }

  async deleteSession(token: string): Promise<void> {
    await this.sql.query(`DELETE FROM ${this.t.sessions} WHERE token_hash = $1`, [digest(token)]);
  }

  async lockedUntil(principal: string, now: Date): Promise<Date | undefined> {
    const { rows } = await this.sql.query<{ locked_until: Date | string }>(
      `SELECT locked_until FROM ${this.t.lockouts} WHERE principal = $1 AND locked_until > $2`,
      [principal, now],
    );
    return rows[0] && new Date(rows[0].locked_until);
  }

  /**
   * Counts a failed sign-in within `windowMs` of the first; the `limit`th locks the principal
   * for `lockMs`. A failure after the window starts a new count.
   */
  async recordFailure(principal: string, now: Date, rule: { limit: number; windowMs: number; lockMs: number }) {
    const windowStart = new Date(now.getTime() - rule.windowMs);
    await this.sql.query(
      `INSERT INTO ${this.t.lockouts} AS l (principal, failures, first_failure_at, locked_until)
       VALUES ($1, 1, $2, NULL)
       ON CONFLICT (principal) DO UPDATE SET
         failures = CASE WHEN l.first_failure_at < $3 THEN 1 ELSE l.failures + 1 END,
         first_failure_at = CASE WHEN l.first_failure_at < $3 THEN $2 ELSE l.first_failure_at END,
         locked_until = CASE WHEN l.first_failure_at >= $3 AND l.failures + 1 >= $4 THEN $5::timestamptz ELSE l.locked_until END`,
      [principal, now, windowStart, rule.limit, new Date(now.getTime() + rule.lockMs)],
    );
  }

  async clearFailures(principal: string): Promise<void> {
    await this.sql.query(`DELETE FROM ${this.t.lockouts} WHERE principal = $1`, [principal]);
  }
}
