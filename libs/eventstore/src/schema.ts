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
 * Tables made before the log order became the key had `global_position` as key and a separate
 * `events_log_order` index: one index more for every append to keep (docs/decisions/0016).
 * Re-checked under the table's lock, so services that start together convert it once.
 */
function logOrderKeyMigration(events: string, schema: string): string {
  const oldKey = `EXISTS (SELECT 1 FROM pg_constraint
    WHERE conrelid = '${events}'::regclass AND contype = 'p' AND conname = 'events_pkey')`;
  return `DO $$ BEGIN
      IF ${oldKey} THEN
        LOCK TABLE ${events} IN ACCESS EXCLUSIVE MODE;
        IF ${oldKey} THEN
          ALTER TABLE ${events} DROP CONSTRAINT events_pkey;
          DROP INDEX IF EXISTS ${schema}.events_log_order;
          ALTER TABLE ${events} ADD CONSTRAINT events_log_order PRIMARY KEY (transaction_id, global_position);
        END IF;
      END IF;
    END $$;`;
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
      global_position bigserial NOT NULL,
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
      UNIQUE (stream_id, stream_version),
      -- The log's read order is the key: one index, not a key on global_position beside it.
      CONSTRAINT events_log_order PRIMARY KEY (transaction_id, global_position)
    );
    -- Who appended each event ({"actor": ...}, docs/dashboard-api.md); null before it was recorded.
    ALTER TABLE ${t.events} ADD COLUMN IF NOT EXISTS metadata jsonb;
    ${logOrderKeyMigration(t.events, t.schema)}
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
