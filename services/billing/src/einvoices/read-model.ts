import {
  type EinvoiceResource,
  EinvoiceResource as EinvoiceSchema,
  type EinvoiceStatus,
  inSchemaOrder,
  unknownCursor,
} from '@billing/contracts';
import { type EventStore, type RecordedEvent, type SqlExecutor, cursorPage, documentTable } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { einvoiceEvents } from './einvoice';
import { warnAtOf } from './rules';

/**
 * One row per e-invoice. `due_at` is when its pending action is to be tried (null when there is
 * none); `warn_at` when the deadline monitor warns about it (null once issued or warned).
 */
const einvoices = documentTable<EinvoiceResource>({
  name: 'einvoices',
  columns: {
    customer_id: 'text',
    invoice_id: 'text',
    order_id: 'text',
    status: 'text NOT NULL',
    due_at: 'timestamptz',
    warn_at: 'timestamptz',
  },
  columnsOf: (e) => [
    e.customer_id,
    e.invoice_id,
    e.order_id,
    e.status,
    e.pending_action ? e.next_attempt_at : null,
    e.status === 'pending' && !e.deadline_warned_at ? warnAtOf(new Date(e.created_at), new Date(e.deadline)) : null,
  ],
  insertOnly: ['customer_id', 'invoice_id', 'order_id'],
  // The number the provider gave, kept by PostgreSQL from the document: the dashboard's search finds it.
  migrations: [
    "ALTER TABLE {table} ADD COLUMN IF NOT EXISTS number text GENERATED ALWAYS AS (document->>'number') STORED",
  ],
  indexes: [
    'CREATE INDEX IF NOT EXISTS einvoices_newest_first ON {table} (organization, environment, created_at DESC, id DESC)',
    'CREATE INDEX IF NOT EXISTS einvoices_due ON {table} (due_at) WHERE due_at IS NOT NULL',
    'CREATE INDEX IF NOT EXISTS einvoices_warn ON {table} (warn_at) WHERE warn_at IS NOT NULL',
    'CREATE INDEX IF NOT EXISTS einvoices_by_invoice ON {table} (invoice_id) WHERE invoice_id IS NOT NULL',
    'CREATE INDEX IF NOT EXISTS einvoices_by_order ON {table} (order_id) WHERE order_id IS NOT NULL',
    'CREATE INDEX IF NOT EXISTS einvoices_by_number ON {table} (organization, environment, number) WHERE number IS NOT NULL',
  ],
});

export const einvoicesTable = einvoices.table;

export async function migrateEinvoicesReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`CREATE SCHEMA IF NOT EXISTS ${schema};${einvoices.ddl(schema)}`);
}

export async function projectEinvoices(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  for (const event of events) {
    const einvoiceEvent = einvoiceEvents.of(event);
    if (!einvoiceEvent) continue;
    await einvoices.write(sql, schema, einvoiceEvent.data.object, event.stream_version, { tenant: event });
  }
}

/** The stored document with its fields in the schema's order (jsonb keeps its own). */
const asEinvoice = (document: EinvoiceResource) => inSchemaOrder(EinvoiceSchema, document);

export async function findEinvoice(sql: SqlExecutor, schema: string, tenant: Tenant, id: string) {
  const { rows } = await sql.query<{ document: EinvoiceResource }>(
    `SELECT document FROM ${einvoicesTable(schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0] && asEinvoice(rows[0].document);
}

/** The e-invoice of a billing invoice or of a checkout order, if one was asked for. */
export async function findEinvoiceOf(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  source: { invoiceId?: string | null; orderId?: string | null },
) {
  const [column, value] = source.invoiceId ? ['invoice_id', source.invoiceId] : ['order_id', source.orderId];
  if (!value) return undefined;
  const { rows } = await sql.query<{ document: EinvoiceResource }>(
    `SELECT document FROM ${einvoicesTable(schema)} WHERE ${column} = $1 AND organization = $2 AND environment = $3`,
    [value, tenant.organization, tenant.environment],
  );
  return rows[0] && asEinvoice(rows[0].document);
}

export async function listEinvoices(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  page: {
    limit: number;
    starting_after?: string;
    customer_id?: string;
    invoice_id?: string;
    order_id?: string;
    status?: EinvoiceStatus;
    number?: string;
  },
): Promise<{ einvoices: EinvoiceResource[]; hasMore: boolean }> {
  let cursor: { created_at: string; id: string } | null = null;
  if (page.starting_after) {
    const after = await findEinvoice(sql, schema, tenant, page.starting_after);
    if (!after) throw unknownCursor(page.starting_after, 'einvoice');
    cursor = { created_at: after.created_at, id: after.id };
  }
  const { documents, hasMore } = await cursorPage<EinvoiceResource>(sql, einvoicesTable(schema), {
    where: {
      organization: tenant.organization,
      environment: tenant.environment,
      customer_id: page.customer_id,
      invoice_id: page.invoice_id,
      order_id: page.order_id,
      status: page.status,
      number: page.number,
    },
    after: cursor,
    limit: page.limit,
  });
  return { einvoices: documents.map(asEinvoice), hasMore };
}

export type DueEinvoice = { id: string } & Tenant;

/** E-invoices whose pending action is due by `now`, oldest first. */
export async function findDueEinvoices(sql: SqlExecutor, schema: string, now: Date, limit = 100) {
  const { rows } = await sql.query<DueEinvoice>(
    `SELECT id, organization, environment FROM ${einvoicesTable(schema)}
     WHERE due_at <= $1 ORDER BY due_at LIMIT $2`,
    [now.toISOString(), limit],
  );
  return rows;
}

/** E-invoices still not issued whose warning time has come. */
export async function findEinvoicesToWarn(sql: SqlExecutor, schema: string, now: Date, limit = 100) {
  const { rows } = await sql.query<DueEinvoice>(
    `SELECT id, organization, environment FROM ${einvoicesTable(schema)}
     WHERE warn_at <= $1 ORDER BY warn_at LIMIT $2`,
    [now.toISOString(), limit],
  );
  return rows;
}
