import type { DomainEventEnvelope, WebhookEvent } from '@billing/contracts';
import type { EventStore, SqlExecutor } from '@billing/eventstore';

/** A public event as the consumer received it, in its webhook form, serialized once. */
export interface PublicEvent {
  envelope: DomainEventEnvelope;
  event: WebhookEvent;
  /** The event as webhooks send it. */
  body: string;
}

/** Every public event of the last `WEBHOOK_EVENT_RETENTION_DAYS`, for the admin list (docs/dashboard-api.md). */
export const eventTables = (schema: string) => ({ events: `${schema}.webhook_events` });

export async function migrateEventsReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  const { events } = eventTables(schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${events} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      type text NOT NULL,
      -- The id of the event's data.object: the record it is about.
      record_id text NOT NULL,
      created_at timestamptz NOT NULL,
      -- When notifications stored it, by its clock: what the retention counts from.
      received_at timestamptz NOT NULL,
      body text NOT NULL
    );
    -- Each list (all, by type, by record) is a range of one index, newest first.
    CREATE INDEX IF NOT EXISTS webhook_events_newest
      ON ${events} (organization, environment, created_at DESC, id DESC);
    CREATE INDEX IF NOT EXISTS webhook_events_by_type
      ON ${events} (organization, environment, type, created_at DESC, id DESC);
    CREATE INDEX IF NOT EXISTS webhook_events_by_record
      ON ${events} (organization, environment, record_id, created_at DESC, id DESC);
    CREATE INDEX IF NOT EXISTS webhook_events_received ON ${events} (received_at);
  `);
}

/**
 * The statement that stores `events` (an event stored already, by a redelivery or another
 * envelope of the same change, is left as it is), as a
 * data-modifying CTE named `stored_events` for a statement to put in front of its own: its
 * parameters are $1 to $8, the other statement's follow. Null when there is nothing to store.
 */
export function storePublicEventsCte(
  schema: string,
  events: PublicEvent[],
  receivedAt: Date,
): { cte: string; values: unknown[] } | null {
  const distinct = [...new Map(events.map((e) => [e.event.id, e])).values()];
  if (distinct.length === 0) return null;
  const column = <T>(pick: (e: PublicEvent) => T) => distinct.map(pick);
  return {
    cte: `stored_events AS (
       INSERT INTO ${eventTables(schema).events}
         (id, organization, environment, type, record_id, created_at, received_at, body)
       SELECT id, organization, environment, type, record_id, created_at, $7, body
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $8::text[])
         AS e(id, organization, environment, type, record_id, created_at, body)
       ON CONFLICT (id) DO NOTHING)`,
    values: [
      column((e) => e.event.id),
      column((e) => e.envelope.organization),
      column((e) => e.envelope.environment),
      column((e) => e.event.type),
      column((e) => e.event.data.object.id),
      column((e) => e.event.created_at),
      receivedAt.toISOString(),
      column((e) => e.body),
    ],
  };
}

/** Rows deleted by one statement of a prune, so that no statement holds many locks for long. */
const PRUNE_BATCH = 5000;

/** Deletes the events received before `before`, a batch at a time; returns how many. */
export async function prunePublicEvents(sql: SqlExecutor, schema: string, before: Date): Promise<number> {
  const { events } = eventTables(schema);
  let deleted = 0;
  for (;;) {
    const { rowCount } = await sql.query(
      `DELETE FROM ${events} WHERE id IN (
         SELECT id FROM ${events} WHERE received_at < $1 ORDER BY received_at LIMIT $2)`,
      [before.toISOString(), PRUNE_BATCH],
    );
    deleted += rowCount;
    if (rowCount < PRUNE_BATCH) return deleted;
  }
}
