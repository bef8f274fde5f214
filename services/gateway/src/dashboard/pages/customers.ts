import { ApiFailure, withQuery } from '../client';
import { type Html, html } from '@billing/service';
import { twd, when } from '../html';
import { type DashboardPage, type PageContext, pager, table } from '../page';
import { type EinvoiceLookup, einvoiceCell, einvoiceFailure, einvoicesOfCustomer, showsEinvoices } from './einvoices';
import { historySection } from './history';

interface Customer {
  id: string;
  email: string;
  name: string | null;
  external_id: string | null;
  status: string;
  created_at: string;
  subscriptions_count?: number;
  subscriptions?: Array<{ id: string; status: string; current_period_end: string; product: { name: string } }>;
}
export interface Invoice {
  id: string;
  number: string;
  customer_id: string;
  subscription_id: string | null;
  status: string;
  total: number;
  amount_paid: number;
  amount_refunded: number;
  period_start: string;
  period_end: string;
  paid_at: string | null;
  created_at: string;
}
interface Payment {
  id: string;
  amount: number;
  status: string;
  created_at: string;
  invoice_id?: string | null;
  order_id?: string | null;
  failure_message?: string | null;
}

/**
 * Invoice table rows; with the customer's e-invoices (`einvoicesOfCustomer`, one call for the
 * whole table), each invoice's in a column after the period.
 */
export function invoiceRows(
  ctx: PageContext,
  invoices: Invoice[],
  options: { lastCell?: (invoice: Invoice) => Html; einvoices?: EinvoiceLookup } = {},
): Html[] {
  const { lastCell, einvoices } = options;
  return invoices.map(
    (i) =>
      html`<tr>
        <td><a href="${ctx.base}/invoices/${i.id}">${i.number}</a></td>
        <td>${i.status}</td>
        <td>${twd(i.total)}</td>
        <td>${twd(i.amount_paid)}</td>
        <td>${twd(i.amount_refunded)}</td>
        <td>${when(i.period_start)} – ${when(i.period_end)}</td>
        ${einvoices && showsEinvoices(einvoices) ? html`<td class="einvoice">${einvoiceCell(ctx, einvoices, i)}</td>` : ''}
        ${lastCell ? html`<td>${lastCell(i)}</td>` : ''}
      </tr>`,
  );
}

export const refundable = (invoice: Invoice) =>
  invoice.status === 'paid' && invoice.amount_refunded < invoice.amount_paid;
export const INVOICE_HEADERS = ['Number', 'Status', 'Total', 'Paid', 'Refunded', 'Period'];
/** The headers of `invoiceRows` with the same e-invoices. */
export const invoiceHeaders = (einvoices?: EinvoiceLookup) =>
  showsEinvoices(einvoices) ? [...INVOICE_HEADERS, 'E-invoice'] : INVOICE_HEADERS;

export const customersPage: DashboardPage = {
  path: 'customers',
  section: 'customers',
  title: () => 'Customers',
  async view(ctx) {
    const q = (ctx.query.q ?? '').trim().slice(0, 100);
    const list = q ? await searchCustomers(ctx, q) : await listCustomers(ctx);
    const rows = list.data.map(
      (c) =>
        html`<tr>
          <td><a href="${ctx.base}/customers/${c.id}">${c.email}</a></td>
          <td>${c.name ?? '—'}</td>
          <td>${c.external_id ?? '—'}</td>
          <td>${c.subscriptions_count ?? '—'}</td>
          <td>${c.status}</td>
          <td>${when(c.created_at)}</td>
        </tr>`,
    );
    return html`<form class="card" method="get" role="search">
        <label for="q">Search by email, name, external id or id</label
        ><input id="q" name="q" type="search" value="${q}" />
        <button type="submit">Search</button>${q ? html` <a href="${ctx.base}/customers">Clear</a>` : ''}
      </form>
      ${table(q ? `Customers matching ${q}` : 'Customers', ['Email', 'Name', 'External id', 'Subscriptions', 'Status', 'Created'], rows, q ? 'No customer matches.' : 'No customers yet.')}${pager(ctx, list.has_more, list.data.at(-1)?.id, q ? { q } : {})}`;
  },
};

type CustomerPage = { data: Customer[]; has_more: boolean };

const listCustomers = (ctx: PageContext) =>
  ctx.api.v1<CustomerPage>('GET', withQuery('/customers', { limit: 20, starting_after: ctx.query.after }));

/** Any part of the email, name, external id or id, in any case (the admin search). */
const searchCustomers = (ctx: PageContext, q: string) =>
  ctx.api.admin<CustomerPage>(
    'GET',
    withQuery('/customers', { environment: ctx.environment, query: q, limit: 20, starting_after: ctx.query.after }),
  );

/** A section the admin read endpoints give; where they are not available, says so in place. */
async function optional(title: string, read: () => Promise<Html>): Promise<Html> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    return html`<h2>${title}</h2>
      <p class="error" role="alert">${title} could not be read: ${error.explanation}</p>`;
  }
}

export const customerPage: DashboardPage = {
  path: 'customers/:id',
  section: 'customers',
  title: () => 'Customer',
  async view(ctx) {
    const id = encodeURIComponent(ctx.params.id!);
    const [customer, invoices, einvoices] = await Promise.all([
      ctx.api.v1<Customer>('GET', `/customers/${id}`),
      ctx.api.v1<{ data: Invoice[]; has_more: boolean }>('GET', `/invoices?customer_id=${id}&limit=50`),
      einvoicesOfCustomer(ctx, ctx.params.id!),
    ]);
    const subscriptionRows = (customer.subscriptions ?? []).map(
      (s) =>
        html`<tr>
          <td><a href="${ctx.base}/subscriptions/${s.id}">${s.product.name}</a></td>
          <td>${s.status}</td>
          <td>${when(s.current_period_end)}</td>
        </tr>`,
    );
    const payments = await optional('Payments', async () => {
      const list = await ctx.api.admin<{ data: Payment[] }>(
        'GET',
        `/customers/${id}/payments?environment=${ctx.environment}&limit=50`,
      );
      const rows = list.data.map(
        (p) =>
          html`<tr>
            <td>${when(p.created_at)}</td>
            <td>${twd(p.amount)}</td>
            <td>${p.status}</td>
            <td>${p.invoice_id ?? p.order_id ?? '—'}</td>
            <td>${p.failure_message ?? ''}</td>
          </tr>`,
      );
      return html`<h2>Payments</h2>
        ${table('Payments', ['When', 'Amount', 'Status', 'For', 'Failure'], rows, 'No payments.')}`;
    });
    return html`<section class="card" aria-label="Customer">
        <h2>${customer.email}</h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${customer.id}</dd>
          <dt>Name</dt>
          <dd>${customer.name ?? '—'}</dd>
          <dt>External id</dt>
          <dd>${customer.external_id ?? '—'}</dd>
          <dt>Status</dt>
          <dd>${customer.status}</dd>
          <dt>Created</dt>
          <dd>${when(customer.created_at)}</dd>
        </dl>
      </section>
      <h2>Subscriptions</h2>
      ${table('Subscriptions', ['Product', 'Status', 'Current period ends'], subscriptionRows, 'No subscriptions.')}
      <h2>Invoices</h2>
      ${table('Invoices', invoiceHeaders(einvoices), invoiceRows(ctx, invoices.data, { einvoices }), 'No invoices.')}${einvoiceFailure(einvoices)}${
        einvoices.any
          ? html`<p><a href="${ctx.base}/einvoices?customer_id=${customer.id}">All e-invoices of this customer</a></p>`
          : ''
      }
      ${payments} ${await historySection(ctx, customer.id)}`;
  },
};
