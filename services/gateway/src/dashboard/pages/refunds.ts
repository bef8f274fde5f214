import { type Html, html } from '@billing/service';
import { withQuery } from '../client';
import { twd, when } from '../html';
import {
  askedRange,
  askedStatus,
  type CsvColumns,
  type DayRange,
  everyRow,
  exportName,
  type ListPage,
  listPager,
  type ListSource,
  moneyListFilters,
  onePage,
  rangeError,
  rangePage,
  refuseRange,
  sendCsv,
  taipeiIso,
} from '../lists';
import { type DashboardPage, type PageContext, table, customerLink } from '../page';

/** A refund as checkout's admin list gives it: with the buyer and product of the order it refunds, if any. */
interface ListedRefund {
  id: string;
  amount: number;
  status: string;
  reason: string | null;
  failure_reason: string | null;
  order_id: string | null;
  invoice_id: string | null;
  created_at: string;
  customer_id: string | null;
  customer_email: string | null;
  product_name: string | null;
}
/** An invoice a refund names, as billing's admin list gives it. */
interface RefundedInvoice {
  id: string;
  number: string;
  customer_id: string;
  customer_email: string | null;
}
/** A refund with whom it paid back: the invoice's customer (billing's) when it refunds an invoice. */
type Refund = ListedRefund & { invoice_number: string | null };

const STATUSES = ['pending', 'succeeded', 'failed'] as const;
const SHOWN = 50;

/**
 * Every refund of a range, newest first: checkout decides every refund, of orders and of
 * invoices (decision 0009), and lists them; billing names the customer and number of the
 * invoices among each page, in one call a page.
 */
function refundSource(ctx: PageContext, range: DayRange, status: string): ListSource<Refund> {
  return async (limit, after) => {
    const page = await rangePage<ListedRefund>(ctx, '/refunds', range, {
      status: status || undefined,
      limit,
      starting_after: after,
    });
    const invoices = await invoicesNamed(ctx, page.data);
    const rows = page.data.map((refund) => ({ id: refund.id, row: withInvoice(refund, invoices) }));
    return { rows, hasMore: page.has_more };
  };
}

/** The invoices a page of refunds names, by id. */
async function invoicesNamed(ctx: PageContext, refunds: ListedRefund[]): Promise<Map<string, RefundedInvoice>> {
  const ids = [...new Set(refunds.flatMap((refund) => (refund.invoice_id ? [refund.invoice_id] : [])))];
  if (ids.length === 0) return new Map();
  const invoices = await ctx.api.admin<ListPage<RefundedInvoice>>(
    'GET',
    withQuery('/invoices', { environment: ctx.environment, ids: ids.join(','), limit: ids.length }),
  );
  return new Map(invoices.data.map((invoice) => [invoice.id, invoice]));
}

function withInvoice(refund: ListedRefund, invoices: Map<string, RefundedInvoice>): Refund {
  const invoice = refund.invoice_id ? invoices.get(refund.invoice_id) : undefined;
  if (!invoice) return { ...refund, invoice_number: null };
  return {
    ...refund,
    invoice_number: invoice.number,
    customer_id: invoice.customer_id,
    customer_email: invoice.customer_email ?? refund.customer_email,
  };
}

export const refundsPage: DashboardPage = {
  path: 'refunds',
  section: 'payments',
  title: (ctx) => ctx.t('Refunds'),
  async view(ctx) {
    const { t } = ctx;
    const { range, status, filters, form } = moneyListFilters(ctx, 'refunds', STATUSES);
    if (!range) return html`${form}${rangeError(ctx)}`;
    const page = await onePage(refundSource(ctx, range, status), ctx.query.after, SHOWN);
    return html`${form}
    ${table(
      t('Refunds from {from} to {to}', { from: range.from, to: range.to }),
      [t('When'), t('Amount'), t('Status'), t('Customer'), t('For'), t('Reason'), t('Failure')],
      page.rows.map((refund) => refundRow(ctx, refund)),
      t('No refunds in these days.'),
    )}${listPager(ctx, page, range, filters)}`;
  },
};

function refundRow(ctx: PageContext, r: Refund): Html {
  const { t } = ctx;
  const customer = customerLink(ctx, r.customer_id, r.customer_email);
  const invoice = r.invoice_number ? t('Invoice {number}', { number: r.invoice_number }) : t('Invoice');
  const refunded = r.invoice_id
    ? html`<a href="${ctx.base}/invoices/${r.invoice_id}">${invoice}</a>`
    : html`${r.product_name ?? ''} · <code>${r.order_id ?? ''}</code>`;
  return html`<tr>
    <td>${when(r.created_at)}</td>
    <td>${twd(r.amount)}</td>
    <td>${t(r.status)}</td>
    <td>${customer}</td>
    <td>${refunded}</td>
    <td>${r.reason ?? ''}</td>
    <td>${r.failure_reason ?? ''}</td>
  </tr>`;
}

const CSV_COLUMNS: CsvColumns<Refund> = [
  ['created_at', (r) => taipeiIso(r.created_at)],
  ['refund_id', (r) => r.id],
  ['status', (r) => r.status],
  ['amount_twd', (r) => r.amount],
  ['reason', (r) => r.reason],
  ['failure_reason', (r) => r.failure_reason],
  ['kind', (r) => (r.invoice_id ? 'invoice' : 'order')],
  ['invoice_id', (r) => r.invoice_id],
  ['invoice_number', (r) => r.invoice_number],
  ['order_id', (r) => r.order_id],
  ['item', (r) => r.product_name],
  ['customer_id', (r) => r.customer_id],
  ['customer_email', (r) => r.customer_email],
];

/** `.../refunds.csv?from=&to=&status=`: every refund of the range, newest first, a page at a time. */
export async function sendRefundsCsv(ctx: PageContext): Promise<void> {
  const range = askedRange(ctx, 'this-month');
  if (!range) return refuseRange(ctx);
  const refunds = everyRow(refundSource(ctx, range, askedStatus(ctx, STATUSES)));
  await sendCsv(ctx, exportName('refunds', ctx, range), CSV_COLUMNS, refunds);
}
