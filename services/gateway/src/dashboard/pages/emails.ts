import { EMAIL_KINDS, type EmailKind } from '@billing/contracts';
import { type Html, html } from '@billing/service';
import { when } from '../html';
import { type DashboardPage, type PageContext, errorFor, formFields, pager, table } from '../page';

interface Email {
  id: string;
  kind: EmailKind;
  status: string;
  to: string | null;
  locale: string | null;
  subject: string | null;
  text: string | null;
  html: string | null;
  event_id: string;
  customer_id: string | null;
  attempts: number;
  error: string | null;
  created_at: string;
  sent_at: string | null;
}
type EmailSettings = Record<EmailKind, boolean>;

// English keys of the zh-TW table: the user's words are `t(...)` of them.
const KIND_LABELS: Record<EmailKind, string> = {
  receipt: 'Receipts (every payment)',
  payment_failed: 'Failed payments, with a link to update the card',
  trial_will_end: 'Trial ending (3 days before)',
  renewal_upcoming: 'Yearly renewal coming (7 days before)',
  subscription_canceled: 'Subscription canceled',
  refund: 'Refund issued',
  payment_instructions: 'ATM and convenience-store payment instructions',
  payment_reminder: 'ATM and convenience-store reminder (a day before the deadline)',
};

const STATUS_LABELS: Record<string, string> = {
  QUEUED: 'Waiting',
  SENDING: 'Sending',
  SENT: 'Sent',
  KEPT: 'Kept (not sent)',
  FAILED: 'Failed',
  SKIPPED: 'No recipient',
  INTERRUPTED: 'Interrupted (may have been sent)',
};

const emailPath = (ctx: PageContext, id: string) => `${ctx.base}/emails/${encodeURIComponent(id)}`;
const statusText = (ctx: PageContext, status: string) => {
  const label = STATUS_LABELS[status];
  return label ? ctx.t(label) : status;
};

/** The mailbox: every email written to buyers in this environment, and which kinds are sent. */
export const emailsPage: DashboardPage = {
  path: 'emails',
  section: 'emails',
  title: (ctx) => ctx.t('Emails'),
  async view(ctx, state) {
    const { t } = ctx;
    const query = new URLSearchParams({
      environment: ctx.environment,
      limit: '50',
      ...(ctx.query.after ? { starting_after: ctx.query.after } : {}),
    });
    const [mailbox, settings] = await Promise.all([
      ctx.api.admin<{ data: Email[]; has_more: boolean }>('GET', `/emails?${query}`),
      ctx.api.admin<EmailSettings>('GET', `/email_settings?environment=${ctx.environment}`),
    ]);
    // Two columns, so that the mailbox reads at a phone's width.
    const rows = mailbox.data.map(
      (e) =>
        html`<tr>
          <td>
            <a href="${emailPath(ctx, e.id)}">${e.subject ?? t(KIND_LABELS[e.kind])}</a>
            <div class="muted">${e.to ?? '—'} · ${when(e.created_at)}</div>
          </td>
          <td>${statusText(ctx, e.status)}</td>
        </tr>`,
    );
    const sandboxNote =
      ctx.environment === 'SANDBOX'
        ? html`<p class="muted">
            ${t('Sandbox keeps every email here instead of sending it: this is what buyers would get.')}
          </p>`
        : html``;
    return html`${sandboxNote}
      ${table(t('Emails to buyers'), [t('Email'), t('Status')], rows, t('No emails yet.'))}${pager(ctx, mailbox.has_more, mailbox.data.at(-1)?.id)}
      <h2 id="email-settings">${t('Emails buyers get')}</h2>
      <form class="card" method="post" aria-labelledby="email-settings">
        ${formFields(ctx, 'settings')}${errorFor(state, 'settings')}
        <fieldset>
          <legend>${t('Send')}</legend>
          ${EMAIL_KINDS.map(
            (kind) =>
              html`<div class="check">
                <input type="checkbox" id="email-${kind}" name="${kind}" ${settings[kind] ? html` checked` : ''} />
                <label for="email-${kind}">${t(KIND_LABELS[kind])}</label>
              </div>`,
          )}
        </fieldset>
        <div><button type="submit">${t('Save')}</button></div>
      </form>`;
  },
  actions: {
    settings: {
      ownerOnly: true,
      async run(ctx, form) {
        await ctx.api.admin('PATCH', '/email_settings', {
          environment: ctx.environment,
          ...Object.fromEntries(EMAIL_KINDS.map((kind) => [kind, form[kind] === 'on'])),
        });
        return { notice: ctx.t('Email settings saved.') };
      },
    },
  },
};

/** One email as it was written: its facts, its text, and a link to its HTML. */
export const emailPage: DashboardPage = {
  path: 'emails/:id',
  section: 'emails',
  title: (ctx) => ctx.t('Email'),
  async view(ctx) {
    const { t } = ctx;
    const email = await ctx.api.admin<Email>('GET', `/emails/${encodeURIComponent(ctx.params.id!)}`);
    const facts: [string, Html | string][] = [
      ['ID', email.id],
      [t('Kind'), t(KIND_LABELS[email.kind])],
      [t('Status'), statusText(ctx, email.status)],
      [t('To'), email.to ?? '—'],
      [t('Language'), email.locale ?? '—'],
      [t('Written'), when(email.created_at)],
      [email.status === 'KEPT' ? t('Kept') : t('Sent'), email.sent_at ? when(email.sent_at) : '—'],
      [t('Attempts'), String(email.attempts)],
      [t('Event'), html`<code>${email.event_id}</code>`],
      ...(email.customer_id
        ? [
            [
              t('Customer'),
              html`<a href="${ctx.base}/customers/${encodeURIComponent(email.customer_id)}">${email.customer_id}</a>`,
            ] as [string, Html],
          ]
        : []),
      ...(email.error ? [[t('Error'), email.error] as [string, string]] : []),
    ];
    return html`<section class="card" aria-label="${t('Email')}">
        <h2>${email.subject ?? t(KIND_LABELS[email.kind])}</h2>
        <dl class="facts">
          ${facts.map(
            ([label, value]) =>
              html`<dt>${label}</dt>
                <dd>${value}</dd>`,
          )}
        </dl>
        ${email.html ? html`<p><a href="${emailPath(ctx, email.id)}/html" target="_blank" rel="noopener">${t('Open the email as buyers see it')}</a></p>` : ''}
      </section>
      ${
        email.text
          ? html`<h2>${t('Plain text')}</h2>
              <pre class="card email-text">${email.text}</pre>`
          : ''
      }`;
  },
};
