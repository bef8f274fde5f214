/** The dashboard's one stylesheet and one script, served from the gateway (no CDN). */
export const STYLESHEET = `
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans TC",sans-serif;margin:0;background:#f6f7f9;color:#1a1f36;line-height:1.45}
a{color:#1d4ed8}
.error,.notice,.reveal,main p{overflow-wrap:anywhere}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:10}
header.top{background:#1a1f36;color:#fff;display:flex;flex-wrap:wrap;gap:.75rem 1.5rem;align-items:center;padding:.75rem 1rem}
header.top a{color:#fff}
header.top .brand{font-weight:700;text-decoration:none}
.envs{display:flex;border:1px solid #fff;border-radius:6px;overflow:hidden}
.envs a{padding:.3rem .8rem;text-decoration:none}
.envs a[aria-current=page]{background:#fff;color:#1a1f36;font-weight:700}
.who{margin-left:auto;display:flex;gap:.75rem;align-items:center;flex-wrap:wrap}
.lang a{padding:.3rem .5rem}
.search input{width:16rem;max-width:100%;padding:.3rem .5rem;border-radius:6px;border:1px solid #cbd5e1}
.found{padding-left:1.2rem}
.who button{background:none;color:#fff;border:1px solid #fff}
.sandbox{background:#fef3c7;color:#713f12;border-bottom:2px solid #d97706;padding:.5rem 1rem;font-weight:600;margin:0}
.layout{display:flex;flex-wrap:wrap;max-width:80rem;margin:0 auto}
nav.sections{flex:0 0 13rem;padding:1rem}
nav.sections ul{list-style:none;margin:0;padding:0}
nav.sections a{display:block;padding:.4rem .6rem;border-radius:6px;text-decoration:none;color:#1a1f36}
nav.sections a[aria-current=page]{background:#e0e7ff;font-weight:700}
main{flex:1 1 30rem;min-width:0;padding:1rem 1.25rem 3rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.15rem;margin:1.75rem 0 .6rem}
.card>h2:first-child,.card>h3:first-child{margin-top:0}
section.card,form.card,figure.card{background:#fff;border:1px solid #e3e6ec;border-radius:10px;padding:1rem 1.25rem;margin:0 0 1rem}
.table{overflow-x:auto}
.table td{word-break:keep-all}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid #e3e6ec;vertical-align:top}
th{font-size:.85rem;color:#4f566b;white-space:nowrap}
label{display:block;font-weight:600;margin:.6rem 0 .2rem}
input,select,textarea{font:inherit;padding:.4rem .5rem;border:1px solid #8a93a6;border-radius:6px;max-width:100%}
input[type=text],input[type=email],input[type=password],input[type=url],input[type=number],input[type=datetime-local],select,textarea{width:24rem}
button,.button{font:inherit;padding:.4rem .9rem;border-radius:6px;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;cursor:pointer;text-decoration:none;display:inline-block;margin:.6rem .4rem 0 0}
button.secondary{background:#fff;color:#1d4ed8}
button.danger{background:#b91c1c;border-color:#b91c1c}
button[disabled]{opacity:.6;cursor:progress}
form.inline{display:inline}
form.inline button{margin:0}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.error{background:#fee2e2;color:#7f1d1d;border:1px solid #b91c1c;border-radius:6px;padding:.5rem .75rem;margin:.5rem 0}
.notice{background:#dcfce7;color:#14532d;border:1px solid #15803d;border-radius:6px;padding:.5rem .75rem;margin:.5rem 0}
.reveal{background:#fff7ed;border:2px solid #c2410c;border-radius:8px;padding:.75rem 1rem;margin:.5rem 0}
.reveal code{word-break:break-all;font-size:1rem}
.muted{color:#4f566b}
dl.facts{display:grid;grid-template-columns:minmax(6rem,max-content) minmax(8rem,1fr);gap:.25rem 1.25rem;margin:0}
dl.facts dt{color:#4f566b}dl.facts dd{margin:0;overflow-wrap:anywhere}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:1rem}
figure{margin:0}figcaption{font-weight:600}
svg.chart{width:100%;height:auto;background:#fff}
.pager{display:flex;gap:1rem;margin:.75rem 0}
nav.lists{display:flex;flex-wrap:wrap;gap:1rem;margin:0 0 1rem}nav.lists a[aria-current=page]{font-weight:700;color:#1a1f36;text-decoration:none}
.badge{display:inline-block;padding:0 .4rem;border-radius:4px;background:#e5e7eb;font-size:.85rem}
.badge.warned{background:#fde68a;color:#713f12;font-weight:600}.badge.late{background:#b91c1c;color:#fff;font-weight:600}
tr.warned td{background:#fffbeb}tr.late td{background:#fef2f2}tr.warned td:first-child{box-shadow:inset 4px 0 #d97706}tr.late td:first-child{box-shadow:inset 4px 0 #b91c1c}
td.einvoice{min-width:14rem}
.einvoice-error{color:#7f1d1d;font-size:.85rem;max-width:20rem;overflow-wrap:anywhere}
.field-error{color:#7f1d1d;font-weight:600;margin:.2rem 0}
[aria-invalid=true]{border:2px solid #b91c1c}
.check{display:flex;gap:.4rem;align-items:center;margin:.2rem 0}.check label{display:inline;font-weight:400;margin:0}
fieldset{border:1px solid #c5cad6;border-radius:6px;margin:.6rem 0}
fieldset.bare{border:0;margin:0;padding:0;min-width:0}
pre{white-space:pre-wrap;word-break:break-all;font-size:.8rem;margin:.25rem 0}
.email-text{word-break:normal;overflow-wrap:anywhere;padding:1rem}
@media (max-width:40rem){nav.sections{flex-basis:100%;padding:.5rem 1rem}nav.sections ul{display:flex;flex-wrap:wrap;gap:.25rem}
input[type=text],input[type=email],input[type=password],input[type=url],input[type=number],input[type=datetime-local],select,textarea{width:100%}}
`;

/**
 * Progressive enhancement only: every form works without it. It shows progress on submit,
 * asks before destructive actions, and copies links; its words are the page's, from `<body>`
 * (`scriptWords` in layout.ts).
 */
export const SCRIPT = `
document.addEventListener('submit', function (event) {
  var form = event.target;
  var question = form.getAttribute('data-confirm');
  if (question && !window.confirm(question)) { event.preventDefault(); return; }
  var button = event.submitter || form.querySelector('button[type=submit],button:not([type])');
  if (button) {
    setTimeout(function () { button.disabled = true; button.setAttribute('aria-busy', 'true'); button.textContent = document.body.getAttribute('data-working') || 'Working…'; }, 0);
  }
});
document.addEventListener('click', function (event) {
  var button = event.target.closest && event.target.closest('[data-copy]');
  if (!button) return;
  var text = button.getAttribute('data-copy');
  var done = function () { button.textContent = document.body.getAttribute('data-copied') || 'Copied'; };
  if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, done); else done();
});
`;
