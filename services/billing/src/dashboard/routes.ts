import {
  AdminCustomersQuery,
  AdminInvoicesQuery,
  AdminSubscriptionsQuery,
  type CustomerPayment,
  CustomerPaymentsQuery,
  type Invoice,
  idText,
  notFound,
  unknownCursor,
} from '@billing/contracts';
import { type PageFilter, type SqlExecutor, keysetPage } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { z } from 'zod';
import { findCustomer, listCustomers } from '../customers/queries';
import { findInvoiceByNumber } from '../invoices/read-model';
import { listSubscriptions } from '../subscriptions/queries';

const CustomerParams = z.object({ id: idText().min(1) });

/**
 * The dashboard's reads that the public API lacks (docs/dashboard-api.md), for the admin API:
 * customer search, a customer's payments, subscriptions by status.
 */
export function mountDashboardReads(app: Express, context: ServiceContext): void {
  const db = context.infrastructure.database;
  const schema = context.store.tables.schema;

  app.get('/admin/customers', validate({ query: AdminCustomersQuery }), async (req, res) => {
    const query = res.locals.input.query as AdminCustomersQuery;
    const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
    const { customers, hasMore } = await listCustomers(db, schema, tenant, query);
    res.json({ object: 'list', data: customers, has_more: hasMore });
  });

  app.get('/admin/subscriptions', validate({ query: AdminSubscriptionsQuery }), async (req, res) => {
    const query = res.locals.input.query as AdminSubscriptionsQuery;
    const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
    const { subscriptions, hasMore } = await listSubscriptions(db, schema, tenant, {
      ...query,
      customer_id: query.customer,
    });
    res.json({ object: 'list', data: subscriptions, has_more: hasMore });
  });

  app.get('/admin/invoices', validate({ query: AdminInvoicesQuery }), async (req, res) => {
    const query = res.locals.input.query as AdminInvoicesQuery;
    const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
    const invoice = await findInvoiceByNumber(db, schema, tenant, query.number);
    res.json({ object: 'list', data: invoice ? [invoice] : [], has_more: false });
  });

  app.get(
    '/admin/customers/:id/payments',
    validate({ params: CustomerParams, query: CustomerPaymentsQuery }),
    async (req, res) => {
      const query = res.locals.input.query as CustomerPaymentsQuery;
      const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
      const { id } = res.locals.input.params as z.infer<typeof CustomerParams>;
      if (!(await findCustomer(db, schema, tenant, { by: 'id', value: id }))) throw notFound(`No such customer: ${id}`);
      const page = await customerPayments(db, schema, tenant, id, query);
      res.json({ object: 'list', data: page.payments, has_more: page.hasMore });
    },
  );
}

type PaymentRow = {
  global_position: string;
  stream_id: string;
  stream_version: number;
  type: 'InvoicePaid' | 'InvoicePaymentFailed';
  occurred_at: Date | string;
  data: { object: Invoice; failure?: { message: string } };
};

const IS_PAYMENT = `type IN ('InvoicePaid', 'InvoicePaymentFailed')`;

/** The customer's invoice payments, from the invoices' streams: each paid or declined charge. */
async function customerPayments(
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
    created_at: invoice.updated_at ?? new Date(row.occurred_at).toISOString(),
  };
}
