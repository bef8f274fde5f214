import {
  AdminCustomersQuery,
  AdminInvoicesQuery,
  AdminSubscriptionsQuery,
  PaymentsQuery,
  CustomerPaymentsQuery,
  idText,
  notFound,
} from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { z } from 'zod';
import { findCustomer, listCustomers } from '../customers/queries';
import { customersTable } from '../customers/read-model';
import { listSubscriptions } from '../subscriptions/queries';
import { organizationInvoices } from './invoices';
import { customerPayments, organizationPayments } from './payments';

const CustomerParams = z.object({ id: idText().min(1) });

/**
 * The dashboard's reads that the public API lacks (docs/dashboard-api.md), for the admin API:
 * customer search, a customer's payments, subscriptions by status, invoices and charges by
 * status, each list in a creation (or charge) time range.
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
    const customers = await customerNames(db, schema, [...new Set(subscriptions.map((s) => s.customer_id))]);
    const data = subscriptions.map((s) => ({
      ...s,
      customer_email: customers.get(s.customer_id)?.email ?? null,
      customer_name: customers.get(s.customer_id)?.name ?? null,
    }));
    res.json({ object: 'list', data, has_more: hasMore });
  });

  app.get('/admin/invoices', validate({ query: AdminInvoicesQuery }), async (req, res) => {
    const query = res.locals.input.query as AdminInvoicesQuery;
    const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
    const { invoices, hasMore } = await organizationInvoices(db, schema, tenant, query);
    res.json({ object: 'list', data: invoices, has_more: hasMore });
  });

  app.get('/admin/payments', validate({ query: PaymentsQuery }), async (req, res) => {
    const query = res.locals.input.query as PaymentsQuery;
    const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
    const page = await organizationPayments(db, schema, tenant, query);
    res.json({ object: 'list', data: page.payments, has_more: page.hasMore });
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

/** The email and name of each customer of a page, in one statement by their keys. */
async function customerNames(sql: SqlExecutor, schema: string, ids: string[]) {
  const { rows } = await sql.query<{ id: string; email: string | null; name: string | null }>(
    `SELECT id, document->>'email' AS email, document->>'name' AS name FROM ${customersTable(schema)} WHERE id = ANY($1)`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row]));
}
