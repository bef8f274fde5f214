import type { Einvoice as EinvoiceChoice, EinvoiceResource } from '@billing/contracts';
import { ApiFailure, withQuery } from '../client';
import { type Html, html } from '@billing/service';
import { twd, when } from '../html';
import { type Translate, markup } from '../i18n';
import { type DashboardPage, type PageContext, pager, select, table } from '../page';
import { refusalText } from '../refusals';

/** Taiwan e-invoices (電子發票): one per paid one-time order and per paid invoice, issued by billing's worker. */
export type Einvoice = EinvoiceResource;
type EinvoicePage = { data: Einvoice[]; has_more: boolean };

const STATUSES = ['pending', 'issued', 'voided'];

// The words below are English keys of the zh-TW table: the user's words are `t(...)` of them.
export const TAX_TYPE_TEXT: Record<Einvoice['tax_type'], string> = {
  TAXED: 'Taxed 5 % (應稅)',
  ZERO_RATED: 'Zero-rated (零稅率)',
  EXEMPT: 'Exempt (免稅)',
};

const TAX_TYPE_SHORT: Record<Einvoice['tax_type'], string> = {
  TAXED: 'Taxed',
  ZERO_RATED: 'Zero-rated',
  EXEMPT: 'Exempt',
};

const PENDING_ACTION_TEXT: Record<NonNullable<Einvoice['pending_action']>, string> = {
  issue: 'to issue',
  void: 'to void',
  allowance: 'allowance to issue',
};

/** Where the e-invoice went: the carrier and its number, the donation code, or the company. */
export function carrierText(buyer: EinvoiceChoice, t: Translate): string {
  switch (buyer.type) {
    case 'MEMBER':
      return t("Provider's member carrier (by email)");
    case 'MOBILE_BARCODE':
      return t('Mobile barcode {carrier}', { carrier: buyer.carrier });
    case 'CITIZEN_CERTIFICATE':
      return t('Citizen certificate {carrier}', { carrier: buyer.carrier });
    case 'DONATION':
      return t('Donated (code {code})', { code: buyer.donation_code });
    case 'B2B':
      return buyer.company_name
        ? t('Company {name}, tax ID {taxId}', { name: buyer.company_name, taxId: buyer.tax_id })
        : t('Company tax ID {taxId}', { taxId: buyer.tax_id });
    default: {
      const _exhaustive: never = buyer;
      return '';
    }
  }
}

/**
 * Still not issued near its deadline (the deadline monitor warned: `deadline_warned_at`), or past
 * it: what an operator must see.
 */
export function deadlineState(e: Einvoice, now: Date): 'late' | 'warned' | undefined {
  if (e.status !== 'pending') return undefined;
  if (now.getTime() >= new Date(e.deadline).getTime()) return 'late';
  return e.deadline_warned_at ? 'warned' : undefined;
}

const DEADLINE_TEXT = { late: 'Past deadline', warned: 'Deadline near' } as const;

/** The status, what is still to be asked of the provider, and the deadline's warning, as badges. */
export function einvoiceStatus(ctx: PageContext, e: Einvoice): Html {
  const { t } = ctx;
  const late = deadlineState(e, ctx.now());
  return html`<span class="badge">${t(e.status)}</span>${
      e.pending_action ? html` <span class="badge">${t(PENDING_ACTION_TEXT[e.pending_action])}</span>` : ''
    }${late ? html` <span class="badge ${late}">${t(DEADLINE_TEXT[late])}</span>` : ''}`;
}

const einvoiceLink = (ctx: PageContext, e: Einvoice) =>
  html`<a href="${ctx.base}/einvoices/${e.id}">${e.number ?? ctx.t('Not issued yet')}</a>`;

const errorText = (e: Einvoice) => (e.last_error ? `${e.last_error.code}: ${e.last_error.message}` : '');

/** The e-invoices of one customer's invoices, from one call (the newest 100 of the customer's). */
export interface EinvoiceLookup {
  byInvoice: Map<string, Einvoice>;
  /** Whether the customer has any e-invoice (of an invoice or of a one-time order). */
  any: boolean;
  /** False when the customer has more e-invoices than were read: an invoice's may be among them. */
  complete: boolean;
  failure?: string;
  /** The words of the page that read it, for what it says of itself (`einvoiceFailure`). */
  t: Translate;
}

export async function einvoicesOfCustomer(ctx: PageContext, customerId: string): Promise<EinvoiceLookup> {
  try {
    const list = await ctx.api.v1<EinvoicePage>(
      'GET',
      withQuery('/einvoices', { customer_id: customerId, limit: 100 }),
    );
    return {
      byInvoice: new Map(list.data.filter((e) => e.invoice_id).map((e) => [e.invoice_id!, e])),
      any: list.data.length > 0,
      complete: !list.has_more,
      t: ctx.t,
    };
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    return {
      byInvoice: new Map(),
      any: false,
      complete: true,
      failure: refusalText(error, ctx),
      t: ctx.t,
    };
  }
}

/** Invoice tables get an E-invoice column once the customer has any e-invoice. */
export const showsEinvoices = (lookup: EinvoiceLookup | undefined) => !!lookup && (lookup.any || !lookup.complete);

/** An invoice's e-invoice in a table cell: its number (or not yet), status and carrier. */
export function einvoiceCell(
  ctx: PageContext,
  lookup: EinvoiceLookup,
  invoice: { id: string; amount_paid: number },
): Html {
  const e = lookup.byInvoice.get(invoice.id);
  if (e) {
    return html`${einvoiceLink(ctx, e)} ${einvoiceStatus(ctx, e)}
      <div class="muted">${carrierText(e.buyer, ctx.t)}</div>`;
  }
  if (!lookup.complete && invoice.amount_paid > 0) {
    return html`<a href="${ctx.base}/einvoices?invoice_id=${encodeURIComponent(invoice.id)}">${ctx.t('Find')}</a>`;
  }
  return html`—`;
}

/** What could not be read, under the table that would have shown it. */
export const einvoiceFailure = (lookup: EinvoiceLookup | undefined) =>
  lookup?.failure
    ? html`<p class="error" role="alert">
        ${lookup.t('E-invoices could not be read: {why}', { why: lookup.failure })}
      </p>`
    : html``;

/** One invoice's e-invoice, if one was asked for: for the invoice page. */
export async function einvoiceOfInvoice(
  ctx: PageContext,
  invoiceId: string,
): Promise<{ einvoice?: Einvoice; failure?: string }> {
  try {
    const list = await ctx.api.v1<EinvoicePage>('GET', withQuery('/einvoices', { invoice_id: invoiceId, limit: 1 }));
    return { einvoice: list.data[0] };
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    return { failure: refusalText(error, ctx) };
  }
}

/** The facts of one e-invoice: the invoice page shows the short form, its own page all of them. */
export function einvoiceFacts(ctx: PageContext, e: Einvoice, full?: { more: Html }): Html {
  const { t } = ctx;
  return html`<dl class="facts">
    ${
      // Its own page has them in its heading.
      full
        ? ''
        : html`<dt>${t('Number')}</dt>
            <dd>${einvoiceLink(ctx, e)}</dd>
            <dt>${t('Status')}</dt>
            <dd>${einvoiceStatus(ctx, e)}</dd>`
    }
    <dt>${t('Buyer')}</dt>
    <dd>${carrierText(e.buyer, t)}</dd>
    <dt>${t('Random code')}</dt>
    <dd>${e.random_code ?? '—'}</dd>
    <dt>${t('Total')}</dt>
    <dd>
      ${twd(e.total)}${
        e.tax_amount
          ? ` ${t('(sales {sales}, tax {tax})', { sales: twd(e.sales_amount), tax: twd(e.tax_amount) })}`
          : ''
      }
    </dd>
    ${
      full
        ? html`<dt>${t('Tax type')}</dt>
            <dd>${t(TAX_TYPE_TEXT[e.tax_type])}</dd>
            <dt>${t('Description')}</dt>
            <dd>${e.description}</dd>
            <dt>${t('Provider')}</dt>
            <dd>
              ${markup(t, '{provider}, order number {number}', {
                provider: e.provider === 'ecpay' ? 'ECPay' : 'Amego',
                number: html`<code>${e.merchant_order_number}</code>`,
              })}
            </dd>`
        : ''
    }
    <dt>${t('Issued')}</dt>
    <dd>${when(e.issued_at)}</dd>
    ${
      full || e.status === 'pending'
        ? html`<dt>${t('Deadline')}</dt>
            <dd>
              ${when(e.deadline)}${
                e.deadline_warned_at ? html` ${markup(t, '(warned {when})', { when: when(e.deadline_warned_at) })}` : ''
              }
            </dd>`
        : ''
    }
    <dt>${t('Attempts')}</dt>
    <dd>
      ${
        e.pending_action && e.next_attempt_at
          ? markup(t, '{count}, next {when}', { count: e.attempt_count, when: when(e.next_attempt_at) })
          : e.attempt_count
      }
    </dd>
    ${
      e.last_error
        ? html`<dt>${t('Last error')}</dt>
            <dd><span class="einvoice-error">${errorText(e)}</span></dd>`
        : ''
    }
    ${
      e.voided_at
        ? html`<dt>${t('Voided')}</dt>
            <dd>${when(e.voided_at)}</dd>`
        : ''
    }
    ${
      e.amount_allowanced
        ? html`<dt>${t('Allowances')}</dt>
            <dd>${twd(e.amount_allowanced)}</dd>`
        : ''
    }
    ${full?.more ?? ''}
  </dl>`;
}

const forCell = (ctx: PageContext, e: Einvoice) =>
  html`${
    e.invoice_id
      ? html`<a href="${ctx.base}/invoices/${e.invoice_id}">${ctx.t('Invoice')}</a>`
      : markup(ctx.t, 'Order {id}', { id: html`<span class="muted">${e.order_id ?? '—'}</span>` })
  }${e.customer_id ? html`<div><a href="${ctx.base}/customers/${e.customer_id}">${ctx.t('Customer')}</a></div>` : ''}`;

/** A link to the e-invoice settings, in a sentence that sends the user there. */
const settingsLink = (ctx: PageContext, words: string) => html`<a href="${ctx.base}/settings#einvoices">${words}</a>`;

/** Every e-invoice of the environment, newest first; those still pending near their deadline stand out. */
export const einvoicesPage: DashboardPage = {
  path: 'einvoices',
  section: 'einvoices',
  title: (ctx) => ctx.t('E-invoices'),
  async view(ctx) {
    const { t } = ctx;
    const status = STATUSES.includes(ctx.query.status ?? '') ? ctx.query.status! : '';
    const filters: Record<string, string> = {};
    if (status) filters.status = status;
    for (const name of ['customer_id', 'invoice_id'] as const) {
      const value = ctx.query[name]?.trim().slice(0, 100);
      if (value) filters[name] = value;
    }
    const list = await ctx.api.v1<EinvoicePage>(
      'GET',
      withQuery('/einvoices', { ...filters, limit: 25, starting_after: ctx.query.after }),
    );
    const now = ctx.now();
    const behind = list.data.filter((e) => deadlineState(e, now));
    const rows = list.data.map((e) => {
      const late = deadlineState(e, now);
      return html`<tr ${late ? html` class="${late}"` : ''}>
        <td>${einvoiceLink(ctx, e)}</td>
        <td>${einvoiceStatus(ctx, e)}</td>
        <td>${carrierText(e.buyer, t)}</td>
        <td>${twd(e.total)}</td>
        <td>
          ${twd(e.tax_amount)}
          <div class="muted">${t(TAX_TYPE_SHORT[e.tax_type])}</div>
        </td>
        <td>${e.attempt_count}${e.last_error ? html`<div class="einvoice-error">${errorText(e)}</div>` : ''}</td>
        <td>${e.status === 'pending' ? when(e.deadline) : html`<span class="muted">${when(e.deadline)}</span>`}</td>
        <td>${forCell(ctx, e)}</td>
      </tr>`;
    });
    const showAll = html`<a href="${ctx.base}/einvoices">${t('Show all')}</a>`;
    const scope = filters.customer_id
      ? html`<p>
          ${markup(t, 'Customer {id} only.', {
            id: html`<a href="${ctx.base}/customers/${filters.customer_id}">${filters.customer_id}</a>`,
          })}
          ${showAll}
        </p>`
      : filters.invoice_id
        ? html`<p>
            ${markup(t, 'Invoice {id} only.', {
              id: html`<a href="${ctx.base}/invoices/${filters.invoice_id}">${filters.invoice_id}</a>`,
            })}
            ${showAll}
          </p>`
        : '';
    const settings = settingsLink(ctx, t('e-invoice settings'));
    return html`<p class="muted">
        ${markup(
          t,
          'An e-invoice (電子發票) is asked of the provider for every paid one-time order and every paid invoice, and tried again until it answers; a refund voids it or issues an allowance (折讓). The provider is set in {settings}.',
          { settings: settingsLink(ctx, t('Settings')) },
        )}
      </p>
      ${
        behind.length
          ? html`<p class="error" role="alert">
              ${
                behind.length === 1
                  ? markup(
                      t,
                      '1 e-invoice below is still not issued close to or past the deadline (48 hours after payment, 7 days for a company): see the last error, and check the {settings}.',
                      { settings },
                    )
                  : markup(
                      t,
                      '{count} e-invoices below are still not issued close to or past the deadline (48 hours after payment, 7 days for a company): see the last error, and check the {settings}.',
                      { count: behind.length, settings },
                    )
              }
            </p>`
          : ''
      }
      <form class="card" method="get">
        ${scope}${filters.customer_id ? html`<input type="hidden" name="customer_id" value="${filters.customer_id}" />` : ''}${filters.invoice_id ? html`<input type="hidden" name="invoice_id" value="${filters.invoice_id}" />` : ''}
        ${select('status', t('Status'), 'status', [['', t('All')], ...STATUSES.map((s): [string, string] => [s, t(s)])], status)}
        <button type="submit">${t('Filter')}</button>
      </form>
      ${table(
        status ? t('E-invoices {status}', { status: t(status) }) : t('E-invoices'),
        [t('Number'), t('Status'), t('Buyer'), t('Total'), t('Tax'), t('Attempts'), t('Deadline'), t('For')],
        rows,
        status ? t('No {status} e-invoices.', { status: t(status) }) : t('No e-invoices yet.'),
      )}${pager(ctx, list.has_more, list.data.at(-1)?.id, filters)}`;
  },
};

export const einvoicePage: DashboardPage = {
  path: 'einvoices/:id',
  section: 'einvoices',
  title: (ctx) => ctx.t('E-invoice'),
  async view(ctx) {
    const { t } = ctx;
    const e = await ctx.api.v1<Einvoice>('GET', `/einvoices/${encodeURIComponent(ctx.params.id!)}`);
    const late = deadlineState(e, ctx.now());
    const allowances = e.allowances.map(
      (a) =>
        html`<tr>
          <td>${a.number ?? '—'}</td>
          <td>${twd(a.amount)}</td>
          <td>${t(a.status)}</td>
          <td>${when(a.issued_at)}</td>
          <td>${a.refund_id}</td>
        </tr>`,
    );
    const settings = { settings: settingsLink(ctx, t('e-invoice settings')) };
    return html`${
        late
          ? html`<p class="error" role="alert">
              ${
                late === 'late'
                  ? markup(
                      t,
                      'Past its deadline and still not issued: see the last error, and check the {settings}.',
                      settings,
                    )
                  : markup(
                      t,
                      'Close to its deadline and still not issued: see the last error, and check the {settings}.',
                      settings,
                    )
              }
            </p>`
          : ''
      }
      <section class="card" aria-label="${t('E-invoice')}">
        <h2>${e.number ?? t('Not issued yet')} ${einvoiceStatus(ctx, e)}</h2>
        ${einvoiceFacts(ctx, e, {
          more: html`<dt>ID</dt>
            <dd>${e.id}</dd>
            <dt>${t('For')}</dt>
            <dd>
              ${e.invoice_id ? html`<a href="${ctx.base}/invoices/${e.invoice_id}">${e.invoice_id}</a>` : ''}${e.invoice_id && e.order_id ? ', ' : ''}${e.order_id ? t('order {id}', { id: e.order_id }) : ''}
            </dd>
            <dt>${t('Customer')}</dt>
            <dd>
              ${e.customer_id ? html`<a href="${ctx.base}/customers/${e.customer_id}">${e.customer_id}</a>` : '—'}
            </dd>
            <dt>${t('Created')}</dt>
            <dd>${when(e.created_at)}</dd>`,
        })}
      </section>
      <h2>${t('Allowances')}</h2>
      ${table(
        t('Allowances (折讓) of this e-invoice'),
        [t('Number'), t('Amount'), t('Status'), t('Issued'), t('Refund')],
        allowances,
        t('No allowances.'),
      )}`;
  },
};
