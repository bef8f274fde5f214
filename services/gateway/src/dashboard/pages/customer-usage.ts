import type { MeterAggregation, UsageSummary } from '@billing/contracts';
import { type Html, html } from '@billing/service';
import { when } from '../html';
import { markup } from '../i18n';
import { type PageContext, table } from '../page';

/** Each aggregation in the merchant's words (docs/usage.md). */
const AGGREGATION_WORDS: Record<MeterAggregation, string> = { sum: 'Sum', count: 'Count', max: 'Maximum' };

/**
 * A customer's usage over the last 30 days, as `GET /v1/customers/{id}/usage` answers it: each
 * meter's quantity by its aggregation, and its events. Nothing when the environment has no meters.
 */
export async function usageSection(ctx: PageContext, customerId: string): Promise<Html> {
  const { t } = ctx;
  const usage = await ctx.api.v1<UsageSummary>('GET', `/customers/${encodeURIComponent(customerId)}/usage`);
  if (usage.meters.length === 0) return html``;
  const rows = usage.meters.map(
    (meter) =>
      html`<tr>
        <td><code>${meter.meter}</code></td>
        <td>${t(AGGREGATION_WORDS[meter.aggregation])}</td>
        <td>${meter.quantity.toLocaleString('en-US')}</td>
        <td>${meter.events.toLocaleString('en-US')}</td>
      </tr>`,
  );
  return html`<h2>${t('Usage')}</h2>
    <p class="muted">${markup(t, 'Reported from {from} to {to}.', { from: when(usage.from), to: when(usage.to) })}</p>
    ${table(t('Usage'), [t('Meter key'), t('Aggregation'), t('Quantity'), t('Events')], rows)}`;
}
