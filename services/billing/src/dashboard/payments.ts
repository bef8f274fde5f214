import {
  type ChargeTrade,
  type CustomerPayment,
  type CustomerPaymentsQuery,
  type Invoice,
  type OrganizationPayment,
  type PaymentsQuery,
  unknownCursor,
} from '@billing/contracts';
import { type EventStore, type PageFilter, type SqlExecutor, keysetPage } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { customersTable } from '../customers/read-model';

// Invoice charges (each paid or declined attempt on an invoice), read from the invoices' streams
// in billing's event log: a customer's (the customer page) and the organization's (the payments list).

/**
 * The organization's charges in a time range, newest first, are a range of this partial index
 * whatever the merchant's size; every other append pays nothing for it (its predicate is false).
 */
export async function migratePaymentsIndex(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE INDEX IF NOT EXISTS events_invoice_payments ON ${schema}.events
      (organization, environment, occurred_at DESC, global_position DESC)
      WHERE type IN ('InvoicePaid', 'InvoicePaymentFailed');
    -- The same list of paid charges only, or declined ones only (the dashboard's status filter).
    CREATE INDEX IF NOT EXISTS events_invoice_payments_by_type ON ${schema}.events
      (organization, environment, type, occurred_at DESC, global_position DESC)
      WHERE type IN ('InvoicePaid', 'InvoicePaymentFailed');
    -- One customer's charges, newest recorded first (the customer page): a range of its entries,
    -- not a scan of the organization's charges for the customer id inside each event.
    CREATE INDEX IF NOT EXISTS events_invoice_payments_by_customer ON ${schema}.events
      (organization, environment, (data->'object'->>'customer_id'), global_position DESC)
      WHERE type IN ('InvoicePaid', 'InvoicePaymentFailed');`);
}

type PaymentRow = {
  global_position: string;
  stream_id: string;
  stream_version: number;
  type: 'InvoicePaid' | 'InvoicePaymentFailed';
  occurred_at: Date | string;
  data: { object: Invoice; failure?: { message: string }; charge?: ChargeTrade };
};

const IS_PAYMENT = `type IN ('InvoicePaid', 'InvoicePaymentFailed')`;

/** The customer's invoice payments, from the invoices' streams: each paid or declined charge. */
export async function customerPayments(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  customerId: string,
  page: CustomerPaymentsQuery,
): Promise<{ payments: CustomerPayment[]; hasMore: boolean }> {
  const where = { organization: tenant.organization, environment: tenant.environment };
  const paymentOf: PageFilter[] = [
    () => IS_PAYMENT,
    (param) => `data->'object'->>'customer_id' = ${param(customerId)}::text`,
  ];
  const after = page.starting_after
    ? [await paymentPosition(sql, schema, tenant, customerId, page.starting_after)]
    : null;
  const { rows, hasMore } = await keysetPage<PaymentRow>(sql, {
    from: `${schema}.events`,
    select: 'global_position, stream_id, stream_version, type, occurred_at, data',
    where,
    filters: paymentOf,
    order: EVENT_ORDER,
    after,
    limit: page.limit,
  });
  return { payments: rows.map(toPayment), hasMore };
}

/** Where the payment `id` (`{invoice}:{version}`) of the customer is in the event log; 400 when nowhere. */
async function paymentPosition(sql: SqlExecutor, schema: string, tenant: Tenant, customerId: string, id: string) {
  const [invoiceId, version] = id.split(':');
  const { rows } = await sql.query<{ global_position: string }>(
    `SELECT global_position FROM ${schema}.events
     WHERE organization = $1 AND environment = $2 AND ${IS_PAYMENT}
       AND data->'object'->>'customer_id' = $3 AND stream_id = $4 AND stream_version = $5`,
    [tenant.organization, tenant.environment, customerId, `invoice-${invoiceId}`, Number(version) || 0],
  );
  if (!rows[0]) throw unknownCursor(id, 'payment');
  return rows[0].global_position;
}

/** The event log's order: newest recorded first. */
const EVENT_ORDER = [{ column: 'global_position', type: 'bigint' }] as const;

function toPayment(row: PaymentRow): CustomerPayment {
  const invoice = row.data.object;
  const paid = row.type === 'InvoicePaid';
  return {
    object: 'payment',
    id: `${invoice.id}:${row.stream_version}`,
    invoice_id: invoice.id,
    subscription_id: invoice.subscription_id,
    amount: paid ? invoice.amount_paid : invoice.amount_due,
    currency: 'TWD',
    status: paid ? 'succeeded' : 'failed',
    failure_message: row.data.failure?.message ?? null,
    // Recorded with each paid charge since the trade was named; an older or declined one has none.
    processor: row.data.charge?.processor ?? null,
    processor_reference: row.data.charge?.processor_reference ?? null,
    created_at: invoice.updated_at ?? new Date(row.occurred_at).toISOString(),
  };
}

/** The event that records a charge of each status. */
const PAYMENT_TYPE = { succeeded: 'InvoicePaid', failed: 'InvoicePaymentFailed' } as const;

/** Paid charges only, or declined ones only: a range of `events_invoice_payments_by_type`. */
const statusFilter = (status: PaymentsQuery['status']): PageFilter[] =>
  status ? [(param) => `e.type = ${param(PAYMENT_TYPE[status])}::text`] : [];

/** Newest recorded first, in time: the index's order. */
const TIME_ORDER = [
  { column: 'occurred_at', type: 'timestamptz' },
  { column: 'global_position', type: 'bigint' },
] as const;

/** The organization's invoice charges recorded in `[from, to)` (of a status, if asked), newest first, each with its customer. */
export async function organizationPayments(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  page: PaymentsQuery,
): Promise<{ payments: OrganizationPayment[]; hasMore: boolean }> {
  const after = page.starting_after ? await paymentTime(sql, schema, tenant, page.starting_after) : null;
  // Each charge with its customer's email, by the customer's primary key: one lookup a row shown.
  const { rows, hasMore } = await keysetPage<PaymentRow & { customer_email: string | null }>(sql, {
    from: `${schema}.events e LEFT JOIN ${customersTable(schema)} c ON c.id = e.data->'object'->>'customer_id'`,
    select:
      "e.global_position, e.stream_id, e.stream_version, e.type, e.occurred_at, e.data, c.document->>'email' AS customer_email",
    where: { 'e.organization': tenant.organization, 'e.environment': tenant.environment },
    filters: [
      () => IS_PAYMENT,
      (param) => `occurred_at >= ${param(page.from)}::timestamptz`,
      (param) => `occurred_at < ${param(page.to)}::timestamptz`,
      ...statusFilter(page.status),
    ],
    order: TIME_ORDER,
    after,
    limit: page.limit,
  });
  return {
    payments: rows.map((row) => ({
      ...toPayment(row),
      customer_id: row.data.object.customer_id,
      customer_email: row.customer_email,
    })),
    hasMore,
  };
}

/** Where the payment `id` (`{invoice}:{version}`) is in time; 400 when it is not the organization's. */
async function paymentTime(sql: SqlExecutor, schema: string, tenant: Tenant, id: string): Promise<unknown[]> {
  const [invoiceId, version] = id.split(':');
  const { rows } = await sql.query<{ occurred_at: Date; global_position: string }>(
    `SELECT occurred_at, global_position FROM ${schema}.events
     WHERE organization = $1 AND environment = $2 AND ${IS_PAYMENT} AND stream_id = $3 AND stream_version = $4`,
    [tenant.organization, tenant.environment, `invoice-${invoiceId}`, Number(version) || 0],
  );
  if (!rows[0]) throw unknownCursor(id, 'payment');
  return [new Date(rows[0].occurred_at).toISOString(), rows[0].global_position];
}
