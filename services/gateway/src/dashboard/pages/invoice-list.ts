import { type Html, html } from '@billing/service';
import { twd, when } from '../html';
import {
  askedRange,
  askedStatus,
  type CsvColumns,
  type DayRange,
  everyRow,
  exportName,
  listPager,
  listSource,
  moneyListFilters,
  onePage,
  rangeError,
  rangePage,
  refuseRange,
  sendCsv,
  taipeiIso,
} from '../lists';
import { type DashboardPage, type PageContext, table } from '../page';
import type { Invoice } from './customers';

/** An invoice as billing's admin list gives it: with its customer's email. */
interface ListedInvoice extends Invoice {
  order_id: string | null;
  amount_due: number;
  customer_email: string | null;
}

/** The invoice statuses, as the Invoice contract names them. */
const STATUSES = ['draft', 'open', 'paid', 'void', 'uncollectible'] as const;
const SHOWN = 50;

/** The organization's invoices created in a range (of a status, if asked), newest first. */
const invoiceSource = (ctx: PageContext, range: DayRange, status: string) =>
  listSource(
    (limit, after) =>
      rangePage<ListedInvoice>(ctx, '/invoices', range, { status: status || undefined, limit, starting_after: after }),
    (invoice) => invoice,
  );

export const invoicesPage: DashboardPage = {
  path: 'invoices',
  section: 'payments',
  title: (ctx) => ctx.t('Invoices'),
  async view(ctx) {
    const { t } = ctx;
    const { range, status, filters, form } = moneyListFilters(ctx, 'invoices', STATUSES);
    if (!range) return html`${form}${rangeError(ctx)}`;
    const page = await onePage(invoiceSource(ctx, range, status), ctx.query.after, SHOWN);
    return html`${form}
    ${table(
      t('Invoices from {from} to {to}', { from: range.from, to: range.to }),
      [t('Number'), t('Customer'), t('Status'), t('Total'), t('Paid'), t('Refunded'), t('Created')],
      page.rows.map((invoice) => invoiceRow(ctx, invoice)),
      t('No invoices in these days.'),
    )}${listPager(ctx, page, range, filters)}`;
  },
};

function invoiceRow(ctx: PageContext, i: ListedInvoice): Html {
  return html`<tr>
    <td><a href="${ctx.base}/invoices/${i.id}">${i.number}</a></td>
    <td><a href="${ctx.base}/customers/${i.customer_id}">${i.customer_email ?? i.customer_id}</a></td>
    <td>${ctx.t(i.status)}</td>
    <td>${twd(i.total)}</td>
    <td>${twd(i.amount_paid)}</td>
    <td>${twd(i.amount_refunded)}</td>
    <td>${when(i.created_at)}</td>
  </tr>`;
}

const CSV_COLUMNS: CsvColumns<ListedInvoice> = [
  ['created_at', (i) => taipeiIso(i.created_at)],
  ['invoice_id', (i) => i.id],
  ['number', (i) => i.number],
  ['status', (i) => i.status],
  ['customer_id', (i) => i.customer_id],
  ['customer_email', (i) => i.customer_email],
  ['subscription_id', (i) => i.subscription_id],
  ['order_id', (i) => i.order_id],
  ['total_twd', (i) => i.total],
  ['amount_paid_twd', (i) => i.amount_paid],
  ['amount_due_twd', (i) => i.amount_due],
  ['amount_refunded_twd', (i) => i.amount_refunded],
  ['period_start', (i) => taipeiIso(i.period_start)],
  ['period_end', (i) => taipeiIso(i.period_end)],
  ['paid_at', (i) => taipeiIso(i.paid_at)],
];

/** `.../invoices.csv?from=&to=&status=`: every invoice of the range, newest first, a page at a time. */
export async function sendInvoicesCsv(ctx: PageContext): Promise<void> {
  const range = askedRange(ctx, 'this-month');
  if (!range) return refuseRange(ctx);
  const invoices = everyRow(invoiceSource(ctx, range, askedStatus(ctx, STATUSES)));
  await sendCsv(ctx, exportName('invoices', ctx, range), CSV_COLUMNS, invoices);
}
