import type { EventStore } from '@billing/eventstore';
import { endpointTables } from '../endpoints/read-model';
import { deliveryTables } from './read-model';

/** A due delivery this scheduler holds a lease on, with what it needs to send it. */
export interface Claimed {
  id: string;
  endpoint_id: string;
  organization: string;
  environment: 'SANDBOX' | 'PRODUCTION';
  event_id: string;
  attempt_count: number;
  body: string;
  url: string;
  secret: string;
  /** No other scheduler takes the delivery before this time (the service's clock). */
  lease_until: Date;
}

/** How many deliveries this scheduler holds (claimed and not yet recorded), by key. */
export interface Held {
  byEndpoint: Map<string, number>;
  byOrganization: Map<string, number>;
  total: number;
}

export interface ClaimLimits {
  /** Deliveries held at most per endpoint, per organization and in all. */
  perEndpoint: number;
  perOrganization: number;
  total: number;
}

/**
 * Claims due deliveries in one statement: up to the limits, counting those held already, the
 * earliest due first within each endpoint and organization. The rows are locked with SKIP
 * LOCKED and the lease re-checked, so two schedulers never claim the same delivery: one that
 * another holds (its lease not expired) or is claiming at this moment is left out.
 */
export async function claimDue(
  store: EventStore,
  held: Held,
  limits: ClaimLimits,
  at: Date,
  leaseUntil: Date,
): Promise<Claimed[]> {
  const limit = limits.total - held.total;
  if (limit <= 0) return [];
  const t = { ...deliveryTables(store.tables.schema), ...endpointTables(store.tables.schema) };
  const endpoints = [...held.byEndpoint.keys()];
  const organizations = [...held.byOrganization.keys()];
  const { rows } = await store.database.query<Claimed>(
    // Cost by the endpoints with pending deliveries, not by the backlog: `pending_endpoints`
    // walks the pending index from one endpoint id to the next (a loose index scan; ordered as
    // that index, so that no other index on endpoint_id is walked through delivered rows), and
    // each endpoint gives only its earliest due rows up to its room, read in index order.
    `WITH RECURSIVE pending_endpoints AS (
       (SELECT endpoint_id FROM ${t.deliveries} WHERE status = 'PENDING'
        ORDER BY endpoint_id, next_attempt_at, id LIMIT 1)
       UNION ALL
       SELECT (SELECT d.endpoint_id FROM ${t.deliveries} d
               WHERE d.status = 'PENDING' AND d.endpoint_id > p.endpoint_id
               ORDER BY d.endpoint_id, d.next_attempt_at, d.id LIMIT 1)
       FROM pending_endpoints p WHERE p.endpoint_id IS NOT NULL
     ),
     held_endpoints AS (SELECT * FROM unnest($2::text[], $3::int[]) AS h(endpoint_id, held)),
     held_organizations AS (SELECT * FROM unnest($4::text[], $5::int[]) AS h(organization, held)),
     by_endpoint AS (
       SELECT due.id, due.organization, due.next_attempt_at
       FROM pending_endpoints p
       JOIN ${t.endpoints} e ON e.id = p.endpoint_id AND e.is_active AND NOT e.deleted
       LEFT JOIN held_endpoints h ON h.endpoint_id = p.endpoint_id
       CROSS JOIN LATERAL (
         SELECT d.id, d.organization, d.next_attempt_at FROM ${t.deliveries} d
         WHERE d.endpoint_id = p.endpoint_id AND d.status = 'PENDING' AND d.next_attempt_at <= $1
           AND (d.lease_until IS NULL OR d.lease_until <= $1)
         ORDER BY d.next_attempt_at, d.id
         LIMIT greatest($6 - coalesce(h.held, 0), 0)
       ) due
     ),
     due AS (
       SELECT ranked.id FROM (
         SELECT b.id, b.organization, b.next_attempt_at,
                row_number() OVER (PARTITION BY b.organization ORDER BY b.next_attempt_at, b.id) AS rank
         FROM by_endpoint b
       ) ranked LEFT JOIN held_organizations h ON h.organization = ranked.organization
       WHERE ranked.rank <= $7 - coalesce(h.held, 0)
       ORDER BY ranked.next_attempt_at, ranked.id LIMIT $8
     ),
     locked AS (
       SELECT d.id FROM ${t.deliveries} d
       WHERE d.id IN (SELECT id FROM due)
         AND d.status = 'PENDING' AND (d.lease_until IS NULL OR d.lease_until <= $1)
       FOR UPDATE SKIP LOCKED
     )
     UPDATE ${t.deliveries} d SET lease_until = $9
     FROM locked, ${t.endpoints} e, ${t.secrets} s
     WHERE d.id = locked.id AND e.id = d.endpoint_id AND s.endpoint_id = d.endpoint_id
     RETURNING d.id, d.endpoint_id, d.organization, d.environment, d.event_id, d.attempt_count, d.body, e.url,
       s.secret, d.next_attempt_at, d.lease_until`,
    [
      at.toISOString(),
      endpoints,
      endpoints.map((id) => held.byEndpoint.get(id)!),
      organizations,
      organizations.map((id) => held.byOrganization.get(id)!),
      limits.perEndpoint,
      limits.perOrganization,
      limit,
      leaseUntil.toISOString(),
    ],
  );
  // The statement returns rows in no set order; the earliest due go out first.
  return (rows as Array<Claimed & { next_attempt_at: Date }>)
    .sort((a, b) => a.next_attempt_at.getTime() - b.next_attempt_at.getTime() || (a.id < b.id ? -1 : 1))
    .map(({ next_attempt_at: _due, ...claimed }) => claimed);
}

/** Of these endpoints, those deleted or deactivated: their queued deliveries are not to be sent. */
export async function stoppedEndpoints(store: EventStore, endpointIds: string[]): Promise<Set<string>> {
  if (endpointIds.length === 0) return new Set();
  const { rows } = await store.database.query<{ id: string }>(
    `SELECT id FROM ${endpointTables(store.tables.schema).endpoints}
     WHERE id = ANY($1) AND (deleted OR NOT is_active)`,
    [endpointIds],
  );
  return new Set(rows.map((row) => row.id));
}

/**
 * Gives back leases this scheduler holds and will not use (it stops), so that another takes
 * the deliveries now rather than after the lease. A lease that still has this value and has not
 * expired is this scheduler's: nobody else can have claimed the row meanwhile.
 */
export async function releaseLeases(store: EventStore, deliveries: Claimed[], at: Date): Promise<void> {
  if (deliveries.length === 0) return;
  const t = deliveryTables(store.tables.schema);
  await store.database.query(
    `UPDATE ${t.deliveries} d SET lease_until = NULL
     FROM unnest($1::text[], $2::timestamptz[]) AS r(id, lease_until)
     WHERE d.id = r.id AND d.lease_until = r.lease_until AND d.lease_until > $3`,
    [deliveries.map((d) => d.id), deliveries.map((d) => d.lease_until.toISOString()), at.toISOString()],
  );
}
