import { conflict, idText, notFound } from '@billing/contracts';
import { html, validate } from '@billing/service';
import type { Express, Request, Response, Router } from 'express';
import { z } from 'zod';
import type { SqlExecutor } from '@billing/eventstore';
import { findOrganization } from '../organizations/read-model';
import { LOGIN_CSRF_COOKIE, readCookie, sameToken } from './auth';
import { languageOfRequest, translator } from './i18n';
import { sendBareDocument } from './layout';
import { MIN_PASSWORD_LENGTH, hashPassword } from './passwords';
import { type DashboardStore, type DashboardUser, ROLES, digest, newSecret } from './store';

const INVITATION_TTL_MS = 7 * 24 * 60 * 60_000;

const CreateUserBody = z.strictObject({
  email: z
    .email()
    .max(254)
    .transform((email) => email.toLowerCase()),
  role: z.enum(ROLES),
  password: z.string().min(MIN_PASSWORD_LENGTH).max(200).optional(),
});
const UserParams = z.object({ org_id: idText().min(1), user_id: idText().min(1) });

const userView = (user: DashboardUser) => ({
  object: 'dashboard_user',
  id: user.id,
  organization_id: user.organization_id,
  email: user.email,
  role: user.role,
  status: user.password_hash ? 'active' : 'invited',
  created_at: user.created_at,
});

/**
 * Dashboard users under the admin API (after the admin token check):
 * `POST /admin/v1/organizations/{org_id}/users` `{ email, role, password? }` creates an active
 * user with a password, or an invited one whose `invite_path` sets it;
 * `GET .../users` lists them; `DELETE .../users/{user_id}` removes one and ends their sessions.
 */
export function mountDashboardUserAdminRoutes(
  app: Express,
  options: { store: DashboardStore; sql: SqlExecutor; schema: string; now: () => Date },
): void {
  const { store } = options;
  const users = '/admin/v1/organizations/:org_id/users';
  const organizationExists = async (req: Request, _res: Response, next: (err?: unknown) => void) => {
    next(
      (await findOrganization(options.sql, options.schema, String(req.params.org_id)))
        ? undefined
        : notFound('Organization not found'),
    );
  };
  app.post(users, validate({ body: CreateUserBody }), organizationExists, async (req, res) => {
    const body = req.body as z.infer<typeof CreateUserBody>;
    const invite = body.password ? undefined : newSecret();
    const now = options.now();
    const created = await store.createUser({
      organizationId: String(req.params.org_id),
      email: body.email,
      role: body.role,
      passwordHash: body.password ? await hashPassword(body.password) : null,
      inviteHash: invite ? digest(invite) : null,
      inviteExpiresAt: invite ? new Date(now.getTime() + INVITATION_TTL_MS) : null,
      now,
    });
    if (!created) throw conflict('A dashboard user with this email exists');
    res.status(201).json({ ...userView(created), ...(invite && { invite_path: `/dashboard/invite/${invite}` }) });
  });
  app.get(users, organizationExists, async (req, res) => {
    const list = await store.usersOf(String(req.params.org_id));
    res.json({ object: 'list', data: list.map(userView), has_more: false });
  });
  app.delete(`${users}/:user_id`, validate({ params: UserParams }), async (req, res) => {
    const { org_id, user_id } = req.params as z.infer<typeof UserParams>;
    if (!(await store.deleteUser(org_id, user_id))) throw notFound('Dashboard user not found');
    res.json({ object: 'dashboard_user', id: user_id, deleted: true });
  });
}

/** `/dashboard/invite/<token>`: an invited user chooses a password once, then signs in. */
export function inviteRoutes(
  router: Router,
  store: DashboardStore,
  now: () => Date,
  loginCsrf: (req: Request, res: Response) => string,
  refuseCsrf: (res: Response) => void,
): void {
  const form = (req: Request, res: Response, user: DashboardUser, error?: string, status = 200) => {
    const csrf = loginCsrf(req, res);
    const t = translator(languageOfRequest(req));
    const body = html`<h1>${t('Join as {email}', { email: user.email })}</h1>
      ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
      <form class="card" method="post">
        <input type="hidden" name="_csrf" value="${csrf}" />
        <label for="password">${t('Choose a password (at least {min} characters)', { min: MIN_PASSWORD_LENGTH })}</label
        ><input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          minlength="${MIN_PASSWORD_LENGTH}"
          required
        />
        <div><button type="submit">${t('Set password')}</button></div>
      </form>`;
    sendBareDocument(res, status, t('Accept invitation'), body);
  };
  const invited = (req: Request) => store.userByInvite(digest(String(req.params.token)), now());
  const gone = (res: Response) => {
    const t = translator(languageOfRequest(res.req));
    sendBareDocument(
      res,
      404,
      t('Invitation'),
      html`<h1>${t('Invitation not found')}</h1>
        <p>${t('This invitation was used or has expired. Ask an owner for a new one.')}</p>`,
    );
  };
  router.get('/invite/:token', async (req, res) => {
    const user = await invited(req);
    return user ? form(req, res, user) : gone(res);
  });
  router.post('/invite/:token', async (req, res) => {
    if (!sameToken(req.body?._csrf, readCookie(req, LOGIN_CSRF_COOKIE))) return refuseCsrf(res);
    const user = await invited(req);
    if (!user) return gone(res);
    const password = String(req.body?.password ?? '');
    if (password.length < MIN_PASSWORD_LENGTH)
      return form(
        req,
        res,
        user,
        translator(languageOfRequest(req))('Use at least {min} characters.', { min: MIN_PASSWORD_LENGTH }),
        422,
      );
    await store.setPassword(user.id, await hashPassword(password));
    res.redirect(303, '/dashboard/login');
  });
}
