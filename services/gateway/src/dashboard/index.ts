import type { EventStore, SqlExecutor } from '@billing/eventstore';
import express, { type Express, type NextFunction, type Request, type Response, type Router } from 'express';
import { findOrganization } from '../organizations/read-model';
import { STYLESHEET, SCRIPT } from './assets';
import { Authenticator, LOGIN_CSRF_COOKIE, SESSION_COOKIE, loginCsrf, readCookie, sameToken, setCookie } from './auth';
import { ApiFailure, GatewayClient } from './client';
import { type Html, formatDateTime, html } from '@billing/service';
import { languageOfRequest, rememberLanguage, translator } from './i18n';
import { bareDocument, pageDocument, sendBareDocument, signOutForm } from './layout';
import type { CredentialSigner } from './loopback';
import { ENVIRONMENTS, type EnvSlug, type PageContext, type PageState } from './page';
import { fieldProblem, refusalText } from './refusals';
import { CSV_EXPORTS, PAGES } from './pages';
import { inviteRoutes, mountDashboardUserAdminRoutes } from './users';
import { DashboardStore, type Session, dashboardDdl } from './store';
import { type ConsentOptions, consentToReturnTo, mountConsent } from './oauth-consent';

export { dashboardIdentity, CredentialSigner } from './loopback';

export interface DashboardOptions {
  sql: SqlExecutor;
  schema: string;
  now: () => Date;
  adminToken: string;
  signer: CredentialSigner;
  /** The consent step of apps' OAuth authorization requests, when the gateway runs the server. */
  consent?: ConsentOptions;
}

export async function createDashboardTables(store: EventStore) {
  await store.migrateSchema(dashboardDdl(store.tables.schema));
}

const NOTICE_COOKIE = 'dashboard_notice';

const securityHeaders = (_req: Request, res: Response, next: NextFunction) => {
  res.set({
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'same-origin',
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy':
      "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  });
  next();
};

/** The merchant dashboard at /dashboard (docs/decisions/0011-merchant-dashboard.md). */
export function mountDashboard(app: Express, options: DashboardOptions): void {
  const store = new DashboardStore(options.sql, options.schema);
  const auth = new Authenticator(store, options.adminToken, options.now);
  const router: Router = express.Router();
  router.use(securityHeaders, express.urlencoded({ extended: false, limit: '20kb' }));
  router.get(
    '/assets/app.css',
    (_req, res) => void res.type('css').set('Cache-Control', 'max-age=300').send(STYLESHEET),
  );
  router.get('/assets/app.js', (_req, res) => void res.type('js').set('Cache-Control', 'max-age=300').send(SCRIPT));

  router.get('/login', (req, res) => sendLogin(req, res, {}));
  // The language link of every page: remembered, then back where the user was.
  router.get('/language/:language', (req, res) => {
    const language = req.params.language;
    if (language !== 'zh-TW' && language !== 'en') return notFoundPage(res);
    rememberLanguage(req, res, language);
    const back = typeof req.query.back === 'string' ? req.query.back : '';
    res.redirect(303, /^\/dashboard(\/[^/\\]|$)/.test(back) ? back : '/dashboard');
  });
  router.post('/login', async (req, res) => {
    if (!sameToken(req.body?._csrf, readCookie(req, LOGIN_CSRF_COOKIE))) return refuseCsrf(res);
    const { email = '', password = '', admin_token: adminToken = '' } = req.body as Record<string, string>;
    const result = adminToken
      ? await auth.withAdminToken(adminToken, req.ip ?? 'unknown')
      : await auth.withPassword(email, password);
    if (!result.ok) {
      const t = translator(languageOfRequest(req));
      const message =
        result.reason === 'locked'
          ? t('Too many failed attempts: signing in is locked until {until}.', { until: formatDateTime(result.until!) })
          : t('Wrong email or password (or admin token).');
      return sendLogin(req, res, { error: message, email }, result.reason === 'locked' ? 429 : 401);
    }
    const { token } = await auth.startSession(result.principal);
    setCookie(req, res, SESSION_COOKIE, token);
    res.redirect(303, consentToReturnTo(req, res) ?? '/dashboard');
  });

  const withSession = async (req: Request, res: Response, next: NextFunction) => {
    const token = readCookie(req, SESSION_COOKIE);
    const session = token ? await store.findSession(token, options.now()) : undefined;
    if (!session) {
      if (req.method === 'GET') return res.redirect(303, '/dashboard/login');
      const t = translator(languageOfRequest(req));
      return sendBareDocument(
        res,
        401,
        t('Signed out'),
        html`<h1>${t('Signed out')}</h1>
          <p>${t('Your session ended.')} <a href="/dashboard/login">${t('Sign in again')}</a>.</p>`,
      );
    }
    if (req.method === 'POST' && !sameToken(req.body?._csrf, session.csrfToken)) return refuseCsrf(res);
    res.locals.dashboardSession = session;
    next();
  };

  router.post('/logout', withSession, async (req, res) => {
    await store.deleteSession(readCookie(req, SESSION_COOKIE)!);
    setCookie(req, res, SESSION_COOKIE, '', 0);
    res.redirect(303, '/dashboard/login');
  });

  inviteRoutes(router, store, options.now, loginCsrf, refuseCsrf);
  if (options.consent) {
    mountConsent(router, { ...options.consent, store, sql: options.sql, schema: options.schema, now: options.now });
  }

  router.get('/', withSession, async (req, res) => {
    const session = res.locals.dashboardSession as Session;
    if (session.principal.kind === 'user') {
      return res.redirect(303, `/dashboard/${session.principal.user.organization_id}/sandbox`);
    }
    res.type('html').send(String(await operatorHome(options, session, req)));
  });

  const basePath = '/:org/:env';
  // An email's HTML as buyers see it: its inline styles and https images, and nothing else
  // (no script, no form, an origin of its own).
  router.get(`${basePath}/emails/:id/html`, withSession, async (req, res) => {
    const ctx = await contextFor(req, res, options);
    if (!ctx) return notFoundPage(res);
    const email = await ctx.api
      .admin<{ html: string | null }>('GET', `/emails/${encodeURIComponent(String(req.params.id))}`)
      .catch(() => undefined);
    if (!email?.html) return notFoundPage(res);
    res
      .set(
        'Content-Security-Policy',
        "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; sandbox; frame-ancestors 'none'",
      )
      .type('html')
      .send(email.html);
  });
  for (const [name, send] of Object.entries(CSV_EXPORTS)) {
    router.get(`${basePath}/${name}`, withSession, async (req, res) => {
      const ctx = await contextFor(req, res, options);
      if (!ctx) return notFoundPage(res);
      await send(ctx);
    });
  }
  for (const page of PAGES) {
    const path = page.path ? `${basePath}/${page.path}` : basePath;
    router.get(path, withSession, async (req, res) => {
      const ctx = await contextFor(req, res, options);
      if (!ctx || (page.sandboxOnly && ctx.environment !== 'SANDBOX')) return notFoundPage(res);
      const notice = readCookie(req, NOTICE_COOKIE);
      if (notice) setCookie(req, res, NOTICE_COOKIE, '', 0);
      await renderPage(ctx, page, { errors: {}, notice });
    });
    router.post(path, withSession, async (req, res) => {
      const ctx = await contextFor(req, res, options);
      if (!ctx || (page.sandboxOnly && ctx.environment !== 'SANDBOX')) return notFoundPage(res);
      const form = req.body as Record<string, string>;
      const action = page.actions?.[form._action ?? ''];
      if (!action) return renderPage(ctx, page, { errors: { [form._action ?? '']: ctx.t('Unknown action.') } }, 400);
      if (action.ownerOnly && ctx.role === 'member') {
        return renderPage(
          ctx,
          page,
          { errors: { [form._action!]: ctx.t('Only an owner of the organization may do this.') } },
          403,
        );
      }
      try {
        const outcome = await action.run(ctx, form);
        if (outcome.reveal)
          return renderPage(ctx, page, { errors: {}, notice: outcome.notice, reveal: outcome.reveal });
        setCookie(req, res, NOTICE_COOKIE, outcome.notice, 60);
        const target = outcome.redirect ?? req.originalUrl;
        res.redirect(303, target.startsWith('/') ? target : `${ctx.base}/${target}`);
      } catch (error) {
        if (!(error instanceof ApiFailure)) throw error;
        const status = error.status >= 500 ? 502 : error.status;
        const fieldErrors = Object.fromEntries(
          error.details.filter((d) => d.path && d.message).map((d) => [d.path!, fieldProblem(d, ctx)]),
        );
        const explained = refusalText(error, ctx);
        await renderPage(ctx, page, { errors: { [form._action!]: explained }, form, fieldErrors }, status);
      }
    });
  }
  router.use((_req, res) => notFoundPage(res));
  app.use('/dashboard', router);
  mountDashboardUserAdminRoutes(app, { store, sql: options.sql, schema: options.schema, now: options.now });
}

async function renderPage(ctx: PageContext, page: (typeof PAGES)[number], state: PageState, status = 200) {
  let body: Html;
  try {
    body = await page.view(ctx, state);
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    if (error.status === 404) return notFoundPage(ctx.res);
    body = html`<p class="error" role="alert">${refusalText(error, ctx)}</p>`;
    status = error.status >= 500 ? 502 : status;
  }
  ctx.res
    .status(status)
    .type('html')
    .send(String(pageDocument(ctx, page.section, page.title(ctx), state, body)));
}

/**
 * The organization and environment of the URL, if this session may see them: a user only their
 * own organization (another's is 404, as if absent), the operator any that exists.
 */
async function contextFor(req: Request, res: Response, options: DashboardOptions): Promise<PageContext | undefined> {
  const session = res.locals.dashboardSession as Session;
  const orgId = String(req.params.org);
  const envSlug = String(req.params.env) as EnvSlug;
  if (!(envSlug in ENVIRONMENTS)) return undefined;
  if (session.principal.kind === 'user' && session.principal.user.organization_id !== orgId) return undefined;
  const organization = await findOrganization(options.sql, options.schema, orgId);
  if (!organization) return undefined;
  const environment = ENVIRONMENTS[envSlug];
  const actor =
    session.principal.kind === 'user'
      ? ({ type: 'dashboard_user', id: session.principal.user.id } as const)
      : ({ type: 'admin' } as const);
  const baseUrl = `http://127.0.0.1:${req.socket.localPort}`;
  const language = languageOfRequest(req);
  return {
    req,
    res,
    session,
    organization: { id: organization.id, name: organization.name },
    environment,
    envSlug,
    base: `/dashboard/${encodeURIComponent(orgId)}/${envSlug}`,
    api: new GatewayClient(baseUrl, options.signer, options.adminToken, orgId, environment, actor),
    role: session.principal.kind === 'operator' ? 'operator' : session.principal.user.role,
    now: options.now,
    params: Object.fromEntries(Object.entries(req.params).map(([k, v]) => [k, String(v)])),
    query: Object.fromEntries(Object.entries(req.query).filter(([, v]) => typeof v === 'string')) as Record<
      string,
      string
    >,
    language,
    t: translator(language),
  };
}

function sendLogin(req: Request, res: Response, state: { error?: string; email?: string }, status = 200) {
  const csrf = loginCsrf(req, res);
  const t = translator(languageOfRequest(req));
  const body = html`<h1>${t('Sign in')}</h1>
    ${state.error ? html`<p class="error" role="alert">${state.error}</p>` : ''}
    <form class="card" method="post" action="/dashboard/login">
      <h2>${t('Merchant user')}</h2>
      <input type="hidden" name="_csrf" value="${csrf}" /> <label for="email">${t('Email')}</label
      ><input id="email" name="email" type="email" autocomplete="username" required value="${state.email ?? ''}" />
      <label for="password">${t('Password')}</label
      ><input id="password" name="password" type="password" autocomplete="current-password" required />
      <div><button type="submit">${t('Sign in')}</button></div>
    </form>
    <form class="card" method="post" action="/dashboard/login">
      <h2>${t('Operator')}</h2>
      <input type="hidden" name="_csrf" value="${csrf}" /> <label for="admin_token">${t('Admin token')}</label
      ><input id="admin_token" name="admin_token" type="password" autocomplete="off" required />
      <div><button type="submit">${t('Sign in as operator')}</button></div>
    </form>`;
  sendBareDocument(res, status, t('Sign in'), body);
}

function refuseCsrf(res: Response) {
  const t = translator(languageOfRequest(res.req));
  sendBareDocument(
    res,
    403,
    t('Refused'),
    html`<h1>${t('Refused')}</h1>
      <p class="error" role="alert">
        ${t('This form has expired or did not come from the dashboard. Go back, reload the page and try again.')}
      </p>`,
  );
}

function notFoundPage(res: Response) {
  const t = translator(languageOfRequest(res.req));
  sendBareDocument(
    res,
    404,
    t('Not found'),
    html`<h1>${t('Not found')}</h1>
      <p>
        ${t('There is no such page, or it is not yours to see.')}
        <a href="/dashboard">${t('Back to the dashboard')}</a>.
      </p>`,
  );
}

const ORGS_PER_PAGE = 25;

/** The operator's home: every organization, newest first, paged. */
async function operatorHome(options: DashboardOptions, session: Session, req: Request): Promise<Html> {
  const page = Math.max(0, Number(req.query.page) || 0);
  const { rows } = await options.sql.query<{ id: string; name: string; created_at: Date | string }>(
    `SELECT id, name, created_at FROM ${options.schema}.organizations ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`,
    [ORGS_PER_PAGE + 1, page * ORGS_PER_PAGE],
  );
  const items = rows.slice(0, ORGS_PER_PAGE);
  const t = translator(languageOfRequest(req));
  const body = html`<h1>${t('Organizations')}</h1>
    ${
      items.length
        ? html`<ul>
            ${items.map(
              (o) =>
                html`<li><a href="/dashboard/${o.id}/sandbox">${o.name}</a> <span class="muted">${o.id}</span></li>`,
            )}
          </ul>`
        : html`<p>${t('No organizations yet.')}</p>`
    }
    <nav class="pager" aria-label="${t('Pages')}">
      ${page > 0 ? html`<a href="/dashboard?page=${page - 1}">${t('Previous page')}</a>` : ''}${
        rows.length > ORGS_PER_PAGE ? html`<a href="/dashboard?page=${page + 1}">${t('Next page')}</a>` : ''
      }
    </nav>`;
  return bareDocument(req, t('Organizations'), body, signOutForm(session.csrfToken, t));
}
