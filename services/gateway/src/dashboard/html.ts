import { escapeHtml, formatTwd } from '@billing/service';

/** A fragment of HTML that is already safe to send; everything else interpolated is escaped. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<p>${text}</p>\`` escapes `text`, keeps nested `html` fragments. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Html(out);
}

export const raw = (text: string) => new Html(text);

/** Whole TWD, as merchants read it (`formatTwd`); a dash for none. */
export const twd = (amount: number | null | undefined) =>
  amount === null || amount === undefined ? '—' : formatTwd(amount);

/** An ISO time as a short UTC date and time, inside a <time> element. */
export const when = (iso: string | null | undefined) =>
  iso ? html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>` : html`—`;
