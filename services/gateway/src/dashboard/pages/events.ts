import { PUBLIC_EVENT_TYPES, WEBHOOK_EVENT_RETENTION_DAYS, recordStreamOf } from '@billing/contracts';
import { type Html, html } from '@billing/service';
import { ApiFailure, withQuery } from '../client';
import { when } from '../html';
import { type DashboardPage, type PageContext, field, pager, select, table } from '../page';
import { historySection } from './history';
import { refusalText } from '../refusals';

/** A public event as webhooks carry it (GET .../webhook_events). */
interface WebhookEvent {
  id: string;
  type: string;
  created_at: string;
  data: { object: { id: string } };
}
interface Delivery {
  id: string;
  endpoint_id: string;
  status: string;
  attempt_count: number;
  created_at: string;
}

/** The dashboard's record pages by id prefix, and whether the page shows the record's history. */
const RECORD_PAGES = [
  { prefix: 'cus_', path: 'customers', history: true },
  { prefix: 'sub_', path: 'subscriptions', history: true },
  { prefix: 'in_', path: 'invoices', history: true },
  { prefix: 'prod_', path: 'products', history: true },
  { prefix: 'promo_', path: 'promotion-codes', history: true },
  { prefix: 'einv_', path: 'einvoices', history: false },
];

/** The page of the record `id` names, if the dashboard has one (a subscription schedule, `sub_sched_`, has none). */
export function recordPage(ctx: PageContext, id: string): { href: string; history: boolean } | undefined {
  if (id.startsWith('sub_sched_')) return undefined;
  const page = RECORD_PAGES.find((candidate) => id.startsWith(candidate.prefix));
  return page && { href: `${ctx.base}/${page.path}/${encodeURIComponent(id)}`, history: page.history };
}

const recordLink = (ctx: PageContext, id: string): Html => {
  const page = recordPage(ctx, id);
  return page ? html`<a href="${page.href}">${id}</a>` : html`${id}`;
};
const eventPath = (ctx: PageContext, id: string) => `${ctx.base}/events/${encodeURIComponent(id)}`;

/** The list's filters from the page's query: a known type, a record id as typed (the API checks it). */
function filtersOf(ctx: PageContext): Record<string, string> {
  const filters: Record<string, string> = {};
  const type = ctx.query.type ?? '';
  if ((PUBLIC_EVENT_TYPES as readonly string[]).includes(type)) filters.type = type;
  const recordId = ctx.query.record_id?.trim();
  if (recordId) filters.record_id = recordId;
  return filters;
}

function filterForm(ctx: PageContext, filters: Record<string, string>): Html {
  const { t } = ctx;
  const types = PUBLIC_EVENT_TYPES.map((type): [string, string] => [type, type]);
  return html`<form class="card" method="get">
    ${select('ev-type', t('Type'), 'type', [['', t('All types')], ...types], filters.type)}
    ${field('ev-record', t('Record id'), {
      name: 'record_id',
      value: filters.record_id,
      hint: t('A customer, subscription, invoice or checkout session id: cus_…, sub_…, in_…, cs_…'),
    })}
    <div>
      <button type="submit">${t('Filter')}</button>${
        Object.keys(filters).length ? html` <a href="${ctx.base}/events">${t('Show all')}</a>` : ''
      }
    </div>
  </form>`;
}

/** The organization's events in this environment, newest first, by type and record. */
export const eventsPage: DashboardPage = {
  path: 'events',
  section: 'events',
  title: (ctx) => ctx.t('Events'),
  async view(ctx) {
    const { t } = ctx;
    const filters = filtersOf(ctx);
    const intro = html`<p class="muted">
        ${t(
          'What happened in this environment, as webhooks and Kafka carry it: every event of the last {days} days, newest first.',
          { days: WEBHOOK_EVENT_RETENTION_DAYS },
        )}
      </p>
      ${filterForm(ctx, filters)}`;
    let list: { data: WebhookEvent[]; has_more: boolean };
    try {
      list = await ctx.api.admin(
        'GET',
        withQuery('/webhook_events', {
          environment: ctx.environment,
          ...filters,
          limit: 25,
          starting_after: ctx.query.after,
        }),
      );
    } catch (error) {
      // A record id the API refuses (too long, a control character): the form stays to fix it.
      if (!(error instanceof ApiFailure) || error.status !== 400) throw error;
      return html`${intro}
        <p class="error" role="alert">${refusalText(error, ctx)}</p>`;
    }
    const rows = list.data.map(
      (e) =>
        html`<tr>
          <td>${when(e.created_at)}</td>
          <td><code>${e.type}</code></td>
          <td>${recordLink(ctx, e.data.object.id)}</td>
          <td><a href="${eventPath(ctx, e.id)}">${e.id}</a></td>
        </tr>`,
    );
    const empty = Object.keys(filters).length ? t('No events match these filters yet.') : t('No events yet.');
    return html`${intro}
    ${table(t('Events'), [t('When'), t('Type'), t('Record'), t('Event')], rows, empty)}${pager(ctx, list.has_more, list.data.at(-1)?.id, filters)}`;
  },
};

/** Links to the event's record: its page and history where the dashboard has them, and its other events. */
function recordLinks(ctx: PageContext, recordId: string): Html {
  const { t } = ctx;
  const page = recordPage(ctx, recordId);
  const others = html`<a href="${withQuery(`${ctx.base}/events`, { record_id: recordId })}"
    >${t('Other events of this record')}</a
  >`;
  if (!page) return html`<p>${others}</p>`;
  return html`<p>
    <a href="${page.href}">${t('Open the record')}</a>${
      page.history ? html` · <a href="${page.href}#history">${t('Its history')}</a>` : ''
    }
    · ${others}
  </p>`;
}

/** The history of a record that has no page of its own (a checkout session), where the event shows it. */
async function historyWithoutPage(ctx: PageContext, recordId: string): Promise<Html | ''> {
  return recordPage(ctx, recordId) || !recordStreamOf(recordId) ? '' : historySection(ctx, recordId);
}

/** One event: its facts, its payload as webhooks send it, its record, and its deliveries to endpoints. */
export const eventPage: DashboardPage = {
  path: 'events/:id',
  section: 'events',
  title: (ctx) => ctx.t('Event'),
  async view(ctx) {
    const { t } = ctx;
    const id = encodeURIComponent(ctx.params.id!);
    const [event, deliveries] = await Promise.all([
      ctx.api.admin<WebhookEvent>('GET', `/webhook_events/${id}?environment=${ctx.environment}`),
      ctx.api.admin<{ data: Delivery[]; has_more: boolean }>('GET', `/webhook_events/${id}/deliveries?limit=100`),
    ]);
    const recordId = event.data.object.id;
    const rows = deliveries.data.map(
      (d) =>
        html`<tr>
          <td><a href="${ctx.base}/webhooks/${encodeURIComponent(d.endpoint_id)}">${d.endpoint_id}</a></td>
          <td>${d.status}</td>
          <td>${d.attempt_count}</td>
          <td>${when(d.created_at)}</td>
        </tr>`,
    );
    return html`<section class="card" aria-label="${t('Event')}">
        <h2><code>${event.type}</code></h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${event.id}</dd>
          <dt>${t('When')}</dt>
          <dd>${when(event.created_at)}</dd>
          <dt>${t('Record')}</dt>
          <dd>${recordLink(ctx, recordId)}</dd>
        </dl>
        ${recordLinks(ctx, recordId)}
      </section>
      <h2>${t('Payload')}</h2>
      <pre class="card">${JSON.stringify(event, null, 2)}</pre>
      <h2 id="deliveries">${t('Deliveries')}</h2>
      ${table(
        t('Deliveries of {id}', { id: event.id }),
        [t('Endpoint'), t('Status'), t('Attempts'), t('Created')],
        rows,
        t('No deliveries of this event yet: only active endpoints that subscribe to its type receive it.'),
      )}${deliveries.has_more ? html`<p class="muted">${t('Showing the first {count}.', { count: 100 })}</p>` : ''}
      ${await historyWithoutPage(ctx, recordId)}`;
  },
};
