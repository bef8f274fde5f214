import { html } from '@billing/service';
import { twd, when } from '../html';
import { markup } from '../i18n';
import { type DashboardPage, type PageContext, errorFor, field, formFields, pager, table } from '../page';
import type { Invoice } from './customers';
import { historySection } from './history';
import { isoFrom, text } from './forms';

interface TestClock {
  id: string;
  name: string | null;
  frozen_time: string;
  status: string;
  created_at: string;
}
interface ClockSubscription {
  id: string;
  customer_id: string;
  status: string;
  product: { name: string };
  current_period_end: string;
  test_clock: string | null;
}

/** Subscriptions on test clocks, from the newest 100 (the API has no list of clocks). */
async function subscriptionsOnClocks(ctx: PageContext): Promise<ClockSubscription[]> {
  const list = await ctx.api.v1<{ data: ClockSubscription[] }>('GET', '/subscriptions?limit=100');
  return list.data.filter((s) => s.test_clock);
}

/** One page of the organization's clocks, newest first. */
function pageOfClocks(ctx: PageContext) {
  const after = ctx.query.after ? `&starting_after=${encodeURIComponent(ctx.query.after)}` : '';
  return ctx.api.v1<{ data: TestClock[]; has_more: boolean }>('GET', `/test_clocks?limit=20${after}`);
}

const localInput = (iso: string) => iso.slice(0, 16);

export const testClocksPage: DashboardPage = {
  path: 'test-clocks',
  section: 'test-clocks',
  title: (ctx) => ctx.t('Test clocks'),
  sandboxOnly: true,
  async view(ctx, state) {
    const { t } = ctx;
    if (ctx.query.clock) {
      ctx.res.redirect(303, `${ctx.base}/test-clocks/${encodeURIComponent(ctx.query.clock)}`);
      return html``;
    }
    const clocks = await pageOfClocks(ctx);
    const rows = clocks.data.map(
      (c) =>
        html`<tr>
          <td><a href="${ctx.base}/test-clocks/${c.id}">${c.name ?? c.id}</a></td>
          <td>${when(c.frozen_time)}</td>
          <td>${t(c.status)}</td>
          <td>${when(c.created_at)}</td>
        </tr>`,
    );
    return html`<p>
        ${t(
          'A test clock lets Sandbox subscriptions live on simulated time: advance it to run renewals, retries and trial ends now.',
        )}
      </p>
      ${table(
        t('Test clocks'),
        [t('Clock'), t('Frozen time'), t('Status'), t('Created')],
        rows,
        t('No test clocks yet.'),
      )}${pager(ctx, clocks.has_more, clocks.data.at(-1)?.id)}
      <form class="card" method="get" role="search">
        <label for="clock">${t('Open a clock by id')}</label
        ><input id="clock" name="clock" type="search" placeholder="clock_…" />
        <button type="submit">${t('Open')}</button>
      </form>
      <h2 id="create-clock">${t('Create a test clock')}</h2>
      <form class="card" method="post" aria-labelledby="create-clock">
        ${formFields(ctx, 'create')}${errorFor(state, 'create')}
        ${field('t-name', t('Name (optional)'), { name: 'name', value: state.form?.name })}
        ${field('t-time', t('Start time (UTC)'), { name: 'frozen_time', type: 'datetime-local', value: state.form?.frozen_time ?? localInput(ctx.now().toISOString()), required: true })}
        <div><button type="submit">${t('Create clock')}</button></div>
      </form>`;
  },
  actions: {
    create: {
      async run(ctx, form) {
        const clock = await ctx.api.v1<TestClock>(
          'POST',
          '/test_clocks',
          { name: text(form.name), frozen_time: isoFrom(form.frozen_time) },
          { idempotencyKey: form._idem },
        );
        return {
          notice: ctx.t('Test clock created. Create checkout sessions with test_clock to put subscriptions on it.'),
          redirect: `${ctx.base}/test-clocks/${clock.id}`,
        };
      },
    },
  },
};

export const testClockPage: DashboardPage = {
  path: 'test-clocks/:id',
  section: 'test-clocks',
  title: (ctx) => ctx.t('Test clock'),
  sandboxOnly: true,
  async view(ctx, state) {
    const { t } = ctx;
    const clock = await ctx.api.v1<TestClock>('GET', `/test_clocks/${encodeURIComponent(ctx.params.id!)}`);
    const subscriptions = (await subscriptionsOnClocks(ctx)).filter((s) => s.test_clock === clock.id);
    const invoices = (
      await Promise.all(
        subscriptions.map((s) => ctx.api.v1<{ data: Invoice[] }>('GET', `/invoices?subscription_id=${s.id}&limit=20`)),
      )
    ).flatMap((list) => list.data);
    const subscriptionRows = subscriptions.map(
      (s) =>
        html`<tr>
          <td><a href="${ctx.base}/subscriptions/${s.id}">${s.product.name}</a></td>
          <td>${s.customer_id}</td>
          <td>${s.status}</td>
          <td>${when(s.current_period_end)}</td>
        </tr>`,
    );
    const ran = invoices
      .sort((a, b) => a.created_at.localeCompare(b.created_at))
      .map(
        (i) =>
          html`<tr>
            <td><a href="${ctx.base}/invoices/${i.id}">${i.number}</a></td>
            <td>${i.status}</td>
            <td>${twd(i.total)}</td>
            <td>${when(i.period_start)} – ${when(i.period_end)}</td>
            <td>${when(i.paid_at)}</td>
          </tr>`,
      );
    return html`<section class="card" aria-label="${t('Test clock')}">
        <h2>${clock.name ?? clock.id}</h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${clock.id}</dd>
          <dt>${t('Clock time')}</dt>
          <dd>${when(clock.frozen_time)}</dd>
          <dt>${t('Status')}</dt>
          <dd>
            ${
              clock.status === 'advancing'
                ? html`<span role="status"
                    >${markup(t, 'Advancing: what fell due is running… {refresh}', {
                      refresh: html`<a href="">${t('refresh')}</a>`,
                    })}</span
                  >`
                : t('Ready')
            }
          </dd>
        </dl>
      </section>
      <h2 id="advance">${t('Advance')}</h2>
      <form class="card" method="post" aria-labelledby="advance">
        ${formFields(ctx, 'advance')}${errorFor(state, 'advance')}
        ${field('t-to', t('Advance to (UTC)'), { name: 'frozen_time', type: 'datetime-local', value: state.form?.frozen_time ?? localInput(new Date(Date.parse(clock.frozen_time) + 31 * 86_400_000).toISOString()), required: true })}
        <div><button type="submit">${t('Advance clock')}</button></div>
      </form>
      <h2>${t('Subscriptions on this clock')}</h2>
      ${table(
        t('Subscriptions on this clock'),
        [t('Product'), t('Customer'), t('Status'), t('Period ends')],
        subscriptionRows,
        t('None yet: create a checkout session with this test_clock.'),
      )}
      <h2>${t('What ran')}</h2>
      ${table(
        t('Invoices of subscriptions on this clock'),
        [t('Invoice'), t('Status'), t('Total'), t('Period'), t('Paid')],
        ran,
        t('Nothing has run yet.'),
      )}
      ${await historySection(ctx, clock.id)}`;
  },
  actions: {
    advance: {
      async run(ctx, form) {
        await ctx.api.v1(
          'POST',
          `/test_clocks/${encodeURIComponent(ctx.params.id!)}/advance`,
          { frozen_time: isoFrom(form.frozen_time) },
          { idempotencyKey: form._idem },
        );
        return { notice: ctx.t('Clock advanced; what fell due is running.') };
      },
    },
  },
};
