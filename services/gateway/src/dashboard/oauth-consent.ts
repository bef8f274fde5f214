import { type OAuthScope, isOAuthScope } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import { type Html, html } from '@billing/service';
import type { Request, Response, Router } from 'express';
import { type OAuthApp, findApp } from '../oauth/apps';
import type { Provider } from '../oauth/oidc-types';
import { CONSENT_PATH_PREFIX } from '../oauth/provider';
import { findOrganization } from '../organizations/read-model';
import { SESSION_COOKIE, readCookie, sameToken, setCookie } from './auth';
import { type Translate, languageOfRequest, markup, translator } from './i18n';
import { bareDocument, sendBareDocument, signOutForm } from './layout';
import type { DashboardStore, DashboardUser, Session } from './store';

export interface ConsentOptions {
  provider: Provider;
  /** The API the tokens are for: the resource the `*:read` scopes are granted on. */
  resource: string;
}

interface ConsentContext extends ConsentOptions {
  store: DashboardStore;
  sql: SqlExecutor;
  schema: string;
  now: () => Date;
}

/** Where a sign-in returns to finish an app's authorization request. */
const RETURN_COOKIE = 'dashboard_oauth_return';
const CONSENT_PATH = /^\/dashboard\/oauth\/consent\/[\w-]+$/;

/**
 * After signing in, the consent page that sent the user to sign in (once), if any; clears it.
 * Only a consent page's path is followed: the cookie cannot send anyone elsewhere.
 */
export function consentToReturnTo(req: Request, res: Response): string | undefined {
  const path = readCookie(req, RETURN_COOKIE);
  if (path === undefined) return undefined;
  setCookie(req, res, RETURN_COOKIE, '', 0);
  return CONSENT_PATH.test(path) ? path : undefined;
}

/** The words each scope shows on the consent page. */
const SCOPE_WORDS: Record<OAuthScope, string> = {
  openid: 'Know who you are (your dashboard user id)',
  'products:read': 'Read products and their prices',
  'orders:read': 'Read orders, what they paid and their refunds',
  'subscriptions:read': 'Read subscriptions',
  'customers:read': 'Read customers, their emails and names',
  'analytics:read': 'Read revenue, MRR and subscription metrics',
};

/**
 * The consent step of an app's authorization request (docs/oauth.md): oidc-provider sends the
 * user here; a signed-in owner of the app's organization approves or denies. Approving grants
 * exactly the scopes the app asked for, for the app's organization and environment.
 */
export function mountConsent(router: Router, context: ConsentContext): void {
  const path = `${CONSENT_PATH_PREFIX.slice('/dashboard'.length)}:uid`;
  router.get(path, async (req, res) => {
    const found = await consentRequest(req, res, context);
    if (!found) return;
    const { session, user, app, scopes } = found;
    allowFormRedirectTo(res, String(found.redirectUri));
    const t = translator(languageOfRequest(req));
    const organization = (await findOrganization(context.sql, context.schema, app.organization_id))?.name ?? '';
    res
      .type('html')
      .send(
        String(
          bareDocument(
            req,
            t('Connect an app'),
            consentPage(t, { app, organization, scopes, user, session }),
            signOutForm(session.csrfToken, t),
          ),
        ),
      );
  });

  router.post(path, async (req, res) => {
    const found = await consentRequest(req, res, context);
    if (!found) return;
    const { session, user, app, scopes, grantId: existing } = found;
    if (!sameToken(req.body?._csrf, session.csrfToken))
      return refuse(
        res,
        'This form has expired or did not come from the dashboard. Go back, reload the page and try again.',
      );
    if (req.body?.decision !== 'approve') {
      return context.provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'The organization did not allow the app' },
        { mergeWithLastSubmission: false },
      );
    }
    const grant = await grantOf(context.provider, existing, user.id, app.client_id);
    // Every scope is also one the provider publishes (discovery's scopes_supported), so it asks
    // for each as its own; the read scopes are then granted on the API, where tokens carry them.
    if (scopes.length > 0) grant.addOIDCScope(scopes.join(' '));
    const apiScopes = scopes.filter((scope) => scope !== 'openid');
    if (apiScopes.length > 0) grant.addResourceScope(context.resource, apiScopes.join(' '));
    const grantId = await grant.save();
    await context.provider.interactionFinished(
      req,
      res,
      { login: { accountId: user.id }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  });
}

/**
 * The signed-in owner, the app and what it asks, or undefined once the answer is sent: to
 * sign in (then back here), or a refusal (a member, another organization's user, an operator,
 * an expired request).
 */
async function consentRequest(req: Request, res: Response, context: ConsentContext) {
  const token = readCookie(req, SESSION_COOKIE);
  const session = token ? await context.store.findSession(token, context.now()) : undefined;
  if (!session) {
    setCookie(req, res, RETURN_COOKIE, req.originalUrl, 60 * 60);
    res.redirect(303, '/dashboard/login');
    return undefined;
  }
  const details = await context.provider.interactionDetails(req, res).catch(() => undefined);
  const app = details && (await findApp(context.sql, context.schema, String(details.params.client_id)));
  if (!details || !app) {
    refuse(res, 'This authorization request has expired. Go back to the app and connect again.', 400);
    return undefined;
  }
  const user = ownerOf(session, app);
  if (!user) {
    refuse(res, 'Only an owner of the organization that registered this app may connect it.');
    return undefined;
  }
  const scopes = String(details.params.scope ?? '')
    .split(' ')
    .filter(isOAuthScope);
  return { session, user, app, scopes, redirectUri: details.params.redirect_uri, grantId: details.grantId };
}

/** The grant the user gave the app before, to add the scopes asked now; else a new one. */
async function grantOf(provider: Provider, grantId: string | undefined, accountId: string, clientId: string) {
  const existing = grantId ? await provider.Grant.find(grantId) : undefined;
  return existing && existing.accountId === accountId && existing.clientId === clientId
    ? existing
    : new provider.Grant({ accountId, clientId });
}

const ownerOf = (session: Session, app: OAuthApp): DashboardUser | undefined =>
  session.principal.kind === 'user' &&
  session.principal.user.role === 'owner' &&
  session.principal.user.organization_id === app.organization_id
    ? session.principal.user
    : undefined;

/**
 * The approval's redirects end at the app: a browser applies the page's form-action to every
 * redirect a form's submission follows, so the app's origin joins 'self' there.
 */
function allowFormRedirectTo(res: Response, redirectUri: string): void {
  const policy = res.get('Content-Security-Policy');
  if (!policy || !URL.canParse(redirectUri)) return;
  res.set(
    'Content-Security-Policy',
    policy.replace("form-action 'self'", `form-action 'self' ${new URL(redirectUri).origin}`),
  );
}

function consentPage(
  t: Translate,
  page: { app: OAuthApp; organization: string; scopes: OAuthScope[]; user: DashboardUser; session: Session },
): Html {
  const environment = page.app.environment === 'PRODUCTION' ? t('Production') : t('Sandbox');
  return html`<h1>${t('Connect {app}?', { app: page.app.name })}</h1>
    <section class="card">
      <p>
        ${markup(t, '{app} asks to read the data of {organization} in {environment}:', {
          app: html`<strong>${page.app.name}</strong>`,
          organization: html`<strong>${page.organization}</strong>`,
          environment: html`<strong>${environment}</strong>`,
        })}
      </p>
      <ul>
        ${page.scopes.map((scope) => html`<li>${t(SCOPE_WORDS[scope])} <code>${scope}</code></li>`)}
      </ul>
      <p>${t('It cannot change anything, and never sees your password or API keys.')}</p>
      <p>${t('Signed in as {email}.', { email: page.user.email })}</p>
    </section>
    <form method="post" class="card">
      <input type="hidden" name="_csrf" value="${page.session.csrfToken}" />
      <button type="submit" name="decision" value="approve">${t('Approve')}</button>
      <button type="submit" name="decision" value="deny" class="secondary">${t('Deny')}</button>
    </form>`;
}

function refuse(res: Response, english: string, status = 403): void {
  const t = translator(languageOfRequest(res.req));
  sendBareDocument(
    res,
    status,
    t('Refused'),
    html`<h1>${t('Refused')}</h1>
      <p class="error" role="alert">${t(english)}</p>`,
  );
}
