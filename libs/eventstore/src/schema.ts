import { quoteIdentifier } from './database';

/** Table names of one service's event store, inside that service's own schema. */
export function tablesOf(schema: string) {
  const s = quoteIdentifier(schema);
  return {
    schema: s,
    events: `${s}.events`,
    checkpoints: `${s}.checkpoints`,
    processedMessages: `${s}.processed_messages`,
    snapshots: `${s}.snapshots`,
  };
}

/**
 * `transaction_id` records which transaction appended each event. Readers of the whole log
 * order by (transaction_id, global_position) and only read transactions older than every
 * transaction still running, so an event whose transaction commits late is never skipped.
 */
export function eventStoreDdl(schema: string): string {
  const t = tablesOf(schema);
  return `
    CREATE SCHEMA IF NOT EXISTS ${t.schema};
    CREATE TABLE IF NOT EXISTS ${t.events} (
      global_position bigserial PRIMARY KEY,
      transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
      event_id uuid NOT NULL UNIQUE,
      stream_id text NOT NULL,
      stream_version integer NOT NULL,
      type text NOT NULL,
      schema_version integer NOT NULL,
      data jsonb NOT NULL,
      organization text NOT NULL,
      environment text NOT NULL,
      occurred_at timestamptz NOT NULL,
      UNIQUE (stream_id, stream_version)
    );
    -- Who appended each event ({"actor": ...}, docs/dashboard-api.md); null before it was recorded.
    ALTER TABLE ${t.events} ADD COLUMN IF NOT EXISTS metadata jsonb;
    CREATE INDEX IF NOT EXISTS events_log_order ON ${t.events} (transaction_id, global_position);
    CREATE TABLE IF NOT EXISTS ${t.checkpoints} (
      name text PRIMARY KEY,
      transaction_id xid8 NOT NULL,
      global_position bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    -- Inbox of consumed messages: a consumer records an event id in the transaction of its effect.
    CREATE TABLE IF NOT EXISTS ${t.processedMessages} (
      consumer text NOT NULL,
      event_id text NOT NULL,
      processed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (consumer, event_id)
    );
    -- One folded state per stream for aggregates that opt in (docs/decisions/0010-snapshots.md).
    -- json, not jsonb: the text is kept as written, so object keys keep their order.
    CREATE TABLE IF NOT EXISTS ${t.snapshots} (
      stream_id text PRIMARY KEY,
      stream_version integer NOT NULL,
      snapshot_version integer NOT NULL,
      state json NOT NULL,
      taken_at timestamptz NOT NULL DEFAULT now()
    );
  `;
}
