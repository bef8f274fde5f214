// What every server-rendered page shares (the hosted checkout, payment links, the embedded
// checkout, the customer portal, the dashboard): one escaping rule, one money format, one
// reading of the browser's language. Pages write HTML with the `html` template (template.ts),
// which applies the escaping rule, and show dates with dates.ts.

import type { PageLanguage } from './dates';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML element content and quoted attributes. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * Whole TWD as buyers and merchants in Taiwan read it: `NT$1,299`; a negative amount (a credit)
 * with a true minus sign before the currency, `−NT$199`.
 */
export function formatTwd(amount: number): string {
  return `${amount < 0 ? '−' : ''}NT$${Math.abs(amount).toLocaleString('en-US')}`;
}

/**
 * The language a browser's `Accept-Language` asks for first, of the two the pages are written
 * in: the ranges by weight (`q`, 1 when absent; 0 or unreadable is "not this"), then by order;
 * any `zh` range reads Traditional Chinese, any `en` range English. Null when it names neither.
 */
export function languageOf(acceptLanguage: string | undefined): PageLanguage | null {
  const ranges = (acceptLanguage ?? '')
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { tag, q: q === undefined ? 1 : Number(q.slice(2)) || 0, index };
    })
    .filter((range) => range.tag && range.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of ranges) {
    if (tag === 'zh' || tag.startsWith('zh-')) return 'zh-TW';
    if (tag === 'en' || tag.startsWith('en-')) return 'en';
  }
  return null;
}
