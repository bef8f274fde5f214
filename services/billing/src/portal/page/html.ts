import type { PortalLocale } from '@billing/contracts';
import { type Html, html, raw } from '@billing/service';

// The portal's page frame, after checkout's hosted page (services/checkout/src/hosted-page/html.ts):
// server-rendered through the pages' html template, one inline stylesheet, no script and no
// external assets, except PAYUNi's card fields on the card page of an organization on PAYUNi.

const STYLE = `
  * { box-sizing: border-box; }
  body { font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans TC", "PingFang TC", "Microsoft JhengHei", sans-serif;
         background: #f6f7f9; color: #1a1f36; margin: 0; line-height: 1.45; }
  header.top { background: #fff; border-bottom: 1px solid #e3e6ec; }
  header.top div { max-width: 46rem; margin: 0 auto; padding: 1rem 1.25rem; display: flex; align-items: center;
                   justify-content: space-between; gap: 1rem; }
  header.top strong { font-size: 1.05rem; }
  main { max-width: 46rem; margin: 1.5rem auto 3rem; padding: 0 1.25rem; }
  h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
  h2 { font-size: 1rem; margin: 2rem 0 .75rem; color: #4f566b; text-transform: uppercase; letter-spacing: .04em; }
  .card { background: #fff; border-radius: 12px; padding: 1.25rem 1.5rem; box-shadow: 0 2px 12px rgba(0,0,0,.06);
          margin-bottom: 1rem; }
  .card h3 { margin: 0; font-size: 1.15rem; }
  .price { font-size: 1.5rem; font-weight: 600; margin: .35rem 0 .75rem; }
  .price .muted { font-size: 1rem; font-weight: 400; }
  td a { color: #2f54eb; }
  .muted { color: #6b7385; }
  .facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1.5rem; margin: .75rem 0 0; }
  .facts dt { color: #6b7385; } .facts dd { margin: 0; }
  .heading { display: flex; justify-content: space-between; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
  .badge { display: inline-block; font-size: .78rem; font-weight: 600; padding: .15rem .55rem; border-radius: 999px;
           background: #e6f4ea; color: #1e6b34; white-space: nowrap; }
  .badge.warn { background: #fff4e5; color: #8a4b00; } .badge.bad { background: #fff1f0; color: #a8071a; }
  .badge.off { background: #eef0f4; color: #4f566b; }
  .actions { display: flex; gap: .75rem; flex-wrap: wrap; margin-top: 1.1rem; align-items: center; }
  .actions form { margin: 0; }
  button, a.button { display: inline-block; padding: .6rem 1.1rem; font-size: .95rem; border: 0; border-radius: 6px;
           background: #2f54eb; color: #fff; cursor: pointer; text-decoration: none; font-family: inherit; }
  button.secondary, a.button.secondary { background: #fff; color: #1a1f36; border: 1px solid #c9ced8; }
  button.danger, a.button.danger { background: #fff; color: #a8071a; border: 1px solid #ffa39e; }
  button.danger.solid, a.button.danger.solid { background: #cf1322; color: #fff; border: 0; }
  button.wide { width: 100%; margin-top: 1.5rem; padding: .8rem; font-size: 1rem; }
  table { width: 100%; border-collapse: collapse; }
  th, td { text-align: left; padding: .6rem .4rem; border-bottom: 1px solid #eef0f4; }
  th { font-size: .8rem; color: #6b7385; font-weight: 600; }
  td.amount, th.amount { text-align: right; white-space: nowrap; }
  .notice { background: #e6f4ea; border: 1px solid #b7e1c1; color: #1e6b34; padding: .75rem 1rem; border-radius: 8px; }
  .error { background: #fff1f0; border: 1px solid #ffa39e; color: #a8071a; padding: .75rem 1rem; border-radius: 8px; }
  .alert { background: #fffbe6; border: 1px solid #ffe58f; color: #614700; padding: .6rem .9rem; border-radius: 8px;
           margin-top: .9rem; }
  .sandbox { background: #fffbe6; border: 1px solid #ffe58f; padding: .5rem .75rem; border-radius: 6px; font-size: .875rem; }
  label { display: block; font-size: .875rem; margin: 1rem 0 .25rem; }
  input { width: 100%; padding: .6rem; border: 1px solid #c9ced8; border-radius: 6px; font-size: 1rem; font-family: inherit; }
  .row { display: flex; gap: .75rem; } .row > div { flex: 1; }
  .card-field { min-height: 2.6rem; padding: .6rem; border: 1px solid #c9ced8; border-radius: 6px; background: #fff; }
  .card-field input { border: 0; padding: 0; }
  .choice { border-top: 1px solid #eef0f4; padding: .2rem 0 .5rem; }
  .choice > label { display: flex; gap: .6rem; align-items: center; font-size: 1rem; margin: .6rem 0 .2rem; }
  .choice input[type=radio] { width: 1.15rem; height: 1.15rem; margin: 0; flex: none; }
  .choice label.sub { margin: .5rem 0 .25rem 1.75rem; } .choice label.sub + input { margin-left: 1.75rem; width: calc(100% - 1.75rem); }
  .summary div { display: flex; justify-content: space-between; margin: .35rem 0; }
  .summary div.total { border-top: 1px solid #eef0f4; padding-top: .5rem; font-weight: 600; }
  a.back { color: #2f54eb; text-decoration: none; }
  footer { max-width: 46rem; margin: 0 auto 2rem; padding: 0 1.25rem; font-size: .85rem; color: #6b7385; }
  footer a { color: #6b7385; margin-right: 1rem; }
  td.date { white-space: nowrap; }
  @media (max-width: 520px) {
    .card { padding: 1rem 1.1rem; }
    th.number, td.number { display: none; }
    th, td { padding: .55rem .25rem; }
  }
  @media print {
    body { background: #fff; } header.top, .no-print, footer { display: none; }
    .card { box-shadow: none; border: 1px solid #ddd; }
  }
`;

export interface PageFrame {
  locale: PortalLocale;
  title: string;
  /** The merchant's name at the top; the page's title when the merchant gave none. */
  businessName: string;
  /** The link back to the merchant's site. */
  back?: { href: string; text: string };
  footer?: Html;
}

export function page(frame: PageFrame, body: Html): string {
  const back = frame.back && html`<a class="back" id="return-link" href="${frame.back.href}">← ${frame.back.text}</a>`;
  return html`<!doctype html>
    <html lang="${frame.locale}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <meta name="referrer" content="no-referrer" />
        <title>${frame.title}</title>
        <style>
          ${raw(STYLE)}
        </style>
      </head>
      <body>
        <header class="top">
          <div><strong>${frame.businessName}</strong>${back}</div>
        </header>
        <main>${body}</main>
        ${frame.footer && html`<footer>${frame.footer}</footer>`}
      </body>
    </html> `.toString();
}

/** A POST form with the session's CSRF token; `content` is its fields and button. */
export function postForm(action: string, csrfToken: string, content: Html, attributes?: Html): Html {
  return html`<form method="post" action="${action}" ${attributes}>
    <input type="hidden" name="csrf_token" value="${csrfToken}" />
    ${content}
  </form>`;
}
