import { type Html, html } from '@billing/service';
import { ApiFailure, withQuery } from '../client';
import { twd } from '../html';
import { type DashboardPage, type PageContext, table } from '../page';
import type { Invoice } from './customers';

/** The record pages an id opens, by its prefix. */
const RECORD_PAGES: Record<string, { path: string; read: string; noun: string }> = {
  cus: { path: 'customers', read: '/customers', noun: 'Customer' },
  sub: { path: 'subscriptions', read: '/subscriptions', noun: 'Subscription' },
  in: { path: 'invoices', read: '/invoices', noun: 'Invoice' },
};

interface Customer {
  id: string;
  email: string;
  name: string | null;
  external_id: string | null;
}

/**
 * The header's one search box: a record's id (`cus_`, `sub_`, `in_`) finds that record, an
 * invoice number (`INV-000042`, any case) its invoice, and any text the customers whose email,
 * name, external id or id contains it.
 */
export const searchPage: DashboardPage = {
  path: 'search',
  section: 'search',
  title: (ctx) => ctx.t('Search'),
  async view(ctx) {
    const { t } = ctx;
    const q = (ctx.query.q ?? '').trim().slice(0, 100);
    if (!q)
      return html`<p class="muted">${t('Type an email, a name, an id or an invoice number in the search box.')}</p>`;
    const [record, invoice, customers] = await Promise.all([recordOf(ctx, q), invoiceOf(ctx, q), customersOf(ctx, q)]);
    const found = [record, invoice].filter((item): item is Html => item !== null);
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
    ${rows.length > 0 ? table(t('Customers matching {q}', { q }), [t('Email'), t('Name'), t('External id')], rows) : ''}`;
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
