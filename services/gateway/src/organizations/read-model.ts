import type { Environment, KeyKind } from '@billing/contracts';
import { type PageCursor, type RecordedEvent, type SqlExecutor, cursorPage } from '@billing/eventstore';
import { DEFAULT_SETTINGS, type OrganizationSettings, organizationEvents } from './organization';

/** Organizations and their keys as the gateway looks them up on every request. */
export function organizationTables(schema: string) {
  return { organizations: `${schema}.organizations`, apiKeys: `${schema}.api_keys` };
}

export function organizationsDdl(schema: string): string {
  const t = organizationTables(schema);
  return `
    CREATE TABLE IF NOT EXISTS ${t.organizations} (
      id text PRIMARY KEY,
      name text NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE TABLE IF NOT EXISTS ${t.apiKeys} (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES ${t.organizations} (id),
      environment text NOT NULL,
      kind text NOT NULL,
      hash text NOT NULL UNIQUE,
      last4 text NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    );
    CREATE INDEX IF NOT EXISTS api_keys_by_organization ON ${t.apiKeys} (organization_id);
    ALTER TABLE ${t.organizations} ADD COLUMN IF NOT EXISTS settings jsonb NOT NULL DEFAULT '{}'::jsonb;
  `;
}

/** Applies organization events to the tables; every write is idempotent, so replays are safe. */
export async function projectOrganization(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const t = organizationTables(schema);
  for (const recorded of events) {
    const event = organizationEvents.of(recorded);
    if (!event) continue;
    switch (event.type) {
      case 'OrganizationCreated':
        await sql.query(
          `INSERT INTO ${t.organizations} (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
          [event.data.organization_id, event.data.name, event.data.created_at],
        );
        break;
      case 'OrganizationSettingsUpdated': {
        const { organization_id: id, updated_at: _at, name, ...settings } = event.data;
        await sql.query(
          `UPDATE ${t.organizations} SET name = COALESCE($2, name), settings = settings || $3::jsonb WHERE id = $1`,
          [id, name ?? null, JSON.stringify(settings)],
        );
        break;
      }
      case 'ApiKeyIssued':
        await sql.query(
          `INSERT INTO ${t.apiKeys} (id, organization_id, environment, kind, hash, last4, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
          [
            event.data.key_id,
            recorded.organization,
            event.data.environment,
            event.data.kind,
            event.data.hash,
            event.data.last4,
            event.data.issued_at,
          ],
        );
        break;
      case 'ApiKeyRevoked':
        await sql.query(`UPDATE ${t.apiKeys} SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, [
          event.data.key_id,
          event.data.revoked_at,
        ]);
        break;
    }
  }
}

export interface ActiveKey {
  keyId: string;
  organization: string;
  environment: Environment;
  kind: KeyKind;
}

export async function findActiveKey(sql: SqlExecutor, schema: string, hash: string): Promise<ActiveKey | undefined> {
  const { rows } = await sql.query<{ id: string; organization_id: string; environment: Environment; kind: KeyKind }>(
    `SELECT id, organization_id, environment, kind FROM ${organizationTables(schema).apiKeys} WHERE hash = $1 AND revoked_at IS NULL`,
    [hash],
  );
  const row = rows[0];
  return row && { keyId: row.id, organization: row.organization_id, environment: row.environment, kind: row.kind };
}

/** The organization's settings; absent fields take their defaults. */
export async function findSettings(
  sql: SqlExecutor,
  schema: string,
  organizationId: string,
): Promise<OrganizationSettings | undefined> {
  const { rows } = await sql.query<{ settings: Partial<OrganizationSettings> }>(
    `SELECT settings FROM ${organizationTables(schema).organizations} WHERE id = $1`,
    [organizationId],
  );
  return rows[0] && { ...DEFAULT_SETTINGS, ...rows[0].settings };
}

export interface OrganizationView extends OrganizationSettings {
  id: string;
  name: string;
  created_at: string;
  api_keys: Array<{
    id: string;
    environment: Environment;
    type: KeyKind;
    last4: string;
    created_at: string;
    revoked_at: string | null;
  }>;
}

/**
 * One page of every organization, newest first (`created_at` desc, then `id` desc), after the
 * organization `startingAfter` (undefined when it names none: the caller answers 400).
 */
export async function listOrganizations(
  sql: SqlExecutor,
  schema: string,
  page: { limit: number; startingAfter?: string },
): Promise<{ organizations: OrganizationView[]; hasMore: boolean } | undefined> {
  const t = organizationTables(schema);
  let after: PageCursor | undefined;
  if (page.startingAfter !== undefined) {
    const { rows } = await sql.query<PageCursor>(`SELECT created_at, id FROM ${t.organizations} WHERE id = $1`, [
      page.startingAfter,
    ]);
    after = rows[0];
    if (!after) return undefined;
  }
  const { documents: ids, hasMore } = await cursorPage<string>(sql, t.organizations, {
    where: {},
    after: after ?? null,
    limit: page.limit,
    select: 'id',
  });
  const organizations = await Promise.all(ids.map(async (id) => (await findOrganization(sql, schema, id))!));
  return { organizations, hasMore };
}

export async function findOrganization(
  sql: SqlExecutor,
  schema: string,
  id: string,
): Promise<OrganizationView | undefined> {
  const t = organizationTables(schema);
  const { rows } = await sql.query<{
    id: string;
    name: string;
    created_at: Date | string;
    settings: Partial<OrganizationSettings>;
  }>(`SELECT id, name, created_at, settings FROM ${t.organizations} WHERE id = $1`, [id]);
  const org = rows[0];
  if (!org) return undefined;
  const keys = await sql.query<{
    id: string;
    environment: Environment;
    kind: KeyKind;
    last4: string;
    created_at: Date | string;
    revoked_at: Date | string | null;
  }>(
    `SELECT id, environment, kind, last4, created_at, revoked_at FROM ${t.apiKeys} WHERE organization_id = $1 ORDER BY created_at, id`,
    [id],
  );
  const iso = (value: Date | string) => new Date(value).toISOString();
  return {
    id: org.id,
    name: org.name,
    created_at: iso(org.created_at),
    ...DEFAULT_SETTINGS,
    ...org.settings,
    api_keys: keys.rows.map((k) => ({
      id: k.id,
      environment: k.environment,
      type: k.kind,
      last4: k.last4,
      created_at: iso(k.created_at),
      revoked_at: k.revoked_at === null ? null : iso(k.revoked_at),
    })),
  };
}
