import { ApiFailure } from '../client';
import type { PendingCharge } from '@billing/contracts';
import { type Html, html } from '@billing/service';
import { twd, when } from '../html';
import type { Translate } from '../i18n';
import { type DashboardPage, type PageContext, table } from '../page';
import { refusalText } from '../refusals';

interface Day {
  date: string;
  mrr: number;
  active_subscriptions: number;
  new_subscriptions: number;
  churned_subscriptions: number;
  payments_count: number;
  payments_amount: number;
  failed_payments_count: number;
}

const WIDTH = 320;

/** The calendar day in Asia/Taipei (UTC+8, no daylight saving) `daysBack` days before `now`. */
const taipeiDate = (now: Date, daysBack: number) =>
  new Date(now.getTime() + 8 * 3_600_000 - daysBack * 86_400_000).toISOString().slice(0, 10);

const HEIGHT = 120;

/** An inline SVG line chart with its numbers in a table for screen readers and keyboards. */
function chart(
  t: Translate,
  title: string,
  days: Day[],
  series: Array<{ label: string; value: (d: Day) => number; color: string }>,
  format = (n: number) => String(n),
): Html {
  const max = Math.max(1, ...days.flatMap((d) => series.map((s) => s.value(d))));
  const x = (i: number) => (days.length <= 1 ? WIDTH / 2 : (i / (days.length - 1)) * WIDTH);
  const y = (v: number) => HEIGHT - (v / max) * (HEIGHT - 10);
  const lines = series.map(
    (s) =>
      html`<polyline
        fill="none"
        stroke="${s.color}"
        stroke-width="2"
        points="${days.map((d, i) => `${x(i).toFixed(1)},${y(s.value(d)).toFixed(1)}`).join(' ')}"
      />`,
  );
  const last = days.at(-1);
  const summary = series
    .map((s) =>
      t('{label}: {value} on {date}', {
        label: s.label,
        value: last ? format(s.value(last)) : 0,
        date: last?.date ?? '—',
      }),
    )
    .join(t('; '));
  return html`<figure class="card">
    <figcaption>${title}</figcaption>
    <svg
      class="chart"
      viewBox="0 -4 ${WIDTH} ${HEIGHT + 8}"
      role="img"
      aria-label="${t('{title}. {summary}. Highest {max}.', { title, summary, max: format(max) })}"
    >
      <line x1="0" y1="${HEIGHT}" x2="${WIDTH}" y2="${HEIGHT}" stroke="#c5cad6" />
      ${lines}
    </svg>
    <p class="muted">
      ${series.map((s) => html`<svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${s.color}" /></svg> ${s.label} `)}·
      ${t('highest {max}', { max: format(max) })}
    </p>
    <details>
      <summary>${t('Numbers')}</summary>
      <div class="table">
        <table>
          <caption class="muted">
            ${t('{title} per day', { title })}
          </caption>
          <thead>
            <tr>
              <th scope="col">${t('Day')}</th>
              ${series.map((s) => html`<th scope="col">${s.label}</th>`)}
            </tr>
          </thead>
          <tbody>
            ${days.map(
              (d) =>
                html`<tr>
                  <td>${d.date}</td>
                  ${series.map((s) => html`<td>${format(s.value(d))}</td>`)}
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </details>
  </figure>`;
}

export const overviewPage: DashboardPage = {
  path: '',
  section: 'overview',
  title: (ctx) => ctx.t('Overview'),
  async view(ctx) {
    const { t } = ctx;
    const range = ctx.query.range === '90' ? 90 : ctx.query.range === '365' ? 365 : 30;
    let days: Day[];
    try {
      const metrics = await ctx.api.admin<{ series: Day[] }>(
        'GET',
        `/metrics?environment=${ctx.environment}&from=${taipeiDate(ctx.now(), range - 1)}&to=${taipeiDate(ctx.now(), 0)}`,
      );
      days = metrics.series.slice(-range);
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error;
      return html`<p class="error" role="alert">
        ${t('The metrics could not be read: {why}', { why: refusalText(error, ctx) })}
      </p>`;
    }
    const last = days.at(-1);
    const sum = (f: (d: Day) => number) => days.reduce((total, d) => total + f(d), 0);
    return html`${await unmatchedPaymentsSection(ctx)}${await pendingChargesSection(ctx)}
      <nav aria-label="${t('Period')}">
        <p>
          ${t('Period:')}
          ${[30, 90, 365].map((n) => html`<a href="?range=${n}" ${n === range ? html` aria-current="page"` : ''}>${t('{n} days', { n })}</a> `)}
        </p>
      </nav>
      <section class="card" aria-label="${t('Totals')}">
        <dl class="facts">
          <dt>${t('Monthly recurring revenue')}</dt>
          <dd>${twd(last?.mrr ?? 0)}</dd>
          <dt>${t('Active subscriptions')}</dt>
          <dd>${last?.active_subscriptions ?? 0}</dd>
          <dt>${t('New / churned ({days} days)', { days: range })}</dt>
          <dd>${sum((d) => d.new_subscriptions)} / ${sum((d) => d.churned_subscriptions)}</dd>
          <dt>${t('Payments ({days} days)', { days: range })}</dt>
          <dd>
            ${t('{count} ({amount}), {failed} failed', {
              count: sum((d) => d.payments_count),
              amount: twd(sum((d) => d.payments_amount)),
              failed: sum((d) => d.failed_payments_count),
            })}
          </dd>
        </dl>
      </section>
      <div class="charts">
        ${chart(t, t('Monthly recurring revenue'), days, [{ label: t('MRR'), value: (d) => d.mrr, color: '#1d4ed8' }], twd)}
        ${chart(t, t('Active subscriptions'), days, [{ label: t('Active'), value: (d) => d.active_subscriptions, color: '#15803d' }])}
        ${chart(t, t('New and churned subscriptions'), days, [
          { label: t('New'), value: (d) => d.new_subscriptions, color: '#15803d' },
          { label: t('Churned'), value: (d) => d.churned_subscriptions, color: '#b91c1c' },
        ])}
        ${chart(t, t('Payments and failed payments'), days, [
          { label: t('Payments'), value: (d) => d.payments_count, color: '#1d4ed8' },
          { label: t('Failed'), value: (d) => d.failed_payments_count, color: '#b91c1c' },
        ])}
      </div>`;
  },
};

interface UnmatchedPayment {
  checkout_session_id: string | null;
  invoice_id: string | null;
  trade_no: string;
  amount: number;
  reason:
    'paid_after_expiry' | 'paid_other_trade' | 'not_paid_at_processor' | 'period_not_invoiced' | 'paid_after_deadline';
  created_at: string;
}

const UNMATCHED_REASONS: Record<UnmatchedPayment['reason'], string> = {
  paid_after_expiry: 'Paid after the checkout expired',
  paid_other_trade: 'Paid under a trade the checkout no longer waited for',
  not_paid_at_processor: 'Recorded as paid here; the processor does not show it paid',
  period_not_invoiced: "A card plan's period the processor charged that no invoice took",
  paid_after_deadline:
    "A renewal's transfer the processor took after its deadline, when the invoice had given up on it",
};

/**
 * Payments the processor and the platform disagree about (docs/payments.md): shown only when
 * there are some, since each is money to give back, or an order to check, in the processor's site.
 */
async function unmatchedPaymentsSection(ctx: PageContext): Promise<Html | string> {
  const { t } = ctx;
  let unmatched: UnmatchedPayment[];
  try {
    unmatched = (
      await ctx.api.admin<{ data: UnmatchedPayment[] }>('GET', `/unmatched_payments?environment=${ctx.envSlug}`)
    ).data;
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    return html`<p class="error" role="alert">
      ${t('The unmatched payments could not be read: {why}', { why: refusalText(error, ctx) })}
    </p>`;
  }
  if (unmatched.length === 0) return '';
  const title = t('Payments that do not match the processor');
  return html`<section class="card" aria-label="${title}">
    <h2>${title}</h2>
    <p>
      ${t(
        "Money the processor took that no order or invoice records: refund it in the processor's own site. A payment recorded here that the processor does not show paid: check it there before delivering.",
      )}
    </p>
    ${table(
      title,
      [t('Reported at'), t('Why'), t('Checkout or invoice'), t('Amount'), t('Processor trade')],
      unmatched.map(
        (payment) =>
          html`<tr>
            <td>${when(payment.created_at)}</td>
            <td>${t(UNMATCHED_REASONS[payment.reason])}</td>
            <td>
              ${
                payment.invoice_id
                  ? html`<a href="${ctx.base}/invoices/${payment.invoice_id}"><code>${payment.invoice_id}</code></a>`
                  : html`<code>${payment.checkout_session_id}</code>`
              }
            </td>
            <td>${twd(payment.amount)}</td>
            <td><code>${payment.trade_no}</code></td>
          </tr>`,
      ),
    )}
  </section>`;
}

const PURPOSES: Record<PendingCharge['purpose'], string> = {
  invoice: 'Invoice attempt',
  first_period: 'First period of a new subscription',
  switch: 'Plan switch',
};

/**
 * Charges whose outcome is not recorded yet (docs/lost-answers.md): shown only when there are
 * some, since one listed for long means the processor cannot be reached.
 */
async function pendingChargesSection(ctx: PageContext): Promise<Html | string> {
  const { t } = ctx;
  let pending: PendingCharge[];
  try {
    pending = (await ctx.api.admin<{ data: PendingCharge[] }>('GET', `/pending_charges?environment=${ctx.environment}`))
      .data;
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    return html`<p class="error" role="alert">
      ${t('The pending charges could not be read: {why}', { why: refusalText(error, ctx) })}
    </p>`;
  }
  if (pending.length === 0) return '';
  return html`<section class="card" aria-label="${t('Charges being confirmed')}">
    <h2>${t('Charges being confirmed with the processor')}</h2>
    <p>${t('Their answer was lost; they are asked about until their outcome is known, and never charged again.')}</p>
    <div class="table">
      <table>
        <thead>
          <tr>
            <th scope="col">${t('Asked at')}</th>
            <th scope="col">${t('For')}</th>
            <th scope="col">${t('Record')}</th>
            <th scope="col">${t('Amount')}</th>
            <th scope="col">${t('Processor key')}</th>
          </tr>
        </thead>
        <tbody>
          ${pending.map(
            (charge) =>
              html`<tr>
                <td>${when(charge.asked_at)}</td>
                <td>${t(PURPOSES[charge.purpose])}</td>
                <td><code>${charge.subject}</code></td>
                <td>${twd(charge.amount)}</td>
                <td><code>${charge.idempotency_key}</code></td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}
