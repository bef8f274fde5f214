import { type Environment, type ListWebhookEventsQuery, type WebhookEvent, unknownCursor } from '@billing/contracts';
import { type PageCursor, type SqlExecutor, cursorAfter, keysetPage } from '@billing/eventstore';
import { eventTables } from './read-model';

type Tenant = { organization: string; environment: Environment };

/** One page of the tenant's events, newest first, of a type or about a record when given; an unknown cursor is a 400. */
export async function pageOfEvents(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  query: Omit<ListWebhookEventsQuery, 'environment'>,
): Promise<{ events: WebhookEvent[]; hasMore: boolean }> {
  const { events } = eventTables(schema);
  const after = await cursorAfter(
    query.starting_after,
    async (id) =>
      (
        await sql.query<PageCursor>(
          `SELECT created_at, id FROM ${events} WHERE id = $1 AND organization = $2 AND environment = $3`,
          [id, tenant.organization, tenant.environment],
        )
      ).rows[0],
    (id) => unknownCursor(id, 'event'),
  );
  const { rows, hasMore } = await keysetPage<{ body: string }>(sql, {
    from: events,
    select: 'body',
    where: {
      organization: tenant.organization,
      environment: tenant.environment,
      type: query.type,
      record_id: query.record_id,
    },
    after,
    limit: query.limit,
  });
  return { events: rows.map((row) => JSON.parse(row.body) as WebhookEvent), hasMore };
}

/** The tenant's event `id` as webhooks carry it, or undefined. */
export async function findEvent(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  id: string,
): Promise<WebhookEvent | undefined> {
  const { rows } = await sql.query<{ body: string }>(
    `SELECT body FROM ${eventTables(schema).events} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0] ? (JSON.parse(rows[0].body) as WebhookEvent) : undefined;
}
