import type { Request, Response } from 'express';
import { type Html, html } from '@billing/service';
import { type DashboardLanguage, type Translate, languageOfRequest, translator } from './i18n';
import type { PageContext, PageState } from './page';

export const SECTIONS: Array<{ section: string; label: string; path: string; sandboxOnly?: boolean }> = [
  { section: 'overview', label: 'Overview', path: '' },
  { section: 'products', label: 'Products', path: '/products' },
  { section: 'coupons', label: 'Coupons and codes', path: '/coupons' },
  { section: 'payment-links', label: 'Payment links', path: '/payment-links' },
  { section: 'customers', label: 'Customers', path: '/customers' },
  { section: 'payments', label: 'Payments', path: '/payments' },
  { section: 'subscriptions', label: 'Subscriptions', path: '/subscriptions' },
  { section: 'einvoices', label: 'E-invoices', path: '/einvoices' },
  { section: 'webhooks', label: 'Webhooks', path: '/webhooks' },
  { section: 'events', label: 'Events', path: '/events' },
  { section: 'emails', label: 'Emails', path: '/emails' },
  { section: 'api-keys', label: 'API keys', path: '/api-keys' },
  { section: 'settings', label: 'Settings', path: '/settings' },
  { section: 'test-clocks', label: 'Test clocks', path: '/test-clocks', sandboxOnly: true },
  { section: 'team', label: 'Team', path: '/team' },
];

/** Every dashboard page's head: the one stylesheet and the one script, both served by the gateway. */
function head(title: string): Html {
  return html`<head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title}</title>
    <link rel="stylesheet" href="/dashboard/assets/app.css" />
    <script src="/dashboard/assets/app.js" defer></script>
  </head>`;
}

/** What the page's script says (assets.ts), in the page's language: attributes of `<body>`. */
const scriptWords = (t: Translate) => html`data-working="${t('Working…')}" data-copied="${t('Copied')}"`;

/** A page with no organization chrome: sign-in, invitations, the operator's organization list. */
export function bareDocument(req: Request, title: string, body: Html, signOut?: Html): Html {
  const language = languageOfRequest(req);
  const t = translator(language);
  return html`<!doctype html>
    <html lang="${language}">
      ${head(`${title} · ${t('Billing dashboard')}`)}
      <body ${scriptWords(t)}>
        <a class="skip" href="#main">${t('Skip to content')}</a>
        <header class="top">
          <a class="brand" href="/dashboard">${t('Billing dashboard')}</a>
          ${languageSwitch(req, language, t)}${signOut ? html`<div class="who">${signOut}</div>` : ''}
        </header>
        <main id="main">${body}</main>
      </body>
    </html>`;
}

/** Answers with a bare page (sign-in, refusals, invitations), in the user's language. */
export function sendBareDocument(res: Response, status: number, title: string, body: Html): void {
  res
    .status(status)
    .type('html')
    .send(String(bareDocument(res.req, title, body)));
}

export function signOutForm(csrfToken: string, t: Translate): Html {
  return html`<form class="inline" method="post" action="/dashboard/logout">
    <input type="hidden" name="_csrf" value="${csrfToken}" /><button type="submit">${t('Sign out')}</button>
  </form>`;
}

/** The link to the other language, named in that language, back to the same page. */
function languageSwitch(req: Request, language: DashboardLanguage, t: Translate): Html {
  const other = language === 'zh-TW' ? { code: 'en', name: 'English' } : { code: 'zh-TW', name: '中文' };
  const back = encodeURIComponent(req.originalUrl);
  return html`<nav class="lang" aria-label="${t('Language')}">
    <a href="/dashboard/language/${other.code}?back=${back}" lang="${other.code}" hreflang="${other.code}"
      >${other.name}</a
    >
  </nav>`;
}

/** The organization's pages: who is signed in, the environment switch, the sections. */
export function pageDocument(ctx: PageContext, section: string, title: string, state: PageState, body: Html): Html {
  const { t } = ctx;
  const sandbox = ctx.environment === 'SANDBOX';
  const who =
    ctx.session.principal.kind === 'operator'
      ? html`<span>${t('Operator')} · <a href="/dashboard">${t('All organizations')}</a></span>`
      : html`<span>${ctx.session.principal.user.email} (${t(ctx.role)})</span>`;
  const rest = ctx.req.path.split('/').slice(3).join('/');
  const envLink = (slug: 'sandbox' | 'production', label: string) => {
    const current = ctx.envSlug === slug;
    const target = `/dashboard/${ctx.organization.id}/${slug}${rest && !rest.includes('/') ? `/${rest}` : ''}`;
    return html`<a href="${target}" ${current ? html` aria-current="page"` : ''}>${label}</a>`;
  };
  const sections = SECTIONS.filter((s) => sandbox || !s.sandboxOnly);
  return html`<!doctype html>
    <html lang="${ctx.language}">
      ${head(`${title} · ${sandbox ? `${t('Sandbox')} · ` : ''}${ctx.organization.name}`)}
      <body ${scriptWords(t)}>
        <a class="skip" href="#main">${t('Skip to content')}</a>
        <header class="top">
          <a class="brand" href="${ctx.base}">${ctx.organization.name}</a>
          <nav class="envs" aria-label="${t('Environment')}">
            ${envLink('sandbox', t('Sandbox'))}${envLink('production', t('Production'))}
          </nav>
          <form class="search" role="search" method="get" action="${ctx.base}/search">
            <input
              id="search-box"
              name="q"
              type="search"
              aria-label="${t('Search')}"
              maxlength="100"
              value="${ctx.req.path.endsWith('/search') ? (ctx.query.q ?? '') : ''}"
              placeholder="${t('Email, name, id or invoice number')}"
            />
          </form>
          ${languageSwitch(ctx.req, ctx.language, t)}
          <div class="who">${who}${signOutForm(ctx.session.csrfToken, t)}</div>
        </header>
        ${sandbox ? html`<p class="sandbox" role="note">${t('Sandbox: test data only, no real money moves.')}</p>` : ''}
        <div class="layout">
          <nav class="sections" aria-label="${t('Sections')}">
            <ul>
              ${sections.map(
                (s) =>
                  html`<li>
                    <a href="${ctx.base}${s.path}" ${s.section === section ? html` aria-current="page"` : ''}
                      >${t(s.label)}</a
                    >
                  </li>`,
              )}
            </ul>
          </nav>
          <main id="main">
            <h1>${title}${sandbox ? html` <span class="badge">${t('Sandbox')}</span>` : ''}</h1>
            ${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}${state.reveal ?? ''}${body}
          </main>
        </div>
      </body>
    </html>`;
}
