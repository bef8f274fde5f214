import { html } from '@billing/service';
import { when } from '../html';
import { markup } from '../i18n';
import { type DashboardPage, buttonForm, errorFor, field, formFields, table } from '../page';
import { text } from './forms';

interface Connection {
  user_id: string;
  scopes: string[];
  connected_at: string;
}

interface App {
  id: string;
  name: string;
  environment: string;
  redirect_uris: string[];
  created_at: string;
  connections: Connection[];
}

/**
 * Settings › Connected apps: the apps that read this organization's data in this environment
 * with OAuth (docs/oauth.md), who approved each and for what; owners register and remove them.
 */
export const connectedAppsPage: DashboardPage = {
  path: 'settings/connected-apps',
  section: 'settings',
  title: (ctx) => ctx.t('Connected apps'),
  async view(ctx, state) {
    const { t } = ctx;
    const [apps, users] = await Promise.all([
      ctx.api.admin<{ data: App[] }>('GET', '/oauth_apps'),
      ctx.api.admin<{ data: Array<{ id: string; email: string }> }>('GET', '/users'),
    ]);
    const emailOf = new Map(users.data.map((user) => [user.id, user.email]));
    const manage = ctx.role !== 'member';
    const rows = apps.data
      .filter((app) => app.environment === ctx.environment)
      .map(
        (app) =>
          html`<tr>
            <td><strong>${app.name}</strong><br /><code>${app.id}</code></td>
            <td>${app.redirect_uris.map((uri) => html`<code>${uri}</code><br />`)}</td>
            <td>
              ${
                app.connections.length === 0
                  ? html`<span class="muted">${t('Not connected yet')}</span>`
                  : app.connections.map(
                      (connection) =>
                        html`${emailOf.get(connection.user_id) ?? connection.user_id} ·
                          ${when(connection.connected_at)}<br /><span class="muted">${connection.scopes.join(' ')}</span
                          ><br />`,
                    )
              }
            </td>
            <td>
              ${
                manage
                  ? buttonForm(
                      ctx,
                      'remove',
                      t('Remove'),
                      { client_id: app.id },
                      {
                        confirm: t('Remove {app}? It loses access at once.', { app: app.name }),
                        danger: true,
                        accessibleName: t('Remove {app}', { app: app.name }),
                      },
                    )
                  : ''
              }
            </td>
          </tr>`,
      );
    return html`<p class="muted">
        ${markup(
          t,
          'Apps that read this organization’s data in this environment with OAuth, as approved by an owner ({guide}).',
          {
            guide: html`<code>docs/oauth.md</code>`,
          },
        )}
      </p>
      ${errorFor(state, 'remove')}${table(
        t('Connected apps'),
        [t('App'), t('Redirect URIs'), t('Approved by'), ''],
        rows,
        t('No apps yet.'),
      )}
      ${
        manage
          ? html`<h2 id="register-app">${t('Register an app')}</h2>
              <form class="card" method="post" aria-labelledby="register-app">
                ${formFields(ctx, 'register')}${errorFor(state, 'register')}
                ${field('app-name', t('Name'), { name: 'name', value: state.form?.name, required: true })}
                <label for="app-redirects">${t('Redirect URIs (one a line)')}</label
                ><textarea
                  id="app-redirects"
                  name="redirect_uris"
                  rows="3"
                  required
                  aria-describedby="app-redirects-hint"
                >
${state.form?.redirect_uris ?? ''}</textarea>
                <div class="muted" id="app-redirects-hint">
                  ${t('https, or http on 127.0.0.1 or localhost while developing; matched exactly.')}
                </div>
                <div><button type="submit">${t('Register')}</button></div>
              </form>`
          : html`<p class="muted">${t('Only an owner can register or remove apps.')}</p>`
      }`;
  },
  actions: {
    register: {
      ownerOnly: true,
      async run(ctx, form) {
        const created = await ctx.api.admin<{ id: string; name: string; client_secret: string }>(
          'POST',
          '/oauth_apps',
          {
            name: text(form.name),
            environment: ctx.environment,
            redirect_uris: (form.redirect_uris ?? '')
              .split(/\r?\n/)
              .map((line) => line.trim())
              .filter(Boolean),
          },
        );
        const { t } = ctx;
        return {
          notice: t('App {app} registered.', { app: created.name }),
          reveal: html`<div class="reveal" role="status">
            <p>${t('Give the app its client id and secret. The secret is shown only this once.')}</p>
            <p>${t('Client id')}: <code>${created.id}</code></p>
            <p>
              ${t('Client secret')}: <code>${created.client_secret}</code>
              <button type="button" class="secondary" data-copy="${created.client_secret}">${t('Copy')}</button>
            </p>
          </div>`,
        };
      },
    },
    remove: {
      ownerOnly: true,
      async run(ctx, form) {
        await ctx.api.admin('DELETE', `/oauth_apps/${encodeURIComponent(form.client_id ?? '')}`);
        return { notice: ctx.t('App removed: its tokens no longer work.') };
      },
    },
  },
};
