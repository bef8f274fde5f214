import { type Html, html } from '@billing/service';
import { ApiFailure, withQuery } from '../client';
import { twd, when } from '../html';
import { type DashboardPage, type PageContext, table, customerLink } from '../page';
import type { Invoice } from './customers';
import { processorName } from './awaiting-payments';
import type { Einvoice } from './einvoices';

/** The record pages an id opens, by its prefix. */
const RECORD_PAGES: Record<string, { path: string; read: string; noun: string }> = {
  cus: { path: 'customers', read: '/customers', noun: 'Customer' },
  sub: { path: 'subscriptions', read: '/subscriptions', noun: 'Subscription' },
  in: { path: 'invoices', read: '/invoices', noun: 'Invoice' },
};

/** What the search shows of a checkout session: its order, what was bought, by whom. */
interface CheckoutSession {
  id: string;
  order_id: string;
  status: string;
  product: { name: string };
  amount_total: number;
  customer_id: string | null;
  customer_email: string | null;
  subscription_id: string | null;
  completed_at: string | null;
}

/** A paid one-time purchase, as checkout's admin read answers it. */
interface Order {
  id: string;
  product: { name: string };
  amount: number;
  status: string;
  customer_id: string | null;
  customer_email: string | null;
  processor: string;
  processor_reference: string | null;
  paid_at: string;
}

/** A refund, as the public API answers it. */
interface Refund {
  id: string;
  amount: number;
  status: string;
  order_id: string | null;
  invoice_id: string | null;
  created_at: string;
}

interface Customer {
  id: string;
  email: string;
  name: string | null;
  external_id: string | null;
}

/**
 * The header's one search box: a record's id (`cus_`, `sub_`, `in_`) finds that record, a
 * checkout session's (`cs_`) its order, an order's (`ord_`) that purchase, a refund's (`re_`)
 * what it gave back and from what, an invoice number (`INV-000042`, any case) its invoice,
 * an e-invoice number (`AB-12345678`, any case, the hyphen optional) its e-invoice, and any text
 * the customers whose email, name, external id or id contains it.
 */
export const searchPage: DashboardPage = {
  path: 'search',
  section: 'search',
  title: (ctx) => ctx.t('Search'),
  async view(ctx) {
    const { t } = ctx;
    const q = (ctx.query.q ?? '').trim().slice(0, 100);
    if (!q)
      return html`<p class="muted">
        ${t('Type an email, a name, an id, an invoice number or an e-invoice number in the search box.')}
      </p>`;
    const [record, checkout, order, refund, invoice, einvoice, customers] = await Promise.all([
      recordOf(ctx, q),
      checkoutOf(ctx, q),
      orderOf(ctx, q),
      refundOf(ctx, q),
      invoiceOf(ctx, q),
      einvoiceOf(ctx, q),
      customersOf(ctx, q),
    ]);
    const found = [record, checkout, order, refund, invoice, einvoice].filter((item): item is Html => item !== null);
    const rows = customers.map(
      (c) =>
        html`<tr>
          <td><a href="${ctx.base}/customers/${c.id}">${c.email}</a></td>
          <td>${c.name ?? '—'}</td>
          <td>${c.external_id ?? '—'}</td>
        </tr>`,
    );
    const none = found.length === 0 && rows.length === 0;
    return html`${none ? html`<p role="status">${t('Nothing matches {q}.', { q })}</p>` : ''}
    ${
      found.length > 0
        ? html`<ul class="found">
            ${found.map((item) => html`<li>${item}</li>`)}
          </ul>`
        : ''
    }
    ${rows.length > 0 ? table(t('Customers matching {q}', { q }), [t('Email'), t('Name|person'), t('External id')], rows) : ''}`;
  },
};

/** The record an id names, when it is this organization's in this environment. */
async function recordOf(ctx: PageContext, q: string): Promise<Html | null> {
  const page = RECORD_PAGES[/^([a-z]+)_[A-Za-z0-9]+$/.exec(q)?.[1] ?? ''];
  if (!page) return null;
  const exists = await ctx.api.v1('GET', `${page.read}/${encodeURIComponent(q)}`).then(
    () => true,
    (error: unknown) => absent(error),
  );
  return exists ? html`<a href="${ctx.base}/${page.path}/${q}">${ctx.t(page.noun)} ${q}</a>` : null;
}

async function invoiceOf(ctx: PageContext, q: string): Promise<Html | null> {
  if (!/^INV-\d+$/i.test(q)) return null;
  const found = await ctx.api.admin<{ data: Invoice[] }>(
    'GET',
    withQuery('/invoices', { environment: ctx.environment, number: q }),
  );
  const invoice = found.data[0];
  return invoice
    ? html`<a href="${ctx.base}/invoices/${invoice.id}">${ctx.t('Invoice {number}', { number: invoice.number })}</a> ·
        ${twd(invoice.total)} · ${invoice.status}`
    : null;
}

/** A checkout session by its id: the order it made (or is making), with its buyer. */
async function checkoutOf(ctx: PageContext, q: string): Promise<Html | null> {
  if (!/^cs_[A-Za-z0-9]+$/.test(q)) return null;
  const session = await ctx.api
    .v1<CheckoutSession>('GET', `/checkout/sessions/${encodeURIComponent(q)}`)
    .catch((error: unknown) => absent(error));
  if (!session) return null;
  const { t } = ctx;
  const buyer = customerLink(ctx, session.customer_id, session.customer_email);
  const subscription = session.subscription_id
    ? html` · <a href="${ctx.base}/subscriptions/${session.subscription_id}">${t('Subscription')}</a>`
    : '';
  return html`${t('Checkout {id}', { id: session.id })} · ${t('Order')} <code>${session.order_id}</code> ·
    ${session.product.name} · ${twd(session.amount_total)} · ${session.status}
    ${session.completed_at ? when(session.completed_at) : ''} · ${buyer}${subscription}`;
}

/** A paid one-time purchase by its order id, with who paid and the processor's trade. */
async function orderOf(ctx: PageContext, q: string): Promise<Html | null> {
  if (!/^ord_[A-Za-z0-9]+$/.test(q)) return null;
  const order = await ctx.api
    .admin<Order>('GET', withQuery(`/orders/${encodeURIComponent(q)}`, { environment: ctx.environment }))
    .catch((error: unknown) => absent(error));
  if (!order) return null;
  const buyer = customerLink(ctx, order.customer_id, order.customer_email);
  const trade = order.processor_reference
    ? html` · ${processorName(order.processor)} <code>${order.processor_reference}</code>`
    : '';
  return html`${ctx.t('Order')} <code>${order.id}</code> · ${order.product.name} · ${twd(order.amount)} ·
    ${ctx.t(order.status)} ${when(order.paid_at)} · ${buyer}${trade}`;
}

/** A refund by its id: how much, where it stands, and the invoice or order it gives back from. */
async function refundOf(ctx: PageContext, q: string): Promise<Html | null> {
  if (!/^re_[A-Za-z0-9]+$/.test(q)) return null;
  const refund = await ctx.api
    .v1<Refund>('GET', `/refunds/${encodeURIComponent(q)}`)
    .catch((error: unknown) => absent(error));
  if (!refund) return null;
  const { t } = ctx;
  const from = refund.invoice_id
    ? html`<a href="${ctx.base}/invoices/${refund.invoice_id}">${t('Invoice')}</a>`
    : html`${t('Order')} <code>${refund.order_id ?? ''}</code>`;
  return html`${t('Refund')} <code>${refund.id}</code> · ${twd(refund.amount)} · ${t(refund.status)}
    ${when(refund.created_at)} · ${from}`;
}

/** An e-invoice number as buyers read it off a receipt: two letters, eight digits, often a hyphen between. */
export const einvoiceNumberOf = (q: string): string | null =>
  /^([A-Za-z]{2})-?(\d{8})$/.test(q) ? q.replace('-', '').toUpperCase() : null;

async function einvoiceOf(ctx: PageContext, q: string): Promise<Html | null> {
  const number = einvoiceNumberOf(q);
  if (!number) return null;
  const found = await ctx.api.v1<{ data: Einvoice[] }>('GET', withQuery('/einvoices', { number, limit: 1 }));
  const einvoice = found.data[0];
  if (!einvoice) return null;
  const source = einvoice.invoice_id
    ? html` · <a href="${ctx.base}/invoices/${einvoice.invoice_id}">${ctx.t('Invoice')}</a>`
    : '';
  return html`<a href="${ctx.base}/einvoices/${einvoice.id}">${ctx.t('E-invoice {number}', { number })}</a> ·
    ${twd(einvoice.total)} · ${einvoice.status}${source}`;
}

async function customersOf(ctx: PageContext, q: string): Promise<Customer[]> {
  const found = await ctx.api.admin<{ data: Customer[] }>(
    'GET',
    withQuery('/customers', { environment: ctx.environment, query: q, limit: 20 }),
  );
  return found.data;
}

/** A 404 (or a malformed id the API refuses) is no record; anything else is a failure to show. */
function absent(error: unknown): false {
  if (error instanceof ApiFailure && (error.status === 404 || error.status === 400)) return false;
  throw error;
}
