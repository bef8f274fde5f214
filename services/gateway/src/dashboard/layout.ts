import type { Response } from 'express';
import { type Html, html } from '@billing/service';
import type { PageContext, PageState } from './page';

export const SECTIONS: Array<{ section: string; label: string; path: string; sandboxOnly?: boolean }> = [
  { section: 'overview', label: 'Overview', path: '' },
  { section: 'products', label: 'Products', path: '/products' },
  { section: 'coupons', label: 'Coupons and codes', path: '/coupons' },
  { section: 'payment-links', label: 'Payment links', path: '/payment-links' },
  { section: 'customers', label: 'Customers', path: '/customers' },
  { section: 'subscriptions', label: 'Subscriptions', path: '/subscriptions' },
  { section: 'einvoices', label: 'E-invoices', path: '/einvoices' },
  { section: 'webhooks', label: 'Webhooks', path: '/webhooks' },
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

/** A page with no organization chrome: sign-in, invitations, the operator's organization list. */
export function bareDocument(title: string, body: Html, signOut?: Html): Html {
  return html`<!doctype html>
    <html lang="en">
      ${head(`${title} · Billing dashboard`)}
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <a class="brand" href="/dashboard">Billing dashboard</a>${
            signOut ? html`<div class="who">${signOut}</div>` : ''
          }
        </header>
        <main id="main">${body}</main>
      </body>
    </html>`;
}

/** Answers with a bare page (sign-in, refusals, invitations). */
export function sendBareDocument(res: Response, status: number, title: string, body: Html): void {
  res
    .status(status)
    .type('html')
    .send(String(bareDocument(title, body)));
}

export function signOutForm(csrfToken: string): Html {
  return html`<form class="inline" method="post" action="/dashboard/logout">
    <input type="hidden" name="_csrf" value="${csrfToken}" /><button type="submit">Sign out</button>
  </form>`;
}

/** The organization's pages: who is signed in, the environment switch, the sections. */
export function pageDocument(ctx: PageContext, section: string, title: string, state: PageState, body: Html): Html {
  const sandbox = ctx.environment === 'SANDBOX';
  const who =
    ctx.session.principal.kind === 'operator'
      ? html`<span>Operator · <a href="/dashboard">All organizations</a></span>`
      : html`<span>${ctx.session.principal.user.email} (${ctx.role})</span>`;
  const rest = ctx.req.path.split('/').slice(3).join('/');
  const envLink = (slug: 'sandbox' | 'production', label: string) => {
    const current = ctx.envSlug === slug;
    const target = `/dashboard/${ctx.organization.id}/${slug}${rest && !rest.includes('/') ? `/${rest}` : ''}`;
    return html`<a href="${target}" ${current ? html` aria-current="page"` : ''}>${label}</a>`;
  };
  const sections = SECTIONS.filter((s) => sandbox || !s.sandboxOnly);
  return html`<!doctype html>
    <html lang="en">
      ${head(`${title} · ${sandbox ? 'Sandbox · ' : ''}${ctx.organization.name}`)}
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <a class="brand" href="${ctx.base}">${ctx.organization.name}</a>
          <nav class="envs" aria-label="Environment">
            ${envLink('sandbox', 'Sandbox')}${envLink('production', 'Production')}
          </nav>
          <div class="who">${who}${signOutFormFor(ctx)}</div>
        </header>
        ${sandbox ? html`<p class="sandbox" role="note">Sandbox: test data only, no real money moves.</p>` : ''}
        <div class="layout">
          <nav class="sections" aria-label="Sections">
            <ul>
              ${sections.map(
                (s) =>
                  html`<li>
                    <a href="${ctx.base}${s.path}" ${s.section === section ? html` aria-current="page"` : ''}
                      >${s.label}</a
                    >
                  </li>`,
              )}
            </ul>
          </nav>
          <main id="main">
            <h1>${title}${sandbox ? html` <span class="badge">Sandbox</span>` : ''}</h1>
            ${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}${state.reveal ?? ''}${body}
          </main>
        </div>
      </body>
    </html>`;
}

const signOutFormFor = (ctx: PageContext) => signOutForm(ctx.session.csrfToken);
