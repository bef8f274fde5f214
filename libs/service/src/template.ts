import { escapeHtml } from './html';

// The one way the pages write HTML (decision 0011): a tagged template that escapes everything
// interpolated into it unless it is already HTML. A page cannot forget to escape a value, and a
// fragment is never escaped twice.

/** A fragment of HTML that is already safe to send; everything else interpolated is escaped. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/**
 * What an interpolated value becomes: an `Html` fragment as it is, an array as its items one
 * after the other (no separator), `null`, `undefined` and `false` as nothing (so
 * `${cond && html`…`}` and optional parts need no ternary), anything else as escaped text.
 */
function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * Tagged template: `html\`<p title="${title}">${text}</p>\`` escapes `title` and `text` and keeps
 * nested `html` fragments. Escaping is right for element content and for attribute values in
 * double or single quotes; an attribute must therefore always be quoted. It is not for the inside
 * of `<script>` or `<style>`, which take `raw` of text made safe for that context.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Text that is already HTML (a constant, or text made safe for its context), sent as it is. */
export const raw = (text: string): Html => new Html(text);
