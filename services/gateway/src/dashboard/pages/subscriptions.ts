import { html } from '@billing/service';
import { twd, when } from '../html';
import type { Translate } from '../i18n';
import {
  askedRange,
  askedStatus,
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
  statusSelect,
  taipeiIso,
} from '../lists';
import { type DashboardPage, type PageContext, buttonForm, errorFor, formFields, select, table } from '../page';
import { type Invoice, invoiceHeaders, invoiceRows, refundable } from './customers';
import { einvoiceFailure, einvoicesOfCustomer } from './einvoices';
import { historySection } from './history';
import { listProducts } from './products';
import { num } from './forms';

interface Subscription {
  id: string;
  customer_id: string;
  /** In the admin list only: whom it bills. */
  customer_email?: string | null;
  customer_name?: string | null;
  product: { id: string; name: string };
  status: string;
  price: number;
  interval: string;
  interval_count: number;
  current_period_start: string;
  current_period_end: string;
  cancel_at_period_end: boolean;
  canceled_at: string | null;
  /** Prices billed per unit of a meter's usage (docs/usage.md); absent or empty for a flat plan. */
  metered_prices?: { meter: string }[];
  trial_end: string | null;
  test_clock: string | null;
  created_at: string;
}

interface SwitchPreview {
  switch_type: string;
  execution_mode: string;
  current_plan: { product_name: string; amount: number };
  new_plan: { product_name: string; amount: number };
  proration: { credit_amount: number; charge_amount: number; net_amount: number } | null;
  effective_date: string;
  next_billing_date: string;
  can_proceed: boolean;
  blocking_reason: string | null;
}

const STATUSES = ['ACTIVE', 'TRIAL', 'PAST_DUE', 'CANCELED'];

/** A subscription's price and interval count, by interval (as the API writes it). */
const EVERY: Record<string, string> = {
  month: '{price} every {count} month',
  year: '{price} every {count} year',
  week: '{price} every {count} week',
  day: '{price} every {count} day',
};
const priceText = (t: Translate, s: Subscription) => {
  const every = EVERY[s.interval];
  const price = twd(s.price);
  return every ? t(every, { price, count: s.interval_count }) : `${price} every ${s.interval_count} ${s.interval}`;
};
type SubscriptionPage = { data: Subscription[]; has_more: boolean };

export const subscriptionsPage: DashboardPage = {
  path: 'subscriptions',
  section: 'subscriptions',
  title: (ctx) => ctx.t('Subscriptions'),
  async view(ctx) {
    const { t } = ctx;
    const status = askedStatus(ctx, STATUSES);
    const range = askedRange(ctx, 'any-time');
    const filters: Record<string, string> = status ? { status } : {};
    const fields = statusSelect(
      ctx,
      STATUSES.map((s): [string, string] => [s, s]),
      status,
    );
    const form = filterForm(ctx, { range, csv: 'subscriptions.csv', filters, fields, submit: t('Filter') });
    if (!range) return html`${form}${rangeError(ctx)}`;
    const page = await onePage(subscriptionSource(ctx, range, status), ctx.query.after, 20);
    const rows = page.rows.map(
      (s) =>
        html`<tr>
          <td><a href="${ctx.base}/subscriptions/${s.id}">${s.product.name}</a></td>
          <td>
            <a href="${ctx.base}/customers/${s.customer_id}">${s.customer_email ?? s.customer_id}</a>${
              s.customer_name ? html`<div class="muted">${s.customer_name}</div>` : ''
            }
          </td>
          <td>${s.cancel_at_period_end ? t('{status} (ends at period end)', { status: s.status }) : s.status}</td>
          <td>${twd(s.price)}</td>
          <td>${when(s.current_period_end)}</td>
        </tr>`,
    );
    return html`${form}
    ${table(
      status ? t('{status} subscriptions', { status }) : t('Subscriptions'),
      [t('Product'), t('Customer'), t('Status'), t('Price'), t('Period ends')],
      rows,
      t('No subscriptions.'),
    )}${listPager(ctx, page, range, filters)}`;
  },
};

/** The admin list: subscriptions created in a range (of a status, if asked), each with its customer's email and name. */
const subscriptionSource = (ctx: PageContext, range: DayRange, status: string) =>
  listSource(
    (limit, after) =>
      rangePage<Subscription>(ctx, '/subscriptions', range, {
        status: status || undefined,
        limit,
        starting_after: after,
      }),
    (subscription) => subscription,
  );

const CSV_COLUMNS: CsvColumns<Subscription> = [
  ['created_at', (s) => taipeiIso(s.created_at)],
  ['subscription_id', (s) => s.id],
  ['status', (s) => s.status],
  ['customer_id', (s) => s.customer_id],
  ['customer_email', (s) => s.customer_email],
  ['customer_name', (s) => s.customer_name],
  ['product_id', (s) => s.product.id],
  ['product_name', (s) => s.product.name],
  ['price_twd', (s) => s.price],
  ['interval', (s) => s.interval],
  ['interval_count', (s) => s.interval_count],
  ['current_period_start', (s) => taipeiIso(s.current_period_start)],
  ['current_period_end', (s) => taipeiIso(s.current_period_end)],
  ['trial_end', (s) => taipeiIso(s.trial_end)],
  ['cancel_at_period_end', (s) => s.cancel_at_period_end],
  ['canceled_at', (s) => taipeiIso(s.canceled_at)],
];

/** `.../subscriptions.csv?from=&to=&status=`: every subscription created in the range (any time by default), newest first. */
export async function sendSubscriptionsCsv(ctx: PageContext): Promise<void> {
  const range = askedRange(ctx, 'any-time');
  if (!range) return refuseRange(ctx);
  const subscriptions = everyRow(subscriptionSource(ctx, range, askedStatus(ctx, STATUSES)));
  await sendCsv(ctx, exportName('subscriptions', ctx, range), CSV_COLUMNS, subscriptions);
}

const LIVE = ['ACTIVE', 'TRIAL', 'PAST_DUE'];

export const subscriptionPage: DashboardPage = {
  path: 'subscriptions/:id',
  section: 'subscriptions',
  title: (ctx) => ctx.t('Subscription'),
  async view(ctx, state) {
    const { t } = ctx;
    const id = encodeURIComponent(ctx.params.id!);
    const subscription = ctx.api.v1<Subscription>('GET', `/subscriptions/${id}`);
    const [s, invoices, products, einvoices] = await Promise.all([
      subscription,
      ctx.api.v1<{ data: Invoice[] }>('GET', `/invoices?subscription_id=${id}&limit=50`),
      listProducts(ctx),
      // The subscription's invoices' e-invoices are among its customer's: one call for the table.
      subscription.then((found) => einvoicesOfCustomer(ctx, found.customer_id)),
    ]);
    const live = LIVE.includes(s.status.toUpperCase());
    const targets = products.filter((p) => p.type === 'SUBSCRIPTION' && p.id !== s.product.id);
    const target = ctx.query.target_product_id;
    let preview = html``;
    if (target) {
      const p = await ctx.api.v1<SwitchPreview>(
        'GET',
        `/subscriptions/${id}/switch-preview?target_product_id=${encodeURIComponent(target)}`,
      );
      preview = html`<section class="card" aria-labelledby="preview-title">
        <h3 id="preview-title">${t('Switch preview')}</h3>
        <dl class="facts">
          <dt>${t('Change')}</dt>
          <dd>${p.current_plan.product_name} → ${p.new_plan.product_name} (${p.switch_type}, ${p.execution_mode})</dd>
          <dt>${t('Credit for unused days')}</dt>
          <dd>${twd(p.proration?.credit_amount ?? 0)}</dd>
          <dt>${t('Charge now')}</dt>
          <dd>${twd(p.proration?.charge_amount ?? 0)}</dd>
          <dt>${t('Net')}</dt>
          <dd>${twd(p.proration?.net_amount ?? 0)}</dd>
          <dt>${t('Takes effect')}</dt>
          <dd>${when(p.effective_date)}</dd>
          <dt>${t('Next billing')}</dt>
          <dd>${when(p.next_billing_date)}</dd>
        </dl>
        ${
          p.can_proceed
            ? html`<form method="post">
                ${formFields(ctx, 'switch')}<input type="hidden" name="target_product_id" value="${target}" /><button
                  type="submit"
                >
                  ${t('Switch to {plan}', { plan: p.new_plan.product_name })}
                </button>
              </form>`
            : html`<p class="error" role="alert">
                ${t('This switch cannot proceed: {why}.', { why: p.blocking_reason ?? t('not allowed') })}
              </p>`
        }
      </section>`;
    }
    return html`<section class="card" aria-label="${t('Subscription')}">
        <h2>${s.product.name} <span class="badge">${s.status}</span></h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${s.id}</dd>
          <dt>${t('Customer')}</dt>
          <dd><a href="${ctx.base}/customers/${s.customer_id}">${s.customer_id}</a></dd>
          <dt>${t('Price')}</dt>
          <dd>${priceText(t, s)}</dd>
          <dt>${t('Current period')}</dt>
          <dd>${when(s.current_period_start)} – ${when(s.current_period_end)}</dd>
          <dt>${t('Trial ends')}</dt>
          <dd>${when(s.trial_end)}</dd>
          <dt>${t('Cancels at period end')}</dt>
          <dd>${s.cancel_at_period_end ? t('Yes') : t('No')}</dd>
          <dt>${t('Canceled')}</dt>
          <dd>${when(s.canceled_at)}</dd>
          ${
            s.test_clock
              ? html`<dt>${t('Test clock')}</dt>
                  <dd><a href="${ctx.base}/test-clocks?clock=${s.test_clock}">${s.test_clock}</a></dd>`
              : ''
          }
        </dl>
        ${errorFor(state, 'cancel')}${errorFor(state, 'resume')}
        ${
          live && !s.cancel_at_period_end
            ? html`${buttonForm(ctx, 'cancel', t('Cancel at period end'), { at_period_end: 'true' }, { confirm: t('Cancel at the end of the paid period?') })}${buttonForm(
                ctx,
                'cancel',
                t('Cancel now'),
                { at_period_end: 'false' },
                { confirm: t('Cancel now? Nothing is refunded.'), danger: true },
              )}${
                s.metered_prices?.length
                  ? buttonForm(
                      ctx,
                      'cancel',
                      t('Cancel now and bill usage'),
                      { at_period_end: 'false', invoice_now: 'true' },
                      {
                        confirm: t("Cancel now, and bill this period's usage not billed yet on a final invoice?"),
                        danger: true,
                      },
                    )
                  : ''
              }`
            : ''
        }
        ${s.cancel_at_period_end ? buttonForm(ctx, 'resume', t('Resume')) : ''}
      </section>
      ${
        live
          ? html`<h2 id="switch-plan">${t('Switch plan')}</h2>
              <form class="card" method="get" aria-labelledby="switch-plan">
                ${errorFor(state, 'switch')}${
                  targets.length
                    ? html`${select(
                          'target',
                          t('New plan'),
                          'target_product_id',
                          targets.map((p) => [p.id, t('{name} ({price})', { name: p.name, price: twd(p.price) })]),
                          target,
                        )}
                        <div><button type="submit">${t('Preview the switch')}</button></div>`
                    : html`<p class="muted">${t('No other subscription product to switch to.')}</p>`
                }
              </form>
              ${preview}`
          : ''
      }
      <h2 id="invoices">${t('Invoices')}</h2>
      ${errorFor(state, 'refund')}${table(
        t('Invoices of this subscription'),
        [...invoiceHeaders(einvoices, t), t('Refund')],
        invoiceRows(ctx, invoices.data, {
          einvoices,
          lastCell: (invoice) =>
            refundable(invoice)
              ? buttonForm(
                  ctx,
                  'refund',
                  t('Refund'),
                  { invoice_id: invoice.id },
                  {
                    confirm: t('Refund {number} in full?', { number: invoice.number }),
                    accessibleName: t('Refund {number}', { number: invoice.number }),
                  },
                )
              : html``,
        }),
        t('No invoices.'),
      )}${einvoiceFailure(einvoices)}
      ${await historySection(ctx, s.id)}`;
  },
  actions: {
    cancel: {
      async run(ctx, form) {
        await ctx.api.v1(
          'POST',
          `/subscriptions/${encodeURIComponent(ctx.params.id!)}/cancel`,
          // invoice_now: the usage not billed yet, on a final invoice at once (a metered plan's "cancel now").
          {
            at_period_end: form.at_period_end !== 'false',
            ...(form.invoice_now === 'true' ? { invoice_now: true } : {}),
          },
          { idempotencyKey: form._idem },
        );
        return {
          notice:
            form.at_period_end === 'false'
              ? ctx.t('Subscription canceled.')
              : ctx.t('Subscription will end at the end of its period.'),
        };
      },
    },
    resume: {
      async run(ctx, form) {
        await ctx.api.v1(
          'POST',
          `/subscriptions/${encodeURIComponent(ctx.params.id!)}/resume`,
          {},
          { idempotencyKey: form._idem },
        );
        return { notice: ctx.t('Subscription resumed.') };
      },
    },
    switch: {
      async run(ctx, form) {
        await ctx.api.v1(
          'POST',
          `/subscriptions/${encodeURIComponent(ctx.params.id!)}/switch`,
          { target_product_id: form.target_product_id },
          { idempotencyKey: form._idem },
        );
        return {
          notice: ctx.t('Plan switched.'),
          redirect: `${ctx.base}/subscriptions/${encodeURIComponent(ctx.params.id!)}`,
        };
      },
    },
    refund: {
      async run(ctx, form) {
        await ctx.api.v1(
          'POST',
          '/refunds',
          { invoice_id: form.invoice_id, amount: num(form.amount) },
          { idempotencyKey: form._idem },
        );
        return { notice: ctx.t('Refund issued.') };
      },
    },
  },
};
