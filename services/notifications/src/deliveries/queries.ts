import {
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  livemodeOf,
  unknownCursor,
} from '@billing/contracts';
import { type PageCursor, type SqlExecutor, cursorAfter, keysetPage, newestFirst } from '@billing/eventstore';
import { deliveryTables } from './read-model';

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  environment: 'SANDBOX' | 'PRODUCTION';
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | string | null;
  created_at: Date | string;
  attempts: (WebhookAttempt & { attempted_at: string })[];
}

/** `starting_after`: the id of the last delivery of the previous page (newest first). */
type Page = { status?: WebhookDeliveryStatus; limit: number; starting_after?: string };
export type DeliveryFilter =
  | ({ organization: string; endpointId: string } & Page)
  | ({ organization: string; eventId: string } & Page)
  | ({ organization: string; deliveryId: string } & Page);

/** One page of deliveries, newest first, and whether more follow; an unknown cursor is a 400. */
export async function pageOfDeliveries(
  sql: SqlExecutor,
  schema: string,
  filter: DeliveryFilter,
): Promise<{ deliveries: WebhookDelivery[]; hasMore: boolean }> {
  const t = deliveryTables(schema);
  const after = await cursorAfter(
    filter.starting_after,
    async (id) =>
      (
        await sql.query<PageCursor>(`SELECT created_at, id FROM ${t.deliveries} WHERE id = $1 AND organization = $2`, [
          id,
          filter.organization,
        ])
      ).rows[0],
    (id) => unknownCursor(id, 'webhook delivery'),
  );
  const [column, value] =
    'endpointId' in filter
      ? ['endpoint_id', filter.endpointId]
      : 'eventId' in filter
        ? ['event_id', filter.eventId]
        : ['id', filter.deliveryId];
  // One statement, so a delivery and its attempts come from the same snapshot: read in two, an
  // attempt recorded in between showed up next to its delivery's previous status.
  const { rows, hasMore } = await keysetPage<DeliveryRow>(sql, {
    from: `${t.deliveries} d`,
    select: `d.id, d.endpoint_id, d.environment, d.event_id, d.event_type, d.status, d.attempt_count,
            d.next_attempt_at, d.created_at,
            COALESCE((SELECT json_agg(json_build_object(
                        'attempt', a.attempt, 'attempted_at', a.attempted_at, 'status', a.status,
                        'response_status', a.response_status, 'duration_ms', a.duration_ms, 'error', a.error)
                      ORDER BY a.attempt)
                      FROM ${t.attempts} a WHERE a.delivery_id = d.id), '[]'::json) AS attempts`,
    where: { 'd.organization': filter.organization, [`d.${column}`]: value, 'd.status': filter.status },
    order: newestFirst('d'),
    after,
    limit: filter.limit,
  });
  return { deliveries: rows.map(toDelivery), hasMore };
}

/** The organization's delivery `id`, or undefined. */
export async function findDelivery(
  sql: SqlExecutor,
  schema: string,
  organization: string,
  id: string,
): Promise<WebhookDelivery | undefined> {
  const { deliveries } = await pageOfDeliveries(sql, schema, { organization, deliveryId: id, limit: 1 });
  return deliveries[0];
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    object: 'webhook_delivery',
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.status === 'PENDING' && row.next_attempt_at ? iso(row.next_attempt_at) : null,
    created_at: iso(row.created_at),
    attempts: row.attempts.map((a) => ({ ...a, attempted_at: iso(a.attempted_at) })),
    livemode: livemodeOf(row.environment),
  };
}

const iso = (value: Date | string) => new Date(value).toISOString();
