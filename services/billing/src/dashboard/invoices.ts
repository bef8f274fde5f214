import {
  type AdminInvoice,
  type AdminInvoicesQuery,
  type Invoice,
  AdminInvoice as AdminInvoiceSchema,
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
import type { Tenant } from '@billing/service';
import { customersTable } from '../customers/read-model';
import { currentInvoice } from '../invoices/invoice';
import { findInvoice, invoicesTable } from '../invoices/read-model';

/**
 * The organization's invoices, newest first (`created_at` desc, then `id` desc), each with its
 * customer's email; filters combine. A page is a range of `invoices_newest_first`, or of
 * `invoices_by_status` / `invoices_by_customer` when one of those is asked, and one customer
 * lookup by key a row shown: its cost does not grow with the merchant.
 */
export async function organizationInvoices(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  query: AdminInvoicesQuery,
): Promise<{ invoices: AdminInvoice[]; hasMore: boolean }> {
  const after = await cursorAfter(
    query.starting_after,
    (id) => findInvoice(sql, schema, tenant, id),
    (id) => unknownCursor(id, 'invoice'),
  );
  const { rows, hasMore } = await keysetPage<{ document: Invoice; customer_email: string | null }>(sql, {
    from: `${invoicesTable(schema)} i LEFT JOIN ${customersTable(schema)} c ON c.id = i.customer_id`,
    select: "i.document, c.document->>'email' AS customer_email",
    where: {
      'i.organization': tenant.organization,
      'i.environment': tenant.environment,
      'i.status': query.awaiting_transfer ? 'open' : query.status,
      'i.customer_id': query.customer,
    },
    filters: invoiceFilters(query),
    order: newestFirst('i'),
    after,
    limit: query.limit,
  });
  const invoices = rows.map((row) =>
    inSchemaOrder(AdminInvoiceSchema, { ...currentInvoice(row.document), customer_email: row.customer_email }),
  );
  return { invoices, hasMore };
}

/**
 * The filters beyond equality: the creation range, the number (any case, `invoices_by_number`),
 * ids, and waiting for a transfer (open, a range of `invoices_by_status`, with instructions).
 */
function invoiceFilters(query: AdminInvoicesQuery): PageFilter[] {
  const filters = createdBetween('i', query);
  const { number, ids } = query;
  if (number) filters.push((param) => `upper(i.document->>'number') = upper(${param(number)}::text)`);
  if (ids) filters.push((param) => `i.id = ANY(${param(ids)}::text[])`);
  if (query.awaiting_transfer) filters.push(() => `jsonb_typeof(i.document->'payment_instructions') = 'object'`);
  return filters;
}
