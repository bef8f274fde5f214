import { html } from '@billing/service';
import { when } from '../html';
import { markup } from '../i18n';
import { type DashboardPage, buttonForm, errorFor, field, formFields, select, table } from '../page';
import { text } from './forms';

interface User {
  id: string;
  email: string;
  role: string;
  status: string;
  created_at: string;
}

export const teamPage: DashboardPage = {
  path: 'team',
  section: 'team',
  title: (ctx) => ctx.t('Team'),
  async view(ctx, state) {
    const { t } = ctx;
    const users = await ctx.api.admin<{ data: User[] }>('GET', '/users');
    const manage = ctx.role !== 'member';
    const self = ctx.session.principal.kind === 'user' ? ctx.session.principal.user.id : undefined;
    const rows = users.data.map(
      (u) =>
        html`<tr>
          <td>${u.email}</td>
          <td>${t(u.role)}</td>
          <td>${t(u.status)}</td>
          <td>${when(u.created_at)}</td>
          <td>
            ${
              manage && u.id !== self
                ? buttonForm(
                    ctx,
                    'remove',
                    t('Remove'),
                    { user_id: u.id },
                    {
                      confirm: t('Remove {email}?', { email: u.email }),
                      danger: true,
                      accessibleName: t('Remove {email}', { email: u.email }),
                    },
                  )
                : ''
            }
          </td>
        </tr>`,
    );
    return html`${errorFor(state, 'remove')}${table(
      t('Dashboard users'),
      [t('Email'), t('Role'), t('Status'), t('Added'), ''],
      rows,
      t('No users yet.'),
    )}
    ${
      manage
        ? html`<h2 id="invite">${t('Invite a user')}</h2>
            <form class="card" method="post" aria-labelledby="invite">
              ${formFields(ctx, 'invite')}${errorFor(state, 'invite')}
              ${field('u-email', t('Email'), { name: 'email', type: 'email', value: state.form?.email, required: true })}
              ${select(
                'u-role',
                t('Role'),
                'role',
                [
                  ['member', t('Member (no keys, no users)')],
                  ['owner', t('Owner')],
                ],
                state.form?.role,
              )}
              <div><button type="submit">${t('Create invitation')}</button></div>
            </form>`
        : html`<p class="muted">${t('Only an owner can invite or remove users.')}</p>`
    }`;
  },
  actions: {
    invite: {
      ownerOnly: true,
      async run(ctx, form) {
        const created = await ctx.api.admin<{ email: string; invite_path: string }>('POST', '/users', {
          email: text(form.email),
          role: form.role,
        });
        const link = `${ctx.req.protocol}://${ctx.req.get('host')}${created.invite_path}`;
        const { t } = ctx;
        return {
          notice: t('Invitation for {email} created.', { email: created.email }),
          reveal: html`<div class="reveal" role="status">
            <p>
              ${markup(t, '{link} for {email} (shown once, valid 7 days): send it to them.', {
                link: html`<strong>${t('Invitation link')}</strong>`,
                email: created.email,
              })}
            </p>
            <p>
              <code>${link}</code> <button type="button" class="secondary" data-copy="${link}">${t('Copy')}</button>
            </p>
          </div>`,
        };
      },
    },
    remove: {
      ownerOnly: true,
      async run(ctx, form) {
        await ctx.api.admin('DELETE', `/users/${encodeURIComponent(form.user_id ?? '')}`);
        return { notice: ctx.t('User removed.') };
      },
    },
  },
};
