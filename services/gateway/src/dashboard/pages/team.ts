import { html } from '@billing/service';
import { when } from '../html';
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
  title: () => 'Team',
  async view(ctx, state) {
    const users = await ctx.api.admin<{ data: User[] }>('GET', '/users');
    const manage = ctx.role !== 'member';
    const self = ctx.session.principal.kind === 'user' ? ctx.session.principal.user.id : undefined;
    const rows = users.data.map(
      (u) =>
        html`<tr>
          <td>${u.email}</td>
          <td>${u.role}</td>
          <td>${u.status}</td>
          <td>${when(u.created_at)}</td>
          <td>
            ${
              manage && u.id !== self
                ? buttonForm(
                    ctx,
                    'remove',
                    'Remove',
                    { user_id: u.id },
                    { confirm: `Remove ${u.email}?`, danger: true, accessibleName: `Remove ${u.email}` },
                  )
                : ''
            }
          </td>
        </tr>`,
    );
    return html`${errorFor(state, 'remove')}${table('Dashboard users', ['Email', 'Role', 'Status', 'Added', ''], rows, 'No users yet.')}
    ${
      manage
        ? html`<h2 id="invite">Invite a user</h2>
            <form class="card" method="post" aria-labelledby="invite">
              ${formFields(ctx, 'invite')}${errorFor(state, 'invite')}
              ${field('u-email', 'Email', { name: 'email', type: 'email', value: state.form?.email, required: true })}
              ${select(
                'u-role',
                'Role',
                'role',
                [
                  ['member', 'Member (no keys, no users)'],
                  ['owner', 'Owner'],
                ],
                state.form?.role,
              )}
              <div><button type="submit">Create invitation</button></div>
            </form>`
        : html`<p class="muted">Only an owner can invite or remove users.</p>`
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
        return {
          notice: `Invitation for ${created.email} created.`,
          reveal: html`<div class="reveal" role="status">
            <p><strong>Invitation link</strong> for ${created.email} (shown once, valid 7 days): send it to them.</p>
            <p><code>${link}</code> <button type="button" class="secondary" data-copy="${link}">Copy</button></p>
          </div>`,
        };
      },
    },
    remove: {
      ownerOnly: true,
      async run(ctx, form) {
        await ctx.api.admin('DELETE', `/users/${encodeURIComponent(form.user_id ?? '')}`);
        return { notice: 'User removed.' };
      },
    },
  },
};
