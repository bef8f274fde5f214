import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import { recordMetricsChanges } from '@billing/runtime';
import { sessionMetricsChange } from './metrics';
import { refundEvents } from '../refunds/refund';
import { type Session, type SessionEvent, evolve, sessionEvents, sessionStream } from './session';

export const sessionsTable = (schema: string) => `${schema}.checkout_sessions`;

/** One row per session, written in the append's transaction: reads and the expiry sweep use it. */
export async function migrateSessionsReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  const table = sessionsTable(schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${table} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      status text NOT NULL,
      expires_at timestamptz NOT NULL,
      stream_version integer NOT NULL,
      document jsonb NOT NULL
    );
    -- The sweep looks for OPEN sessions past their expiry.
    CREATE INDEX IF NOT EXISTS checkout_sessions_open_by_expiry ON ${table} (expires_at) WHERE status = 'OPEN';
    -- The sweep completes OPEN sessions that were charged (docs/decisions/0006-one-charge-per-session.md).
    CREATE INDEX IF NOT EXISTS checkout_sessions_open_charged ON ${table} (id)
      WHERE status = 'OPEN' AND jsonb_typeof(document->'charge') = 'object';
    -- The reconciliation with the processor reads the processor's charges completed in a window
    -- (sessions/reconcile.ts): a range of this index, not every completed session.
    CREATE INDEX IF NOT EXISTS checkout_sessions_to_reconcile ON ${table} ((document->>'completed_at'))
      WHERE status = 'COMPLETE' AND document->'charge'->>'processor' IS NOT NULL;
    -- One-time purchases, newest paid first (orders/admin-routes.ts, orders/routes.ts): one customer's range, and the organization's.
    CREATE INDEX IF NOT EXISTS checkout_sessions_paid_by_customer ON ${table}
      (organization, environment, (document->>'customer_id'), (document->>'completed_at'), id)
      WHERE status = 'COMPLETE' AND document->>'mode' = 'PAYMENT';
    CREATE INDEX IF NOT EXISTS checkout_sessions_paid_one_time ON ${table}
      (organization, environment, (document->>'completed_at'), id)
      WHERE status = 'COMPLETE' AND document->>'mode' = 'PAYMENT';
    -- Every paid checkout's order, latest paid first (orders/routes.ts): the organization's, and a customer's.
    CREATE INDEX IF NOT EXISTS checkout_sessions_paid ON ${table}
      (organization, environment, (document->>'completed_at'), id) WHERE status = 'COMPLETE';
    CREATE INDEX IF NOT EXISTS checkout_sessions_paid_of_customer ON ${table}
      (organization, environment, (document->>'customer_id'), (document->>'completed_at'), id)
      WHERE status = 'COMPLETE';
    -- Orders waiting for an ATM or convenience-store payment, latest issued first (orders/admin-routes.ts, orders/routes.ts).
    CREATE INDEX IF NOT EXISTS checkout_sessions_awaiting_transfer ON ${table}
      (organization, environment, (document->'async_payment'->>'issued_at'), id)
      WHERE status = 'OPEN' AND jsonb_typeof(document->'async_payment') = 'object';
    -- Refunds name an order: its session is found by the order id.
    CREATE INDEX IF NOT EXISTS checkout_sessions_by_order ON ${table} ((document->'order'->>'id'));
  `);
}

export const sessionsProjection = {
  handles: sessionEvents.types,
  evolve(view: Session | null, event: SessionEvent): Session | null {
    const state = evolve(view ? { status: 'Exists', session: view } : { status: 'Empty' }, event);
    return state.status === 'Exists' ? state.session : null;
  },
};

/** Idempotent: an event at or below the row's stream version was applied already. */
export async function projectSessions(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const table = sessionsTable(schema);
  for (const event of events) {
    const sessionEvent = sessionEvents.of(event);
    if (!sessionEvent) continue;
    // Refund events name the payment, not the session: the stream does.
    const id = refundEvents.has(sessionEvent)
      ? event.stream.slice(sessionStream('').length)
      : sessionEvent.data.session_id;
    const { rows } = await sql.query<{ document: Session; stream_version: number }>(
      `SELECT document, stream_version FROM ${table} WHERE id = $1`,
      [id],
    );
    const current = rows[0];
    if (current && current.stream_version >= event.stream_version) continue;
    const view = sessionsProjection.evolve(current?.document ?? null, sessionEvent);
    if (!view) continue;
    await writeSessionRow(sql, schema, view, event.stream_version);
    await recordMetricsChanges(sql, schema, view, sessionMetricsChange(current?.document ?? null, view, [event]));
  }
}

/** The session's row at `streamVersion`; a row already at or past it is left as it is. */
export async function writeSessionRow(sql: SqlExecutor, schema: string, view: Session, streamVersion: number) {
  const table = sessionsTable(schema);
  await sql.write(
    `INSERT INTO ${table} (id, organization, environment, status, expires_at, stream_version, document)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, expires_at = EXCLUDED.expires_at,
       stream_version = EXCLUDED.stream_version, document = EXCLUDED.document
     WHERE ${table}.stream_version < EXCLUDED.stream_version`,
    [view.id, view.organization, view.environment, view.status, view.expires_at, streamVersion, JSON.stringify(view)],
  );
}
