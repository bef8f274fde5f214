import { ALL_WEBHOOK_EVENTS, PUBLIC_EVENT_TYPES } from '@billing/contracts';
import { type Html, html } from '@billing/service';
import { when } from '../html';
import { type Translate, markup } from '../i18n';
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
function eventChoices(t: Translate, state: PageState, current?: string[]): Html {
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
    <legend>${t('Events to send')}</legend>
    ${box(ALL_WEBHOOK_EVENTS, t('All events (*)'), 0)}${PUBLIC_EVENT_TYPES.map((type, i) => box(type, type, i + 1))}
  </fieldset>`;
}
const eventsFrom = (form: Record<string, string>) =>
  Object.keys(form)
    .filter((k) => k.startsWith('event:'))
    .map((k) => k.slice(6));

export const webhooksPage: DashboardPage = {
  path: 'webhooks',
  section: 'webhooks',
  title: (ctx) => ctx.t('Webhooks'),
  async view(ctx, state) {
    const { t } = ctx;
    const list = await ctx.api.admin<{ data: Endpoint[] }>('GET', `/webhook_endpoints?environment=${ctx.environment}`);
    const rows = list.data.map(
      (e) =>
        html`<tr>
          <td><a href="${ctx.base}/webhooks/${e.id}">${e.url}</a></td>
          <td>${e.events.join(', ')}</td>
          <td>${e.is_active ? t('Active') : t('Inactive')}</td>
          <td>${when(e.created_at)}</td>
        </tr>`,
    );
    return html`${table(
        t('Webhook endpoints'),
        [t('URL'), t('Events'), t('Status'), t('Created')],
        rows,
        t('No endpoints yet.'),
      )}
      <h2 id="create-endpoint">${t('Add an endpoint')}</h2>
      <form class="card" method="post" aria-labelledby="create-endpoint">
        ${formFields(ctx, 'create')}${errorFor(state, 'create')}
        ${field('w-url', t('URL (https)'), { name: 'url', type: 'url', value: state.form?.url, required: true })}
        ${eventChoices(t, state)}
        <div><button type="submit">${t('Add endpoint')}</button></div>
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
        return { notice: ctx.t('Endpoint added.'), redirect: `${ctx.base}/webhooks/${created.id}` };
      },
    },
  },
};

export const webhookPage: DashboardPage = {
  path: 'webhooks/:id',
  section: 'webhooks',
  title: (ctx) => ctx.t('Webhook endpoint'),
  async view(ctx, state) {
    const { t } = ctx;
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
          <div><a href="${ctx.base}/events/${encodeURIComponent(d.event_id)}">${d.event_id}</a></div>
        </td>
        <td>${d.status}</td>
        <td>${d.attempt_count}</td>
        <td>${last ? (last.response_status ?? last.error ?? '—') : '—'}</td>
        <td>
          <details>
            <summary>${t('Attempts')}</summary>
            <ul>
              ${d.attempts.map(
                (a) =>
                  html`<li>
                    #${a.attempt} ${when(a.attempted_at)}: ${a.status}, ${a.response_status ?? t('no answer')}
                    ${a.error ?? ''} (${a.duration_ms} ms)
                  </li>`,
              )}
            </ul>
            ${d.next_attempt_at ? html`<p>${markup(t, 'Next attempt {when}', { when: when(d.next_attempt_at) })}</p>` : ''}
          </details>
        </td>
        <td>
          ${
            d.status === 'FAILED'
              ? buttonForm(
                  ctx,
                  'replay',
                  t('Replay'),
                  { delivery_id: d.id },
                  { accessibleName: t('Replay delivery {id}', { id: d.id }) },
                )
              : ''
          }
        </td>
      </tr>`;
    });
    return html`<section class="card" aria-label="${t('Endpoint')}">
        <h2>${endpoint.url}</h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${endpoint.id}</dd>
          <dt>${t('Status')}</dt>
          <dd>${endpoint.is_active ? t('Active') : t('Inactive')}</dd>
          <dt>${t('Signing secret')}</dt>
          <dd>
            ${t('{secret} (shown in full only when rolled)', { secret: `whsec_…${(endpoint.secret ?? '').slice(-4)}` })}
          </dd>
        </dl>
        ${errorFor(state, 'roll')}${errorFor(state, 'delete')}${buttonForm(
          ctx,
          'roll',
          t('Roll signing secret'),
          {},
          { confirm: t('Roll the secret? Later deliveries are signed with the new one.') },
        )}${buttonForm(ctx, 'delete', t('Delete endpoint'), {}, { confirm: t('Delete this endpoint?'), danger: true })}
      </section>
      <h2 id="edit-endpoint">${t('Edit')}</h2>
      <form class="card" method="post" aria-labelledby="edit-endpoint">
        ${formFields(ctx, 'update')}${errorFor(state, 'update')}
        ${field('w-url', t('URL (https)'), { name: 'url', type: 'url', value: state.form?.url ?? endpoint.url, required: true })}
        <div class="check">
          <input type="checkbox" id="w-active" name="is_active" ${endpoint.is_active ? html` checked` : ''} />
          <label for="w-active">${t('Active')}</label>
        </div>
        ${eventChoices(t, state, endpoint.events)}
        <div><button type="submit">${t('Save endpoint')}</button></div>
      </form>
      <h2 id="deliveries">${t('Delivery log')}</h2>
      ${errorFor(state, 'replay')}
      <p>
        ${markup(t, 'Show: {links}', {
          links: html`<a href="?">${t('all')}</a> · <a href="?status=FAILED">${t('failed')}</a> ·
            <a href="?status=PENDING">${t('pending')}</a> · <a href="?status=SUCCEEDED">${t('succeeded')}</a>`,
        })}
      </p>
      ${table(
        t('Deliveries'),
        [t('Created'), t('Event'), t('Status'), t('Attempts'), t('Last answer'), t('Details'), ''],
        rows,
        t('No deliveries yet.'),
      )}${pager(ctx, deliveries.has_more, deliveries.data.at(-1)?.id, status ? { status } : {})}
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
        return { notice: ctx.t('Endpoint saved.') };
      },
    },
    roll: {
      async run(ctx) {
        const rolled = await ctx.api.admin<Endpoint>(
          'POST',
          `/webhook_endpoints/${encodeURIComponent(ctx.params.id!)}/secret/roll`,
          {},
        );
        const { t } = ctx;
        return {
          notice: t('Signing secret rolled.'),
          reveal: html`<div class="reveal" role="status">
            <p>
              ${markup(t, '{name} (shown once; copy it now):', {
                name: html`<strong>${t('New signing secret')}</strong>`,
              })}
            </p>
            <p>
              <code>${rolled.secret ?? ''}</code>
              <button type="button" class="secondary" data-copy="${rolled.secret ?? ''}">${t('Copy')}</button>
            </p>
          </div>`,
        };
      },
    },
    delete: {
      async run(ctx) {
        await ctx.api.admin('DELETE', `/webhook_endpoints/${encodeURIComponent(ctx.params.id!)}`);
        return { notice: ctx.t('Endpoint deleted.'), redirect: `${ctx.base}/webhooks` };
      },
    },
    replay: {
      async run(ctx, form) {
        await ctx.api.admin('POST', `/webhook_deliveries/${encodeURIComponent(form.delivery_id ?? '')}/replay`, {});
        return { notice: ctx.t('Delivery sent again.') };
      },
    },
  },
};
