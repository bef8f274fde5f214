import { type Html, html } from '@billing/service';
import { twd, when } from '../html';
import {
  askedRange,
  askedStatus,
  type CsvColumns,
  type DayRange,
  exportName,
  listPager,
  listSource,
  type ListSource,
  mergedPage,
  mergedRows,
  moneyListFilters,
  rangeError,
  rangePage,
  refuseRange,
  sendCsv,
  taipeiIso,
} from '../lists';
import { type DashboardPage, type PageContext, table, customerLink } from '../page';
import { awaitingPayments, processorName } from './awaiting-payments';

/** Billing's charge of an invoice, paid or declined. */
interface InvoiceCharge {
  id: string;
  invoice_id: string;
  customer_id: string;
  customer_email: string | null;
  amount: number;
  status: string;
  failure_message: string | null;
  /** Who charged it and its trade; null for a decline and for charges recorded before they were named. */
  processor: string | null;
  processor_reference: string | null;
  created_at: string;
}
/** Checkout's one-time purchase. */
interface OneTimeOrder {
  id: string;
  product: { name: string };
  customer_id: string | null;
  customer_email: string | null;
  amount: number;
  amount_refunded: number;
  status: string;
  payment_method: { brand: string; last4: string } | null;
  processor: string;
  processor_reference: string | null;
  paid_at: string;
}
/** One payment of either kind, as the list and the export show it. */
interface Payment {
  at: string;
  kind: 'invoice' | 'one_time';
  status: string;
  amount: number;
  refunded: number;
  customerId: string | null;
  customerEmail: string | null;
  reference: string;
  item: string;
  method: string;
  /** The processor and its name for the trade (ECPay's MerchantTradeNo...); empty when none is known. */
  processor: string;
  processorReference: string;
  failure: string;
}

const fromCharge = (c: InvoiceCharge): Payment => ({
  at: c.created_at,
  kind: 'invoice',
  status: c.status,
  amount: c.amount,
  refunded: 0,
  customerId: c.customer_id,
  customerEmail: c.customer_email,
  reference: c.invoice_id,
  item: '',
  method: '',
  processor: c.processor ?? '',
  processorReference: c.processor_reference ?? '',
  failure: c.failure_message ?? '',
});

const fromOrder = (o: OneTimeOrder): Payment => ({
  at: o.paid_at,
  kind: 'one_time',
  status: o.status,
  amount: o.amount,
  refunded: o.amount_refunded,
  customerId: o.customer_id,
  customerEmail: o.customer_email,
  reference: o.id,
  item: o.product.name,
  method: o.payment_method ? `${o.payment_method.brand} ${o.payment_method.last4}` : '',
  processor: o.processor,
  processorReference: o.processor_reference ?? '',
  failure: '',
});

const SHOWN = 100;

/** The status filter: paid (invoice charges that succeeded, and every one-time order) or failed charges. */
const STATUSES = ['paid', 'failed'] as const;

/**
 * The payments of a range, each list newest first: billing's invoice charges, and checkout's
 * one-time orders unless only failed payments are asked (an order is recorded once paid).
 */
function paymentSources(ctx: PageContext, range: DayRange, status: string): ListSource<Payment>[] {
  const chargeStatus = status === 'paid' ? 'succeeded' : status || undefined;
  const charges = listSource(
    (limit, after) =>
      rangePage<InvoiceCharge>(ctx, '/payments', range, { status: chargeStatus, limit, starting_after: after }),
    fromCharge,
  );
  const orders = listSource(
    (limit, after) => rangePage<OneTimeOrder>(ctx, '/orders', range, { limit, starting_after: after }),
    fromOrder,
  );
  return status === 'failed' ? [charges] : [charges, orders];
}

/** Every payment of the organization in a range: invoice charges (billing) and one-time purchases (checkout). */
export const paymentsPage: DashboardPage = {
  path: 'payments',
  section: 'payments',
  title: (ctx) => ctx.t('Payments'),
  async view(ctx) {
    const { t } = ctx;
    const { range, status, filters, form } = moneyListFilters(ctx, 'payments', STATUSES);
    if (!range) return html`${form}${rangeError(ctx)}`;
    const [page, waiting] = await Promise.all([
      mergedPage(paymentSources(ctx, range, status), ctx.query.after, SHOWN),
      // The payments still to come, above the month's, on its first page.
      status || ctx.query.after ? '' : awaitingPayments(ctx),
    ]);
    return html`${form}${waiting}
    ${table(
      t('Payments from {from} to {to}', { from: range.from, to: range.to }),
      [t('When'), t('Amount'), t('Status'), t('Customer'), t('For'), t('Method'), t('Failure')],
      page.rows.map((p) => paymentRow(ctx, p)),
      t('No payments in these days.'),
    )}${listPager(ctx, page, range, filters)}`;
  },
};

function paymentRow(ctx: PageContext, p: Payment): Html {
  const { t } = ctx;
  const customer = customerLink(ctx, p.customerId, p.customerEmail);
  const reference =
    p.kind === 'invoice'
      ? html`<a href="${ctx.base}/invoices/${p.reference}">${t('Invoice')}</a>`
      : html`${p.item} · <code>${p.reference}</code>`;
  return html`<tr>
    <td>${when(p.at)}</td>
    <td>
      ${twd(p.amount)}${p.refunded ? html` <span class="muted">(${t('refunded {amount}', { amount: twd(p.refunded) })})</span>` : ''}
    </td>
    <td>${t(p.status)}</td>
    <td>${customer}</td>
    <td>${reference}</td>
    <td>
      ${p.method}${
        p.processorReference
          ? html`<div class="muted">${processorName(p.processor)} <code>${p.processorReference}</code></div>`
          : ''
      }
    </td>
    <td>${p.failure}</td>
  </tr>`;
}

const CSV_COLUMNS: CsvColumns<Payment> = [
  ['time_taipei', (p) => taipeiIso(p.at)],
  ['kind', (p) => p.kind],
  ['status', (p) => p.status],
  ['amount_twd', (p) => p.amount],
  ['amount_refunded_twd', (p) => p.refunded],
  ['customer_id', (p) => p.customerId],
  ['customer_email', (p) => p.customerEmail],
  ['reference', (p) => p.reference],
  ['item', (p) => p.item],
  ['method', (p) => p.method],
  ['failure_message', (p) => p.failure],
  ['processor', (p) => p.processor],
  ['processor_reference', (p) => p.processorReference],
];

/**
 * `.../payments.csv?from=&to=&status=`: every payment of the range, newest first, streamed a
 * page of each list at a time, so a large merchant's export holds a page in memory, not the month.
 */
export async function sendPaymentsCsv(ctx: PageContext): Promise<void> {
  const range = askedRange(ctx, 'this-month');
  if (!range) return refuseRange(ctx);
  const status = askedStatus(ctx, STATUSES);
  const payments = mergedRows(paymentSources(ctx, range, status));
  await sendCsv(ctx, exportName('payments', ctx, range), CSV_COLUMNS, payments);
}
