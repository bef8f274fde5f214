import { type Refund, Refund as RefundSchema, inSchemaOrder, unknownCursor, type Tenant } from '@billing/contracts';
import {
  type EventStore,
  type RecordedEvent,
  type SqlExecutor,
  cursorAfter,
  cursorPage,
  documentTable,
} from '@billing/eventstore';
import { refundEvents } from './refund';

/**
 * One row per refund, written in the append's transaction of its payment's stream: the API's
 * reads and lists, and the sweep that settles refunds the processor never answered (the row
 * keeps the stream and the charge key for it). The refund (a public object) has no tenant, so
 * `write` is given the event's.
 */
const refunds = documentTable<Refund>({
  name: 'refunds',
  columns: {
    order_id: 'text',
    invoice_id: 'text',
    status: 'text NOT NULL',
    stream_id: 'text NOT NULL',
    charge_key: 'text NOT NULL',
  },
  indexes: [
    'CREATE INDEX IF NOT EXISTS refunds_newest_first ON {table} (organization, environment, created_at DESC, id DESC)',
    // The dashboard's list by status: a page is a range of it, however many refunds of other statuses.
    'CREATE INDEX IF NOT EXISTS refunds_by_status ON {table} (organization, environment, status, created_at DESC, id DESC)',
    "CREATE INDEX IF NOT EXISTS refunds_pending ON {table} (created_at) WHERE status = 'pending'",
    // A customer's page asks the refunds of its invoices: a lookup per invoice, not a scan of the organization's.
    "CREATE INDEX IF NOT EXISTS refunds_of_invoices ON {table} (organization, environment, (document->>'invoice_id')) WHERE document->>'invoice_id' IS NOT NULL",
  ],
});

export const refundsTable = refunds.table;

export async function migrateRefundsReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`CREATE SCHEMA IF NOT EXISTS ${schema};${refunds.ddl(schema)}`);
}

type Kept = { order_id: string | null; invoice_id: string | null; stream_id: string; charge_key: string };

/**
 * Idempotent: an event at or below the row's stream version was applied already. A refund's
 * later events change its status and document; the other columns stay as its creation set them.
 */
export async function projectRefunds(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  for (const recorded of events) {
    const event = refundEvents.of(recorded);
    if (!event) continue;
    const refund = event.data.object;
    if (event.type === 'RefundCreated') {
      await refunds.write(sql, schema, refund, recorded.stream_version, {
        columns: [refund.order_id, refund.invoice_id, refund.status, recorded.stream, event.data.charge_key],
        tenant: recorded,
      });
      continue;
    }
    const current = await refunds.read<Kept>(sql, schema, refund.id, [
      'order_id',
      'invoice_id',
      'stream_id',
      'charge_key',
    ]);
    if (!current || current.stream_version >= recorded.stream_version) continue;
    await refunds.write(sql, schema, refund, recorded.stream_version, {
      columns: [current.order_id, current.invoice_id, refund.status, current.stream_id, current.charge_key],
      tenant: recorded,
    });
  }
}

const asRefund = (document: Refund) => inSchemaOrder(RefundSchema, document);

export async function findRefund(sql: SqlExecutor, schema: string, tenant: Tenant, id: string) {
  const { rows } = await sql.query<{ document: Refund }>(
    `SELECT document FROM ${refundsTable(schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0] ? asRefund(rows[0].document) : undefined;
}

/** Newest first (`created_at` desc, then `id` desc), cursor-paged by the last id seen. */
export async function listRefunds(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  page: { limit: number; starting_after?: string; order_id?: string; invoice_id?: string },
): Promise<{ refunds: Refund[]; hasMore: boolean }> {
  const cursor = await cursorAfter(
    page.starting_after,
    (id) => findRefund(sql, schema, tenant, id),
    (id) => unknownCursor(id, 'refund'),
  );
  const { documents, hasMore } = await cursorPage<Refund>(sql, refundsTable(schema), {
    where: {
      organization: tenant.organization,
      environment: tenant.environment,
      order_id: page.order_id,
      invoice_id: page.invoice_id,
    },
    after: cursor,
    limit: page.limit,
  });
  return { refunds: documents.map(asRefund), hasMore };
}

/** A refund the processor may not have answered: the sweep asks it again under the same key. */
export type PendingRefund = {
  id: string;
  organization: string;
  environment: Tenant['environment'];
  stream_id: string;
  charge_key: string;
  amount: number;
};

/** Pending refunds created before `before`, oldest first. */
export async function findPendingRefunds(sql: SqlExecutor, schema: string, before: Date, limit = 100) {
  const { rows } = await sql.query<PendingRefund>(
    `SELECT id, organization, environment, stream_id, charge_key, (document->>'amount')::int AS amount
     FROM ${refundsTable(schema)} WHERE status = 'pending' AND created_at <= $1 ORDER BY created_at LIMIT $2`,
    [before.toISOString(), limit],
  );
  return rows;
}
