import { type Html, html, raw } from '@billing/service';

const STYLE = `
  body { font-family: system-ui, sans-serif; background: #f6f7f9; color: #1a1f36; margin: 0; }
  main { max-width: 28rem; margin: 3rem auto; background: #fff; border-radius: 12px; padding: 2rem;
         box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  h1 { font-size: 1.25rem; margin: 0 0 .25rem; }
  .price { font-size: 1.75rem; font-weight: 600; margin: .5rem 0 1rem; }
  .muted { color: #6b7385; }
  .summary div { display: flex; justify-content: space-between; margin: .25rem 0; }
  label { display: block; font-size: .875rem; margin: 1rem 0 .25rem; }
  input { width: 100%; box-sizing: border-box; padding: .6rem; border: 1px solid #c9ced8; border-radius: 6px; font-size: 1rem; }
  .row { display: flex; gap: .75rem; } .row > div { flex: 1; }
  .card-field { box-sizing: border-box; min-height: 2.6rem; padding: .6rem; border: 1px solid #c9ced8; border-radius: 6px; }
  .card-field input { border: 0; padding: 0; }
  button { width: 100%; margin-top: 1.5rem; padding: .8rem; font-size: 1rem; border: 0; border-radius: 6px;
           background: var(--brand); color: #fff; cursor: pointer; }
  input[readonly] { background: #f0f2f5; color: #4a5060; border-style: dashed; cursor: default; }
  .merchant { display: flex; align-items: center; gap: .5rem; font-weight: 600; margin: -.5rem 0 1.25rem;
              padding-bottom: .75rem; border-bottom: 3px solid var(--brand); }
  .merchant .logo { border-radius: 6px; object-fit: contain; }
  .schedule { font-weight: 500; margin: -.5rem 0 1rem; }
  .receipt { margin: 1rem 0; } .receipt div { display: flex; justify-content: space-between; align-items: baseline; gap: 1rem; }
  .receipt dt { color: #6b7385; flex-shrink: 0; } .receipt dd { margin: 0; font-weight: 500; text-align: right; }
  .receipt div.sentence { display: block; margin-top: .25rem; } .receipt .sentence dd { text-align: left; }
  button[disabled] { opacity: .6; cursor: progress; }
  .error { background: #fff1f0; border: 1px solid #ffa39e; color: #a8071a; padding: .75rem; border-radius: 6px; }
  .sandbox { background: #fffbe6; border: 1px solid #ffe58f; padding: .5rem .75rem; border-radius: 6px; font-size: .875rem; }
  .methods { border: 0; padding: 0; margin: 1rem 0 0; } .methods legend { font-size: .875rem; margin-bottom: .25rem; }
  .method { display: flex; align-items: center; gap: .5rem; margin: .5rem 0; font-size: 1rem; }
  .method input { width: auto; accent-color: var(--brand); }
  .einvoice legend { padding: 0; font-weight: 600; }
  .einvoice .method { min-height: 2.75rem; margin: 0; }
  .einvoice .method input { width: 1.25rem; height: 1.25rem; margin: 0; flex-shrink: 0; }
  .einvoice-fields { margin: 0 0 .75rem 1.75rem; } .einvoice-fields label { margin-top: .5rem; }
  .hint { font-size: .8125rem; margin: -.5rem 0 .5rem 1.75rem; }
  .field-error { color: #a8071a; font-size: .875rem; margin: .25rem 0 0; }
  input[aria-invalid="true"] { border-color: #a8071a; }
  a.cancel { display: block; text-align: center; margin-top: 1rem; color: #6b7385; }
  .promotion { margin: 1rem 0; } .promotion label { margin-top: 0; }
  .promotion .inline { display: flex; gap: .5rem; } .promotion .inline input { flex: 1; min-width: 0; }
  button.secondary { width: auto; margin: 0; padding: .6rem 1rem; background: #fff; color: var(--brand);
                     border: 1px solid var(--brand); }
  .promotion-remove { text-align: right; margin: 0 0 .75rem; }
  button.link { width: auto; margin: 0; padding: .25rem 0; background: none; color: #6b7385; text-decoration: underline;
                font-size: .875rem; }
`;

/** The default accent; a merchant's `brand_color` (#rrggbb, checked by the admin API) replaces it. */
const DEFAULT_BRAND = '#2f54eb';

/** A small card icon, inline: no request, and the tab shows it. */
const FAVICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="2" y="6" width="28" height="20" rx="4" fill="#2f54eb"/><rect x="2" y="11" width="28" height="4" fill="#1a1f36"/><rect x="6" y="19" width="8" height="3" rx="1" fill="#fff"/></svg>',
)}`;

/** A whole hosted page: `body` inside the card, in the page's language and the merchant's colour. */
export function page(title: string, body: Html, options: { lang?: string; brandColor?: string | null } = {}): string {
  // Checked to be #rrggbb: it goes into the stylesheet, where HTML escaping would not protect it.
  const brand = options.brandColor && /^#[0-9a-f]{6}$/i.test(options.brandColor) ? options.brandColor : DEFAULT_BRAND;
  return html`<!doctype html>
    <html lang="${options.lang ?? 'en'}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${title}</title>
        <link rel="icon" href="${FAVICON}" />
        <style>
          ${raw(`:root { --brand: ${brand}; }${STYLE}`)}
        </style>
      </head>
      <body>
        <main>${body}</main>
      </body>
    </html> `.toString();
}
