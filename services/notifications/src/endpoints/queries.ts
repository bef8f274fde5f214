import { type Environment, type WebhookEndpoint, livemodeOf } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { Endpoint } from './endpoint';
import { endpointTables } from './read-model';

export type EndpointWithSecret = Endpoint & { secret: string };

export interface EndpointFilter {
  organization: string;
  environment?: Environment;
}

/** A live (not deleted) endpoint of the organization, and of the environment when given. */
export async function findEndpoint(
  sql: SqlExecutor,
  schema: string,
  filter: EndpointFilter,
  id: string,
): Promise<EndpointWithSecret | undefined> {
  const t = endpointTables(schema);
  const { rows } = await sql.query<{ document: Endpoint; secret: string }>(
    `SELECT e.document, s.secret FROM ${t.endpoints} e JOIN ${t.secrets} s ON s.endpoint_id = e.id
     WHERE e.id = $1 AND e.organization = $2 AND ($3::text IS NULL OR e.environment = $3::text) AND NOT e.deleted`,
    [id, filter.organization, filter.environment ?? null],
  );
  const row = rows[0];
  return row ? { ...row.document, secret: row.secret } : undefined;
}

/** Newest first; the spec's list is not paged. */
export async function listEndpoints(sql: SqlExecutor, schema: string, filter: EndpointFilter): Promise<Endpoint[]> {
  const { rows } = await sql.query<{ document: Endpoint }>(
    `SELECT document FROM ${endpointTables(schema).endpoints}
     WHERE organization = $1 AND ($2::text IS NULL OR environment = $2::text) AND NOT deleted
     ORDER BY created_at DESC, id DESC`,
    [filter.organization, filter.environment ?? null],
  );
  return rows.map((r) => r.document);
}

export function toEndpointResource(e: Endpoint, secret?: string): WebhookEndpoint {
  return {
    object: 'webhook',
    id: e.id,
    url: e.url,
    events: e.events,
    is_active: e.is_active,
    ...(secret === undefined ? {} : { secret }),
    created_at: e.created_at,
    livemode: livemodeOf(e.environment),
  };
}
