import { html } from '@billing/service';
import { twd, when } from '../html';
import { type DashboardPage, errorFor, field, formFields, table } from '../page';
import { type Invoice, refundable } from './customers';
import { einvoiceFacts, einvoiceOfInvoice } from './einvoices';
import { historySection } from './history';
import { num } from './forms';

type InvoiceWithLines = Invoice & {
  subtotal: number;
  discount_amount: number;
  lines: Array<{ description: string; amount: number; kind: string }>;
};

/** What each kind of invoice line charges for, in the merchant's words. */
const LINE_KIND_WORDS: Record<string, string> = {
  subscription: 'Plan',
  proration: 'Proration',
  customer_balance: 'Customer balance',
  usage: 'Usage',
};

export const invoicePage: DashboardPage = {
  path: 'invoices/:id',
  section: 'customers',
  title: (ctx) => ctx.t('Invoice'),
  async view(ctx, state) {
    const { t } = ctx;
    const [i, einvoice] = await Promise.all([
      ctx.api.v1<InvoiceWithLines>('GET', `/invoices/${encodeURIComponent(ctx.params.id!)}`),
      einvoiceOfInvoice(ctx, ctx.params.id!),
    ]);
    const lines = i.lines.map(
      (l) =>
        html`<tr>
          <td>${l.description}</td>
          <td>${t(LINE_KIND_WORDS[l.kind] ?? l.kind)}</td>
          <td>${twd(l.amount)}</td>
        </tr>`,
    );
    return html`<section class="card" aria-label="${t('Invoice')}">
        <h2>${i.number} <span class="badge">${t(i.status)}</span></h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${i.id}</dd>
          <dt>${t('Customer')}</dt>
          <dd><a href="${ctx.base}/customers/${i.customer_id}">${i.customer_id}</a></dd>
          ${
            i.subscription_id
              ? html`<dt>${t('Subscription')}</dt>
                  <dd><a href="${ctx.base}/subscriptions/${i.subscription_id}">${i.subscription_id}</a></dd>`
              : ''
          }
          <dt>${t('Subtotal')}</dt>
          <dd>${twd(i.subtotal)}</dd>
          <dt>${t('Discount')}</dt>
          <dd>${twd(i.discount_amount)}</dd>
          <dt>${t('Total')}</dt>
          <dd>${twd(i.total)}</dd>
          <dt>${t('Paid')}</dt>
          <dd>${twd(i.amount_paid)} ${when(i.paid_at)}</dd>
          <dt>${t('Refunded')}</dt>
          <dd>${twd(i.amount_refunded)}</dd>
          <dt>${t('Period')}</dt>
          <dd>${when(i.period_start)} – ${when(i.period_end)}</dd>
        </dl>
      </section>
      ${
        einvoice.einvoice
          ? html`<h2 id="einvoice">${t('E-invoice')}</h2>
              <section class="card" aria-labelledby="einvoice">${einvoiceFacts(ctx, einvoice.einvoice)}</section>`
          : einvoice.failure
            ? html`<h2 id="einvoice">${t('E-invoice')}</h2>
                <p class="error" role="alert">
                  ${t('The e-invoice could not be read: {why}', { why: einvoice.failure })}
                </p>`
            : ''
      }
      <h2>${t('Lines')}</h2>
      ${table(t('Invoice lines'), [t('Description'), t('Kind'), t('Amount')], lines, t('Nothing yet.'))}
      ${
        refundable(i)
          ? html`<h2 id="refund">${t('Refund')}</h2>
              <form class="card" method="post" aria-labelledby="refund" data-confirm="${t('Refund this invoice?')}">
                ${formFields(ctx, 'refund')}${errorFor(state, 'refund')}${field(
                  'r-amount',
                  t('Amount in TWD (empty: everything not refunded yet, {amount})', {
                    amount: twd(i.amount_paid - i.amount_refunded),
                  }),
                  { name: 'amount', type: 'number', extra: html` min="1" max="${i.amount_paid - i.amount_refunded}"` },
                )}
                <div><button type="submit" class="danger">${t('Refund')}</button></div>
              </form>`
          : ''
      }
      ${await historySection(ctx, i.id)}`;
  },
  actions: {
    refund: {
      async run(ctx, form) {
        await ctx.api.v1(
          'POST',
          '/refunds',
          { invoice_id: ctx.params.id, amount: num(form.amount) },
          { idempotencyKey: form._idem },
        );
        return { notice: ctx.t('Refund issued.') };
      },
    },
  },
};
