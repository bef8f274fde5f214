import { ALL_WEBHOOK_EVENTS, PUBLIC_EVENT_TYPES } from '@billing/contracts';
import { type Html, html } from '@billing/service';
import { when } from '../html';
import { type DashboardPage, type PageState, buttonForm, errorFor, field, formFields, pager, table } from '../page';
import { historySection } from './history';
import { text } from './forms';

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  is_active: boolean;
  secret?: string;
  created_at: string;
}
interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  attempts: Array<{
    attempt: number;
    attempted_at: string;
    status: string;
    response_status: number | null;
    error: string | null;
    duration_ms: number;
  }>;
}

/** The event types as checkboxes, all of them (`*`) by default. */
function eventChoices(state: PageState, current?: string[]): Html {
  const chosen = state.form
    ? Object.keys(state.form)
        .filter((k) => k.startsWith('event:'))
        .map((k) => k.slice(6))
    : (current ?? [ALL_WEBHOOK_EVENTS]);
  const box = (value: string, label: string, i: number) =>
    html`<div class="check">
      <input type="checkbox" id="ev-${i}" name="event:${value}" ${chosen.includes(value) ? html` checked` : ''} />
      <label for="ev-${i}">${label}</label>
    </div>`;
  return html`<fieldset>
    <legend>Events to send</legend>
    ${box(ALL_WEBHOOK_EVENTS, 'All events (*)', 0)}${PUBLIC_EVENT_TYPES.map((type, i) => box(type, type, i + 1))}
  </fieldset>`;
}
const eventsFrom = (form: Record<string, string>) =>
  Object.keys(form)
    .filter((k) => k.startsWith('event:'))
    .map((k) => k.slice(6));

export const webhooksPage: DashboardPage = {
  path: 'webhooks',
  section: 'webhooks',
  title: () => 'Webhooks',
  async view(ctx, state) {
    const list = await ctx.api.admin<{ data: Endpoint[] }>('GET', `/webhook_endpoints?environment=${ctx.environment}`);
    const rows = list.data.map(
      (e) =>
        html`<tr>
          <td><a href="${ctx.base}/webhooks/${e.id}">${e.url}</a></td>
          <td>${e.events.join(', ')}</td>
          <td>${e.is_active ? 'Active' : 'Inactive'}</td>
          <td>${when(e.created_at)}</td>
        </tr>`,
    );
    return html`${table('Webhook endpoints', ['URL', 'Events', 'Status', 'Created'], rows, 'No endpoints yet.')}
      <h2 id="create-endpoint">Add an endpoint</h2>
      <form class="card" method="post" aria-labelledby="create-endpoint">
        ${formFields(ctx, 'create')}${errorFor(state, 'create')}
        ${field('w-url', 'URL (https)', { name: 'url', type: 'url', value: state.form?.url, required: true })}
        ${eventChoices(state)}
        <div><button type="submit">Add endpoint</button></div>
      </form>`;
  },
  actions: {
    create: {
      async run(ctx, form) {
        const created = await ctx.api.admin<Endpoint>('POST', '/webhook_endpoints', {
          environment: ctx.environment,
          url: text(form.url),
          events: eventsFrom(form),
        });
        return { notice: 'Endpoint added.', redirect: `${ctx.base}/webhooks/${created.id}` };
      },
    },
  },
};

export const webhookPage: DashboardPage = {
  path: 'webhooks/:id',
  section: 'webhooks',
  title: () => 'Webhook endpoint',
  async view(ctx, state) {
    const id = encodeURIComponent(ctx.params.id!);
    const status = ['PENDING', 'SUCCEEDED', 'FAILED'].includes(ctx.query.status ?? '') ? ctx.query.status : undefined;
    const [endpoint, deliveries] = await Promise.all([
      ctx.api.admin<Endpoint>('GET', `/webhook_endpoints/${id}`),
      ctx.api.admin<{ data: Delivery[]; has_more: boolean }>(
        'GET',
        `/webhook_endpoints/${id}/deliveries?${new URLSearchParams({
          limit: '50',
          ...(status ? { status } : {}),
          ...(ctx.query.after ? { starting_after: ctx.query.after } : {}),
        })}`,
      ),
    ]);
    const rows = deliveries.data.map((d) => {
      const last = d.attempts.at(-1);
      return html`<tr>
        <td>${when(d.created_at)}</td>
        <td>
          <code>${d.event_type}</code>
          <div class="muted">${d.event_id}</div>
        </td>
        <td>${d.status}</td>
        <td>${d.attempt_count}</td>
        <td>${last ? (last.response_status ?? last.error ?? '—') : '—'}</td>
        <td>
          <details>
            <summary>Attempts</summary>
            <ul>
              ${d.attempts.map(
                (a) =>
                  html`<li>
                    #${a.attempt} ${when(a.attempted_at)}: ${a.status}, ${a.response_status ?? 'no answer'}
                    ${a.error ?? ''} (${a.duration_ms} ms)
                  </li>`,
              )}
            </ul>
            ${d.next_attempt_at ? html`<p>Next attempt ${when(d.next_attempt_at)}</p>` : ''}
          </details>
        </td>
        <td>
          ${
            d.status === 'FAILED'
              ? buttonForm(
                  ctx,
                  'replay',
                  'Replay',
                  { delivery_id: d.id },
                  { accessibleName: `Replay delivery ${d.id}` },
                )
              : ''
          }
        </td>
      </tr>`;
    });
    return html`<section class="card" aria-label="Endpoint">
        <h2>${endpoint.url}</h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${endpoint.id}</dd>
          <dt>Status</dt>
          <dd>${endpoint.is_active ? 'Active' : 'Inactive'}</dd>
          <dt>Signing secret</dt>
          <dd>whsec_…${(endpoint.secret ?? '').slice(-4)} (shown in full only when rolled)</dd>
        </dl>
        ${errorFor(state, 'roll')}${errorFor(state, 'delete')}${buttonForm(ctx, 'roll', 'Roll signing secret', {}, { confirm: 'Roll the secret? Later deliveries are signed with the new one.' })}${buttonForm(ctx, 'delete', 'Delete endpoint', {}, { confirm: 'Delete this endpoint?', danger: true })}
      </section>
      <h2 id="edit-endpoint">Edit</h2>
      <form class="card" method="post" aria-labelledby="edit-endpoint">
        ${formFields(ctx, 'update')}${errorFor(state, 'update')}
        ${field('w-url', 'URL (https)', { name: 'url', type: 'url', value: state.form?.url ?? endpoint.url, required: true })}
        <div class="check">
          <input type="checkbox" id="w-active" name="is_active" ${endpoint.is_active ? html` checked` : ''} />
          <label for="w-active">Active</label>
        </div>
        ${eventChoices(state, endpoint.events)}
        <div><button type="submit">Save endpoint</button></div>
      </form>
      <h2 id="deliveries">Delivery log</h2>
      ${errorFor(state, 'replay')}
      <p>
        Show: <a href="?">all</a> · <a href="?status=FAILED">failed</a> · <a href="?status=PENDING">pending</a> ·
        <a href="?status=SUCCEEDED">succeeded</a>
      </p>
      ${table('Deliveries', ['Created', 'Event', 'Status', 'Attempts', 'Last answer', 'Details', ''], rows, 'No deliveries yet.')}${pager(ctx, deliveries.has_more, deliveries.data.at(-1)?.id, status ? { status } : {})}
      ${await historySection(ctx, endpoint.id)}`;
  },
  actions: {
    update: {
      async run(ctx, form) {
        await ctx.api.admin('PATCH', `/webhook_endpoints/${encodeURIComponent(ctx.params.id!)}`, {
          url: text(form.url),
          events: eventsFrom(form),
          is_active: form.is_active === 'on',
        });
        return { notice: 'Endpoint saved.' };
      },
    },
    roll: {
      async run(ctx) {
        const rolled = await ctx.api.admin<Endpoint>(
          'POST',
          `/webhook_endpoints/${encodeURIComponent(ctx.params.id!)}/secret/roll`,
          {},
        );
        return {
          notice: 'Signing secret rolled.',
          reveal: html`<div class="reveal" role="status">
            <p><strong>New signing secret</strong> (shown once; copy it now):</p>
            <p>
              <code>${rolled.secret ?? ''}</code>
              <button type="button" class="secondary" data-copy="${rolled.secret ?? ''}">Copy</button>
            </p>
          </div>`,
        };
      },
    },
    delete: {
      async run(ctx) {
        await ctx.api.admin('DELETE', `/webhook_endpoints/${encodeURIComponent(ctx.params.id!)}`);
        return { notice: 'Endpoint deleted.', redirect: `${ctx.base}/webhooks` };
      },
    },
    replay: {
      async run(ctx, form) {
        await ctx.api.admin('POST', `/webhook_deliveries/${encodeURIComponent(form.delivery_id ?? '')}/replay`, {});
        return { notice: 'Delivery sent again.' };
      },
    },
  },
};
