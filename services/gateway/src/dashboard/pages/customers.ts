import { ApiFailure } from '../client';
import { type Html, html } from '@billing/service';
import { twd, when } from '../html';
import {
  askedRange,
  type CsvColumns,
  type DayRange,
  everyRow,
  exportName,
  filterForm,
  listPager,
  listSource,
  onePage,
  rangeError,
  rangePage,
  refuseRange,
  sendCsv,
  taipeiIso,
} from '../lists';
import { type DashboardPage, type PageContext, table } from '../page';
import { type EinvoiceLookup, einvoiceCell, einvoiceFailure, einvoicesOfCustomer, showsEinvoices } from './einvoices';
import { creditActions, creditsSection } from './customer-credits';
import { usageSection } from './customer-usage';
import { historySection } from './history';
import { processorName } from './awaiting-payments';
import { refusalText } from '../refusals';

interface Customer {
  id: string;
  email: string;
  name: string | null;
  external_id: string | null;
  status: string;
  created_at: string;
  subscriptions_count?: number;
  orders_count?: number;
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
/** A charge of one of the customer's invoices (billing's). */
interface InvoicePayment {
  amount: number;
  status: string;
  created_at: string;
  invoice_id: string;
  failure_message: string | null;
  processor: string | null;
  processor_reference: string | null;
}
/** A refund, of an order or of an invoice (checkout decides both). */
interface Refund {
  id: string;
  amount: number;
  status: string;
  reason: string | null;
  invoice_id: string | null;
  created_at: string;
}
/** A one-time purchase the customer paid at checkout (checkout's). */
interface Order {
  id: string;
  product: { name: string };
  amount: number;
  amount_refunded: number;
  status: string;
  payment_method: { brand: string; last4: string } | null;
  processor: string;
  processor_reference: string | null;
  refunds: Refund[];
  paid_at: string;
}
/** A row of the customer's payments: either kind, newest first. */
type PaymentRow = { at: string; cells: Html };

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
/** The headers of `invoiceRows` with the same e-invoices, in the user's words when `t` is given. */
export const invoiceHeaders = (einvoices?: EinvoiceLookup, t: PageContext['t'] = (text) => text) =>
  (showsEinvoices(einvoices) ? [...INVOICE_HEADERS, 'E-invoice'] : INVOICE_HEADERS).map((header) => t(header));

export const customersPage: DashboardPage = {
  path: 'customers',
  section: 'customers',
  title: (ctx) => ctx.t('Customers'),
  async view(ctx) {
    const { t } = ctx;
    const q = searchText(ctx);
    const range = askedRange(ctx, 'any-time');
    const filters: Record<string, string> = q ? { q } : {};
    const fields = html`<label for="q">${t('Search by email, name, external id or id')}</label
      ><input id="q" name="q" type="search" value="${q}" />`;
    const form = filterForm(ctx, { range, csv: 'customers.csv', filters, fields, submit: t('Search') });
    if (!range) return html`${form}${rangeError(ctx)}`;
    const page = await onePage(customerSource(ctx, range, q), ctx.query.after, 20);
    const rows = page.rows.map(
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
    const filtered = q || range.from || range.to;
    return html`${form}
    ${table(
      q ? t('Customers matching {q}', { q }) : t('Customers'),
      [t('Email'), t('Name|person'), t('External id'), t('Subscriptions'), t('Status'), t('Created')],
      rows,
      filtered ? t('No customer matches.') : t('No customers yet.'),
    )}${listPager(ctx, page, range, filters)}`;
  },
};

const searchText = (ctx: PageContext) => (ctx.query.q ?? '').trim().slice(0, 100);

/** Customers created in a range whose email, name, external id or id holds `q`, in any case (the admin search). */
const customerSource = (ctx: PageContext, range: DayRange, q: string) =>
  listSource(
    (limit, after) =>
      rangePage<Customer>(ctx, '/customers', range, { query: q || undefined, limit, starting_after: after }),
    (customer) => customer,
  );

const CSV_COLUMNS: CsvColumns<Customer> = [
  ['created_at', (c) => taipeiIso(c.created_at)],
  ['customer_id', (c) => c.id],
  ['email', (c) => c.email],
  ['name', (c) => c.name],
  ['external_id', (c) => c.external_id],
  ['status', (c) => c.status],
  ['subscriptions_count', (c) => c.subscriptions_count],
  ['orders_count', (c) => c.orders_count],
];

/** `.../customers.csv?from=&to=&q=`: every customer created in the range (any time by default), newest first. */
export async function sendCustomersCsv(ctx: PageContext): Promise<void> {
  const range = askedRange(ctx, 'any-time');
  if (!range) return refuseRange(ctx);
  const customers = everyRow(customerSource(ctx, range, searchText(ctx)));
  await sendCsv(ctx, exportName('customers', ctx, range), CSV_COLUMNS, customers);
}

/** A section the admin read endpoints give; where they are not available, says so in place. */
async function optional(ctx: PageContext, title: string, read: () => Promise<Html>): Promise<Html> {
  const { t } = ctx;
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    return html`<h2>${title}</h2>
      <p class="error" role="alert">
        ${t('{title} could not be read: {why}', { title, why: refusalText(error, ctx) })}
      </p>`;
  }
}

/**
 * Every payment of the customer, newest first: their invoices' charges (billing) and their
 * one-time purchases at checkout (checkout), the latest 50 of each.
 */
/**
 * The customer's payments (invoice charges and one-time purchases, newest first, each with the
 * processor's trade when known) and refunds (of those purchases, and of the invoices shown).
 */
async function moneySections(ctx: PageContext, id: string, invoices: Invoice[]): Promise<Html> {
  const query = `environment=${ctx.environment}&limit=50`;
  const refunded = invoices.filter((i) => i.amount_refunded > 0).map((i) => i.id);
  const [charges, orders, invoiceRefunds] = await Promise.all([
    ctx.api.admin<{ data: InvoicePayment[] }>('GET', `/customers/${id}/payments?${query}`),
    ctx.api.admin<{ data: Order[] }>('GET', `/customers/${id}/orders?${query}`),
    refunded.length === 0
      ? { data: [] }
      : ctx.api.admin<{ data: Refund[] }>('GET', `/refunds?${query}&invoices=${refunded.join(',')}`),
  ]);
  const numbers = new Map(invoices.map((i) => [i.id, i.number]));
  return html`${paymentsSection(ctx, charges.data, orders.data, numbers)}
  ${refundsSection(ctx, orders.data, invoiceRefunds.data, numbers)}`;
}

/** The processor's name and its trade, under a payment's reference; nothing when not known. */
const tradeLine = (processor: string | null, reference: string | null) =>
  processor && reference ? html`<div class="muted">${processorName(processor)} <code>${reference}</code></div>` : '';

function paymentsSection(
  ctx: PageContext,
  charges: InvoicePayment[],
  orders: Order[],
  numbers: Map<string, string>,
): Html {
  const { t } = ctx;
  const rows: PaymentRow[] = [
    ...charges.map((p) => ({
      at: p.created_at,
      cells: html`<td>${when(p.created_at)}</td>
        <td>${twd(p.amount)}</td>
        <td>${t(p.status)}</td>
        <td>
          <a href="${ctx.base}/invoices/${p.invoice_id}"
            >${t('Invoice {number}', { number: numbers.get(p.invoice_id) ?? p.invoice_id })}</a
          >${tradeLine(p.processor, p.processor_reference)}
        </td>
        <td>${p.failure_message ?? ''}</td>`,
    })),
    ...orders.map((o) => ({
      at: o.paid_at,
      cells: html`<td>${when(o.paid_at)}</td>
        <td>
          ${twd(o.amount)}${o.amount_refunded ? html` <span class="muted">(${t('refunded {amount}', { amount: twd(o.amount_refunded) })})</span>` : ''}
        </td>
        <td>${t(o.status)}</td>
        <td>
          ${o.product.name} ·
          <code>${o.id}</code>${o.payment_method ? html` · ${o.payment_method.brand} ${o.payment_method.last4}` : ''}
          ${tradeLine(o.processor, o.processor_reference)}
        </td>
        <td></td>`,
    })),
  ].sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
  return html`<h2>${t('Payments')}</h2>
    ${table(
      t('Payments'),
      [t('When'), t('Amount'), t('Status'), t('For'), t('Failure')],
      rows.map(
        (row) =>
          html`<tr>
            ${row.cells}
          </tr>`,
      ),
      t('No payments.'),
    )}`;
}

/** Every refund of the customer's purchases and of the invoices shown, newest first. */
function refundsSection(ctx: PageContext, orders: Order[], invoiceRefunds: Refund[], numbers: Map<string, string>) {
  const { t } = ctx;
  const forInvoice = (r: Refund) => {
    const number = numbers.get(r.invoice_id!) ?? r.invoice_id!;
    return html`<a href="${ctx.base}/invoices/${r.invoice_id}">${t('Invoice {number}', { number })}</a>`;
  };
  const rows = [
    ...orders.flatMap((o) =>
      o.refunds.map((r) => ({ refund: r, target: html`${o.product.name} · <code>${o.id}</code>` })),
    ),
    ...invoiceRefunds.map((r) => ({ refund: r, target: forInvoice(r) })),
  ]
    .sort((a, b) => Date.parse(b.refund.created_at) - Date.parse(a.refund.created_at))
    .map(
      ({ refund: r, target }) =>
        html`<tr>
          <td>${when(r.created_at)}</td>
          <td>${twd(r.amount)}</td>
          <td>${t(r.status)}</td>
          <td>${target} · <code>${r.id}</code></td>
          <td>${r.reason ?? ''}</td>
        </tr>`,
    );
  return html`<h2>${t('Refunds')}</h2>
    ${table(t('Refunds'), [t('When'), t('Amount'), t('Status'), t('For'), t('Reason')], rows, t('No refunds.'))}`;
}

export const customerPage: DashboardPage = {
  path: 'customers/:id',
  section: 'customers',
  title: (ctx) => ctx.t('Customer'),
  async view(ctx, state) {
    const { t } = ctx;
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
    const [payments, credits, usage] = await Promise.all([
      optional(ctx, t('Payments'), () => moneySections(ctx, id, invoices.data)),
      optional(ctx, t('Credits'), () => creditsSection(ctx, state, ctx.params.id!)),
      optional(ctx, t('Usage'), () => usageSection(ctx, ctx.params.id!)),
    ]);
    return html`<section class="card" aria-label="${t('Customer')}">
        <h2>${customer.email}</h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${customer.id}</dd>
          <dt>${t('Name|person')}</dt>
          <dd>${customer.name ?? '—'}</dd>
          <dt>${t('External id')}</dt>
          <dd>${customer.external_id ?? '—'}</dd>
          <dt>${t('Status')}</dt>
          <dd>${customer.status}</dd>
          <dt>${t('Created')}</dt>
          <dd>${when(customer.created_at)}</dd>
        </dl>
      </section>
      <h2>${t('Subscriptions')}</h2>
      ${table(t('Subscriptions'), [t('Product'), t('Status'), t('Current period ends')], subscriptionRows, t('No subscriptions.'))}
      <h2>${t('Invoices')}</h2>
      ${table(t('Invoices'), invoiceHeaders(einvoices, t), invoiceRows(ctx, invoices.data, { einvoices }), t('No invoices.'))}${einvoiceFailure(einvoices)}${
        einvoices.any
          ? html`<p>
              <a href="${ctx.base}/einvoices?customer_id=${customer.id}">${t('All e-invoices of this customer')}</a>
            </p>`
          : ''
      }
      ${payments} ${credits} ${usage} ${await historySection(ctx, customer.id)}`;
  },
  actions: creditActions,
};
