import { ApiFailure } from '../client';
import { type Html, html } from '@billing/service';
import { when } from '../html';
import { type PageContext, table } from '../page';
import { refusalText } from '../refusals';

interface RecordEvent {
  version: number;
  type: string;
  occurred_at: string;
  actor: { type: string; id?: string } | null;
  data: unknown;
}

const actorText = (actor: RecordEvent['actor'], t: PageContext['t']) =>
  !actor ? t('system') : actor.id ? `${t(actor.type.replace('_', ' '))} ${actor.id}` : t(actor.type.replace('_', ' '));

/**
 * The full history of one record, read from its event stream (GET .../events?record_id=),
 * oldest first: who did what and when.
 */
export async function historySection(ctx: PageContext, recordId: string): Promise<Html> {
  const { t } = ctx;
  let events: RecordEvent[] = [];
  let hasMore = false;
  try {
    const page = await ctx.api.admin<{ data: RecordEvent[]; has_more: boolean }>(
      'GET',
      `/events?record_id=${encodeURIComponent(recordId)}&environment=${ctx.environment}&limit=100`,
    );
    events = page.data;
    hasMore = page.has_more;
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    return html`<h2 id="history">${t('History')}</h2>
      <p class="error" role="alert">${t('The history could not be read: {why}', { why: refusalText(error, ctx) })}</p>`;
  }
  const rows = events.map(
    (e) =>
      html`<tr>
        <td>${e.version}</td>
        <td>${when(e.occurred_at)}</td>
        <td><code>${e.type}</code></td>
        <td>${actorText(e.actor, t)}</td>
        <td>
          <details>
            <summary>${t('Data')}</summary>
            <pre>${JSON.stringify(e.data, null, 2)}</pre>
          </details>
        </td>
      </tr>`,
  );
  return html`<h2 id="history">${t('History')}</h2>
    ${table(t('Event history of {id}', { id: recordId }), ['#', t('When'), t('What'), t('Who'), t('Details')], rows, t('No events.'))}${
      hasMore ? html`<p class="muted">${t('Showing the first 100 events.')}</p>` : ''
    }`;
}
