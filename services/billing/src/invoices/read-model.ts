import {
  type Invoice,
  type InvoiceStatus,
  inSchemaOrder,
  Invoice as InvoiceSchema,
  unknownCursor,
} from '@billing/contracts';
import { type EventStore, type RecordedEvent, type SqlExecutor, cursorPage, documentTable } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { recordMetricsChanges } from '@billing/runtime';
import { finalInvoiceId } from './ids';
import { invoiceMetricsChange } from './metrics';
import type { DueSubscription } from '../subscriptions/queries';
import { subscriptionsTable } from '../subscriptions/read-model';
import { currentInvoice, invoiceEvents } from './invoice';

/** One row per invoice; the invoice (a public object) has no tenant, so `write` is given the event's. */
const invoices = documentTable<Invoice>({
  name: 'invoices',
  columns: { customer_id: 'text NOT NULL', subscription_id: 'text', status: "text NOT NULL DEFAULT 'paid'" },
  columnsOf: (invoice) => [invoice.customer_id, invoice.subscription_id, invoice.status],
  insertOnly: ['customer_id', 'subscription_id'],
  // Added with the invoices API; rows of the first shape are all paid.
  migrations: ["ALTER TABLE {table} ADD COLUMN IF NOT EXISTS status text NOT NULL DEFAULT 'paid'"],
  indexes: [
    'CREATE INDEX IF NOT EXISTS invoices_subscription ON {table} (subscription_id)',
    'CREATE INDEX IF NOT EXISTS invoices_newest_first ON {table} (organization, environment, created_at DESC, id DESC)',
    // The dashboard's list by status or by customer: a page is a range of one of these, whatever the merchant's size.
    'CREATE INDEX IF NOT EXISTS invoices_by_status ON {table} (organization, environment, status, created_at DESC, id DESC)',
    'CREATE INDEX IF NOT EXISTS invoices_by_customer ON {table} (organization, environment, customer_id, created_at DESC, id DESC)',
    // A refund of a checkout order finds the invoice the order paid.
    "CREATE INDEX IF NOT EXISTS invoices_by_order ON {table} ((document->>'order_id')) WHERE document->>'order_id' IS NOT NULL",
    // The dashboard's search finds an invoice by its number, in any case.
    "CREATE INDEX IF NOT EXISTS invoices_by_number ON {table} (organization, environment, upper(document->>'number'))",
    // The sweep's retries and final invoices are among the open invoices, few whatever the
    // merchant's size: without this, both read every invoice (bench/sweep).
    "CREATE INDEX IF NOT EXISTS invoices_open ON {table} (subscription_id) WHERE status = 'open'",
  ],
});

export const invoicesTable = invoices.table;
const numbersTable = (schema: string) => `${schema}.invoice_numbers`;

export async function migrateInvoicesReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};${invoices.ddl(schema)}
    CREATE TABLE IF NOT EXISTS ${numbersTable(schema)} (
      organization text NOT NULL,
      environment text NOT NULL,
      last integer NOT NULL,
      PRIMARY KEY (organization, environment)
    );
  `);
}

/**
 * The next invoice number of the organization in the environment: INV-000001, INV-000002, ...
 * Taken in the invoice's transaction; the row lock queues concurrent invoices of one
 * organization, and a rolled-back transaction gives its number back.
 */
export async function nextInvoiceNumber(sql: SqlExecutor, schema: string, tenant: Tenant): Promise<string> {
  return (await nextInvoiceNumbers(sql, schema, tenant, 1))[0]!;
}

/** The next `count` numbers at once, in order, for a batch of invoices opened in one transaction. */
export async function nextInvoiceNumbers(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  count: number,
): Promise<string[]> {
  const { rows } = await sql.query<{ last: number }>(
    `INSERT INTO ${numbersTable(schema)} (organization, environment, last) VALUES ($1, $2, $3)
     ON CONFLICT (organization, environment) DO UPDATE SET last = ${numbersTable(schema)}.last + $3
     RETURNING last`,
    [tenant.organization, tenant.environment, count],
  );
  const last = rows[0]!.last;
  return Array.from({ length: count }, (_, i) => `INV-${String(last - count + 1 + i).padStart(6, '0')}`);
}

/** Applies invoice events in the append's transaction; an event at or below the row's version is skipped. */
export async function projectInvoices(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  for (const event of events) {
    const invoiceEvent = invoiceEvents.of(event);
    if (!invoiceEvent) continue;
    const invoice = currentInvoice(invoiceEvent.data.object);
    await invoices.write(sql, schema, invoice, event.stream_version, { tenant: event });
    await recordMetricsChanges(sql, schema, event, invoiceMetricsChange(event));
  }
}

const asInvoice = (document: Invoice) => inSchemaOrder(InvoiceSchema, currentInvoice(document));

export async function findInvoice(sql: SqlExecutor, schema: string, tenant: Tenant, id: string) {
  const { rows } = await sql.query<{ document: Invoice }>(
    `SELECT document FROM ${invoicesTable(schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0] ? asInvoice(rows[0].document) : undefined;
}

/** Invoices by id, each with its tenant: the renewal invoices a batch of renewals would open, read at once. */
export async function findInvoicesById(
  sql: SqlExecutor,
  schema: string,
  ids: string[],
): Promise<Array<{ invoice: Invoice; tenant: Tenant }>> {
  if (ids.length === 0) return [];
  const { rows } = await sql.query<{ document: Invoice } & Tenant>(
    `SELECT document, organization, environment FROM ${invoicesTable(schema)} WHERE id = ANY($1::text[])`,
    [ids],
  );
  return rows.map(({ document, organization, environment }) => ({
    invoice: asInvoice(document),
    tenant: { organization, environment },
  }));
}

/** The invoice a checkout order paid (the first period of its subscription), if any. */
export async function findInvoiceByOrder(sql: SqlExecutor, schema: string, tenant: Tenant, orderId: string) {
  const { rows } = await sql.query<{ document: Invoice }>(
    `SELECT document FROM ${invoicesTable(schema)}
     WHERE document->>'order_id' = $1 AND organization = $2 AND environment = $3`,
    [orderId, tenant.organization, tenant.environment],
  );
  return rows[0] ? asInvoice(rows[0].document) : undefined;
}

/** Newest first (`created_at` desc, then `id` desc), cursor-paged by the last id seen. */
export async function listInvoices(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  page: {
    limit: number;
    starting_after?: string;
    customer_id?: string;
    subscription_id?: string;
    status?: InvoiceStatus;
  },
): Promise<{ invoices: Invoice[]; hasMore: boolean }> {
  let cursor: { created_at: string; id: string } | null = null;
  if (page.starting_after) {
    const after = await findInvoice(sql, schema, tenant, page.starting_after);
    if (!after) throw unknownCursor(page.starting_after, 'invoice');
    cursor = { created_at: after.created_at, id: after.id };
  }
  const { documents, hasMore } = await cursorPage<Invoice>(sql, invoicesTable(schema), {
    where: {
      organization: tenant.organization,
      environment: tenant.environment,
      customer_id: page.customer_id,
      subscription_id: page.subscription_id,
      status: page.status,
    },
    after: cursor,
    limit: page.limit,
  });
  return { invoices: documents.map(asInvoice), hasMore };
}

/**
 * Open invoices of subscriptions in `status` (and `where`, over `i` and `s`) whose next attempt
 * has come by `now`, on `clock` (null: no test clock), soonest first: the sweep's due work.
 */
async function dueOpenInvoices(
  sql: SqlExecutor,
  schema: string,
  status: 'PAST_DUE' | 'CANCELED',
  where: string,
  [now, clock, limit]: [Date, string | null, number],
) {
  const { rows } = await sql.query<{
    id: string;
    organization: string;
    environment: Tenant['environment'];
    due_at: Date;
    invoice_id: string;
  }>(
    `SELECT s.id, s.organization, s.environment, i.id AS invoice_id,
            (i.document->>'next_payment_attempt')::timestamptz AS due_at
     FROM ${invoicesTable(schema)} i JOIN ${subscriptionsTable(schema)} s ON s.id = i.subscription_id
     WHERE s.status = '${status}' AND i.status = 'open' ${where}
       AND (i.document->>'next_payment_attempt')::timestamptz <= $1 AND s.test_clock_id IS NOT DISTINCT FROM $2
     ORDER BY due_at LIMIT $3`,
    [now.toISOString(), clock, limit],
  );
  return rows;
}

const withoutInvoiceId = ({ invoice_id: _, ...item }: { invoice_id: string } & DueSubscription) => item;

/**
 * The open final invoice of a CANCELED subscription (`finalInvoiceId`: its last period's usage,
 * or its usage up to a cancellation now with `invoice_now`) whose next attempt has come by
 * `now`: the first right after the period ended (or the cancellation), then dunning's.
 */
export async function findDueFinalInvoices(
  sql: SqlExecutor,
  schema: string,
  now: Date,
  clock: string | null,
  limit = 500,
): Promise<DueSubscription[]> {
  const rows = await dueOpenInvoices(
    sql,
    schema,
    'CANCELED',
    // The last period's (ended at its end), or the period up to a cancellation now (`invoice_now`).
    "AND i.document->>'period_end' IN (s.document->>'current_period_end', s.document->>'canceled_at')",
    [now, clock, limit],
  );
  return rows.filter((row) => row.invoice_id === finalInvoiceId(row.id)).map(withoutInvoiceId);
}

/** The open invoice of a PAST_DUE subscription whose next retry has come by `now`. */
export async function findDueRetries(
  sql: SqlExecutor,
  schema: string,
  now: Date,
  clock: string | null,
  limit = 500,
): Promise<DueSubscription[]> {
  return (await dueOpenInvoices(sql, schema, 'PAST_DUE', '', [now, clock, limit])).map(withoutInvoiceId);
}
