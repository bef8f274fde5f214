/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** Whole TWD, as buyers in Taiwan read prices: NT$1,299. */
export function formatTwd(amount: number): string {
  return `NT$${amount.toLocaleString('en-US')}`;
}

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
  button { width: 100%; margin-top: 1.5rem; padding: .8rem; font-size: 1rem; border: 0; border-radius: 6px;
           background: #2f54eb; color: #fff; cursor: pointer; }
  button[disabled] { opacity: .6; cursor: progress; }
  .error { background: #fff1f0; border: 1px solid #ffa39e; color: #a8071a; padding: .75rem; border-radius: 6px; }
  .sandbox { background: #fffbe6; border: 1px solid #ffe58f; padding: .5rem .75rem; border-radius: 6px; font-size: .875rem; }
  a.cancel { display: block; text-align: center; margin-top: 1rem; color: #6b7385; }
`;

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}
