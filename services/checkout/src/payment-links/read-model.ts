import type { EventStore, EventStoreTransaction, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import { type PaymentLinkState, type PaymentLinkView, evolve, paymentLinkEvents, paymentLinkStream } from './link';

export const paymentLinksTable = (schema: string) => `${schema}.payment_links`;
/** Which session a link opened: how a completed session finds its link. */
export const paymentLinkSessionsTable = (schema: string) => `${schema}.payment_link_sessions`;

export async function migratePaymentLinksReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${paymentLinksTable(schema)} (
      id text PRIMARY KEY,
      -- Creation order for the list (created_at can tie within a millisecond).
      seq bigserial NOT NULL,
      url_id text NOT NULL UNIQUE,
      organization text NOT NULL,
      environment text NOT NULL,
      active boolean NOT NULL,
      created_at timestamptz NOT NULL,
      stream_version integer NOT NULL,
      document jsonb NOT NULL
    );
    CREATE INDEX IF NOT EXISTS payment_links_by_tenant ON ${paymentLinksTable(schema)} (organization, environment, seq DESC);
    CREATE TABLE IF NOT EXISTS ${paymentLinkSessionsTable(schema)} (
      session_id text PRIMARY KEY,
      link_id text NOT NULL
    );
  `);
}

/** Written in the append's transaction; idempotent by stream version. */
export async function projectPaymentLinks(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const table = paymentLinksTable(schema);
  for (const event of events) {
    const linkEvent = paymentLinkEvents.of(event);
    if (!linkEvent) continue;
    const id = linkEvent.type === 'PaymentLinkCreated' ? linkEvent.data.id : linkEvent.data.link_id;
    const { rows } = await sql.query<{ document: PaymentLinkView; stream_version: number }>(
      `SELECT document, stream_version FROM ${table} WHERE id = $1`,
      [id],
    );
    const current = rows[0];
    if (current && current.stream_version >= event.stream_version) continue;
    const state: PaymentLinkState = current ? { status: 'Exists', link: current.document } : { status: 'Empty' };
    const next = evolve(state, linkEvent);
    if (next.status === 'Empty') continue;
    const view = next.link;
    await sql.query(
      `INSERT INTO ${table} (id, url_id, organization, environment, active, created_at, stream_version, document)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO UPDATE SET active = EXCLUDED.active, stream_version = EXCLUDED.stream_version,
         document = EXCLUDED.document
       WHERE ${table}.stream_version < EXCLUDED.stream_version`,
      [
        view.id,
        view.url_id,
        view.organization,
        view.environment,
        view.active,
        view.created_at,
        event.stream_version,
        JSON.stringify(view),
      ],
    );
  }
}

/** Records that a link opened this session, in the session's creation transaction. */
export async function recordLinkSession(sql: SqlExecutor, schema: string, sessionId: string, linkId: string) {
  await sql.query(
    `INSERT INTO ${paymentLinkSessionsTable(schema)} (session_id, link_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
    [sessionId, linkId],
  );
}

/**
 * Part of the session projector: a completed session opened by a link appends
 * `PaymentLinkCompleted` to the link's stream and projects it, in the completion's transaction,
 * so `completed_count` can never miss or double-count a payment.
 */
export async function countLinkCompletions(
  tx: EventStoreTransaction,
  schema: string,
  events: RecordedEvent[],
): Promise<void> {
  for (const event of events) {
    if (event.type !== 'CheckoutSessionCompleted') continue;
    const sessionId = (event.data as { session_id: string }).session_id;
    const { rows } = await tx.query<{ link_id: string; stream_version: number }>(
      `SELECT s.link_id, l.stream_version FROM ${paymentLinkSessionsTable(schema)} s
       JOIN ${paymentLinksTable(schema)} l ON l.id = s.link_id WHERE s.session_id = $1 FOR UPDATE OF l`,
      [sessionId],
    );
    const row = rows[0];
    if (!row) continue;
    const appended = await tx.append(
      paymentLinkStream(row.link_id),
      [
        {
          type: 'PaymentLinkCompleted',
          data: { link_id: row.link_id, session_id: sessionId, completed_at: event.occurred_at },
        },
      ],
      {
        expectedVersion: row.stream_version,
        organization: event.organization,
        environment: event.environment,
        occurredAt: new Date(event.occurred_at),
      },
    );
    await projectPaymentLinks(tx, schema, appended.events);
  }
}
