import {
  type AdminRefund,
  AdminRefundsQuery,
  type Refund,
  AdminRefund as AdminRefundSchema,
  inSchemaOrder,
  unknownCursor,
} from '@billing/contracts';
import {
  type PageFilter,
  type SqlExecutor,
  createdBetween,
  cursorAfter,
  keysetPage,
  newestFirst,
} from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { sessionsTable } from '../sessions/read-model';
import { findRefund, refundsTable } from './read-model';

/**
 * `GET /admin/refunds?environment=&status=&from=&to=&invoices=` (the admin API's
 * `/admin/v1/organizations/{org}/refunds`): every refund checkout decided, of orders and of
 * invoices (decision 0009: checkout decides them all), for the dashboard's refunds list and export.
 */
export function mountRefundReads(app: Express, context: ServiceContext): void {
  const sql = context.store.database;
  const { schema } = context.store.tables;
  app.get('/admin/refunds', validate({ query: AdminRefundsQuery }), async (req, res) => {
    const query = res.locals.input.query as AdminRefundsQuery;
    const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
    const { refunds, hasMore } = await organizationRefunds(sql, schema, tenant, query);
    res.json({ object: 'list', data: refunds, has_more: hasMore });
  });
}

/** Only the refunds of these invoices: a lookup per invoice in `refunds_of_invoices`. */
const ofInvoices = (invoices: string[] | undefined): PageFilter[] =>
  invoices ? [(param) => `r.document->>'invoice_id' = ANY(${param(invoices)}::text[])`] : [];

type RefundRow = {
  document: Refund;
  customer_id: string | null;
  customer_email: string | null;
  product_name: string | null;
};

/**
 * The organization's refunds created in `[from, to)`, newest first, each with the buyer and the
 * product of the checkout session it refunds (by the session's key: one lookup a row shown). A
 * page is a range of `refunds_newest_first`, or `refunds_by_status` when a status is asked.
 */
export async function organizationRefunds(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  query: AdminRefundsQuery,
): Promise<{ refunds: AdminRefund[]; hasMore: boolean }> {
  const after = await cursorAfter(
    query.starting_after,
    (id) => findRefund(sql, schema, tenant, id),
    (id) => unknownCursor(id, 'refund'),
  );
  const { rows, hasMore } = await keysetPage<RefundRow>(sql, {
    from: `${refundsTable(schema)} r LEFT JOIN ${sessionsTable(schema)} s ON s.id = r.document->>'checkout_session_id'`,
    select: `r.document, s.document->>'customer_id' AS customer_id, s.document->>'customer_email' AS customer_email,
      s.document->'product'->>'name' AS product_name`,
    where: { 'r.organization': tenant.organization, 'r.environment': tenant.environment, 'r.status': query.status },
    filters: [...createdBetween('r', query), ...ofInvoices(query.invoices)],
    order: newestFirst('r'),
    after,
    limit: query.limit,
  });
  const refunds = rows.map(({ document, ...buyer }) => inSchemaOrder(AdminRefundSchema, { ...document, ...buyer }));
  return { refunds, hasMore };
}
