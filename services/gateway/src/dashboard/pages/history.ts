import { ApiFailure } from '../client';
import { type Html, html } from '@billing/service';
import { when } from '../html';
import { type PageContext, table } from '../page';

interface RecordEvent {
  version: number;
  type: string;
  occurred_at: string;
  actor: { type: string; id?: string } | null;
  data: unknown;
}

const actorText = (actor: RecordEvent['actor']) =>
  !actor ? 'system' : actor.id ? `${actor.type.replace('_', ' ')} ${actor.id}` : actor.type.replace('_', ' ');

/**
 * The full history of one record, read from its event stream (GET .../events?record_id=),
 * oldest first: who did what and when.
 */
export async function historySection(ctx: PageContext, recordId: string): Promise<Html> {
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
    return html`<h2 id="history">History</h2>
      <p class="error" role="alert">The history could not be read: ${error.explanation}</p>`;
  }
  const rows = events.map(
    (e) =>
      html`<tr>
        <td>${e.version}</td>
        <td>${when(e.occurred_at)}</td>
        <td><code>${e.type}</code></td>
        <td>${actorText(e.actor)}</td>
        <td>
          <details>
            <summary>Data</summary>
            <pre>${JSON.stringify(e.data, null, 2)}</pre>
          </details>
        </td>
      </tr>`,
  );
  return html`<h2 id="history">History</h2>
    ${table(`Event history of ${recordId}`, ['#', 'When', 'What', 'Who', 'Details'], rows, 'No events.')}${
      hasMore ? html`<p class="muted">Showing the first 100 events.</p>` : ''
    }`;
}
