import { type Html, formatDateTime, html } from '@billing/service';
import { withQuery } from '../client';
import { twd, when } from '../html';
import { type DashboardPage, type PageContext, table } from '../page';

/** Billing's charge of an invoice, paid or declined. */
interface InvoiceCharge {
  id: string;
  invoice_id: string;
  customer_id: string;
  customer_email: string | null;
  amount: number;
  status: string;
  failure_message: string | null;
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
  paid_at: string;
}
type ListPage<T> = { data: T[]; has_more: boolean };

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
  failure: '',
});

const SHOWN = 100;
const EXPORT_PAGE = 100;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The range asked for, as Taipei calendar days (`from`, `to` inclusive), and the instants that
 * bound it; by default the current month in Taipei. Null when a day is malformed or out of order.
 */
export function paymentRange(ctx: PageContext): { from: string; to: string; start: string; end: string } | null {
  const today = new Date(ctx.now().getTime() + 8 * 3_600_000).toISOString().slice(0, 10);
  const from = ctx.query.from ?? `${today.slice(0, 8)}01`;
  const to = ctx.query.to ?? today;
  if (!DATE.test(from) || !DATE.test(to) || from > to) return null;
  const start = new Date(`${from}T00:00:00+08:00`);
  const end = new Date(new Date(`${to}T00:00:00+08:00`).getTime() + 86_400_000);
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return null;
  return { from, to, start: start.toISOString(), end: end.toISOString() };
}

/** Every payment of the organization in a range: invoice charges (billing) and one-time purchases (checkout). */
export const paymentsPage: DashboardPage = {
  path: 'payments',
  section: 'payments',
  title: (ctx) => ctx.t('Payments'),
  async view(ctx) {
    const { t } = ctx;
    const range = paymentRange(ctx);
    const form = rangeForm(ctx, range);
    if (!range)
      return html`${form}
        <p class="error" role="alert">${t('Choose two days, the first not after the last.')}</p>`;
    const [charges, orders] = await Promise.all([chargesPage(ctx, range, SHOWN), ordersPage(ctx, range, SHOWN)]);
    const payments = [...charges.data.map(fromCharge), ...orders.data.map(fromOrder)].sort(newestFirst).slice(0, SHOWN);
    const more = charges.has_more || orders.has_more || charges.data.length + orders.data.length > SHOWN;
    return html`${form}
    ${table(
      t('Payments from {from} to {to}', range),
      [t('When'), t('Amount'), t('Status'), t('Customer'), t('For'), t('Method'), t('Failure')],
      payments.map((p) => paymentRow(ctx, p)),
      t('No payments in these days.'),
    )}${more ? html`<p class="muted">${t('Showing the latest {count}: the CSV export has every one.', { count: SHOWN })}</p>` : ''}`;
  },
};

function rangeForm(ctx: PageContext, range: ReturnType<typeof paymentRange>): Html {
  const { t } = ctx;
  const value = (name: 'from' | 'to') => range?.[name] ?? ctx.query[name] ?? '';
  const csv = range ? `${ctx.base}/payments.csv?${new URLSearchParams({ from: range.from, to: range.to })}` : null;
  return html`<form class="card" method="get">
    <label for="from">${t('From (Taipei day)')}</label
    ><input id="from" name="from" type="date" value="${value('from')}" /> <label for="to">${t('To (Taipei day)')}</label
    ><input id="to" name="to" type="date" value="${value('to')}" />
    <div>
      <button type="submit">${t('Show')}</button>${csv ? html` <a href="${csv}" download>${t('Export CSV')}</a>` : ''}
    </div>
  </form>`;
}

function paymentRow(ctx: PageContext, p: Payment): Html {
  const { t } = ctx;
  const customer = p.customerId
    ? html`<a href="${ctx.base}/customers/${p.customerId}">${p.customerEmail ?? p.customerId}</a>`
    : (p.customerEmail ?? '—');
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
    <td>${p.method}</td>
    <td>${p.failure}</td>
  </tr>`;
}

const newestFirst = (a: Payment, b: Payment) => Date.parse(b.at) - Date.parse(a.at);

type Range = NonNullable<ReturnType<typeof paymentRange>>;

const chargesPage = (ctx: PageContext, range: Range, limit: number, after?: string) =>
  ctx.api.admin<ListPage<InvoiceCharge>>(
    'GET',
    withQuery('/payments', {
      environment: ctx.environment,
      from: range.start,
      to: range.end,
      limit,
      starting_after: after,
    }),
  );

const ordersPage = (ctx: PageContext, range: Range, limit: number, after?: string) =>
  ctx.api.admin<ListPage<OneTimeOrder>>(
    'GET',
    withQuery('/orders', {
      environment: ctx.environment,
      from: range.start,
      to: range.end,
      limit,
      starting_after: after,
    }),
  );

/** Every item of a paged list, a page at a time. */
async function* everyItem<T extends { id: string }>(read: (after?: string) => Promise<ListPage<T>>): AsyncGenerator<T> {
  let after: string | undefined;
  for (;;) {
    const page = await read(after);
    yield* page.data;
    if (!page.has_more || page.data.length === 0) return;
    after = page.data.at(-1)!.id;
  }
}

/** Two lists each newest first, as one newest first. */
async function* merged(a: AsyncGenerator<Payment>, b: AsyncGenerator<Payment>): AsyncGenerator<Payment> {
  let left = await a.next();
  let right = await b.next();
  while (!left.done || !right.done) {
    if (right.done || (!left.done && newestFirst(left.value, right.value) <= 0)) {
      yield left.value as Payment;
      left = await a.next();
    } else {
      yield right.value;
      right = await b.next();
    }
  }
}

async function* mapped<T>(items: AsyncGenerator<T>, to: (item: T) => Payment): AsyncGenerator<Payment> {
  for await (const item of items) yield to(item);
}

const CSV_HEADER = [
  'time_taipei',
  'kind',
  'status',
  'amount_twd',
  'amount_refunded_twd',
  'customer_id',
  'customer_email',
  'reference',
  'item',
  'method',
  'failure_message',
];

/**
 * A cell as spreadsheets read it safely: quoted when it holds a comma, quote or line break, and
 * a leading `=`, `+`, `-` or `@` (a formula to a spreadsheet) made text with a `'`.
 */
export function csvCell(value: string | number): string {
  const text = typeof value === 'number' ? String(value) : /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const csvLine = (p: Payment) =>
  [
    formatDateTime(p.at),
    p.kind,
    p.status,
    p.amount,
    p.refunded,
    p.customerId ?? '',
    p.customerEmail ?? '',
    p.reference,
    p.item,
    p.method,
    p.failure,
  ]
    .map(csvCell)
    .join(',') + '\r\n';

/**
 * `.../payments.csv?from=&to=`: every payment of the range, newest first, streamed a page of
 * each list at a time, so a large merchant's export holds a page in memory, not the month.
 */
export async function sendPaymentsCsv(ctx: PageContext): Promise<void> {
  const range = paymentRange(ctx);
  if (!range) {
    ctx.res.status(400).type('text').send(ctx.t('Choose two days, the first not after the last.'));
    return;
  }
  const charges = mapped(
    everyItem((after) => chargesPage(ctx, range, EXPORT_PAGE, after)),
    fromCharge,
  );
  const orders = mapped(
    everyItem((after) => ordersPage(ctx, range, EXPORT_PAGE, after)),
    fromOrder,
  );
  const name = `payments-${ctx.envSlug}-${range.from}-to-${range.to}.csv`;
  ctx.res.status(200).type('text/csv; charset=utf-8').set('Content-Disposition', `attachment; filename="${name}"`);
  // A byte-order mark: Excel opens UTF-8 (Chinese names, NT$) as UTF-8 only with one.
  ctx.res.write(`\uFEFF${CSV_HEADER.join(',')}\r\n`);
  for await (const payment of merged(charges, orders)) {
    if (!ctx.res.write(csvLine(payment))) await new Promise((resolve) => ctx.res.once('drain', resolve));
  }
  ctx.res.end();
}
