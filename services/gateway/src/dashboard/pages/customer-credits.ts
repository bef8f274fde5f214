import { type Html, html } from '@billing/service';
import { when } from '../html';
import type { Translate } from '../i18n';
import { type Action, type PageContext, type PageState, errorFor, field, fieldError, formFields, table } from '../page';
import { num, text } from './forms';

interface CreditGrant {
  id: string;
  amount: number;
  remaining: number;
  source: 'purchase' | 'allowance' | 'manual';
  reason: string | null;
  expires_at: string | null;
  created_at: string;
}
interface CreditBalance {
  balance: number;
  grants: CreditGrant[];
}
interface CreditLedgerEntry {
  id: string;
  type: 'grant' | 'spend' | 'adjustment' | 'expiry';
  amount: number;
  balance_after: number;
  reason: string | null;
  created_at: string;
}

/** The ledger entries shown on the customer's page, newest first. */
const LEDGER_SHOWN = 20;
const DAY_MS = 24 * 60 * 60_000;

const credits = (value: number) => value.toLocaleString('en-US');
const signed = (value: number) => (value > 0 ? `+${credits(value)}` : `−${credits(-value)}`);

function sourceName(t: Translate, source: CreditGrant['source']): string {
  if (source === 'purchase') return t('Purchase');
  if (source === 'allowance') return t('Plan allowance');
  return t('Granted by the merchant');
}

function entryName(t: Translate, type: CreditLedgerEntry['type']): string {
  if (type === 'grant') return t('Granted');
  if (type === 'spend') return t('Spent');
  if (type === 'adjustment') return t('Taken back');
  return t('Expired');
}

/** The customer's credit balance, its open grants, its latest ledger entries, and the forms to grant or take back. */
export async function creditsSection(ctx: PageContext, state: PageState, customerId: string): Promise<Html> {
  const { t } = ctx;
  const id = encodeURIComponent(customerId);
  const [balance, ledger] = await Promise.all([
    ctx.api.v1<CreditBalance>('GET', `/customers/${id}/credits`),
    ctx.api.v1<{ data: CreditLedgerEntry[]; has_more: boolean }>(
      'GET',
      `/customers/${id}/credits/ledger?limit=${LEDGER_SHOWN}`,
    ),
  ]);
  const grantRows = balance.grants.map(
    (g) =>
      html`<tr>
        <td>${when(g.created_at)}</td>
        <td>${credits(g.amount)}</td>
        <td>${credits(g.remaining)}</td>
        <td>${sourceName(t, g.source)}</td>
        <td>${g.expires_at ? when(g.expires_at) : t('Never')}</td>
        <td>${g.reason ?? ''}</td>
      </tr>`,
  );
  const ledgerRows = ledger.data.map(
    (e) =>
      html`<tr>
        <td>${when(e.created_at)}</td>
        <td>${entryName(t, e.type)}</td>
        <td>${signed(e.amount)}</td>
        <td>${credits(e.balance_after)}</td>
        <td>${e.reason ?? ''}</td>
      </tr>`,
  );
  const v = (name: string) => (state.form?._action ? state.form[name] : undefined);
  return html`<h2 id="credits">${t('Credits')}</h2>
    <p>${t('Balance: {balance} credits', { balance: credits(balance.balance) })}</p>
    ${table(
      t('Credits left by grant'),
      [t('Granted'), t('Amount'), t('Left'), t('Source'), t('Expires'), t('Reason|credits')],
      grantRows,
      t('No credits.'),
    )}
    ${table(
      ledger.has_more ? t('Latest {count} credit changes', { count: LEDGER_SHOWN }) : t('Credit changes'),
      [t('When'), t('Type'), t('Credits'), t('Balance after'), t('Reason|credits')],
      ledgerRows,
      t('No credit changes.'),
    )}
    <form class="card" method="post" aria-labelledby="grant-credits">
      <h3 id="grant-credits">${t('Grant credits')}</h3>
      ${formFields(ctx, 'grant_credits')}${errorFor(state, 'grant_credits')}
      ${field('grant-amount', t('Credits'), { name: 'amount', type: 'number', required: true, value: v('amount'), extra: html` min="1" step="1"`, error: fieldError(state, 'grant_credits', 'amount') })}
      ${field('grant-reason', t('Reason|credits'), { name: 'reason', required: true, value: v('reason'), error: fieldError(state, 'grant_credits', 'reason') })}
      ${field('grant-days', t('Expire after days (optional)'), { name: 'expires_after_days', type: 'number', value: v('expires_after_days'), extra: html` min="1" step="1"` })}
      <div><button type="submit">${t('Grant credits')}</button></div>
    </form>
    <form class="card" method="post" aria-labelledby="take-back-credits">
      <h3 id="take-back-credits">${t('Take credits back')}</h3>
      ${formFields(ctx, 'take_back_credits')}${errorFor(state, 'take_back_credits')}
      ${field('take-amount', t('Credits'), { name: 'amount', type: 'number', required: true, extra: html` min="1" step="1"`, error: fieldError(state, 'take_back_credits', 'amount') })}
      ${field('take-reason', t('Reason|credits'), { name: 'reason', required: true, error: fieldError(state, 'take_back_credits', 'reason') })}
      <div><button type="submit">${t('Take credits back')}</button></div>
    </form>`;
}

/** Grants and take-backs go through the public API, as the merchant's own server would send them. */
export const creditActions: Record<string, Action> = {
  grant_credits: {
    async run(ctx, form) {
      const days = num(form.expires_after_days);
      const grant = await ctx.api.v1<{ amount: number }>(
        'POST',
        `/customers/${encodeURIComponent(ctx.params.id!)}/credits/grants`,
        {
          amount: num(form.amount),
          reason: text(form.reason),
          ...(days !== undefined && {
            expires_at: typeof days === 'number' ? new Date(Date.now() + days * DAY_MS).toISOString() : days,
          }),
        },
        { idempotencyKey: form._idem },
      );
      return { notice: ctx.t('{amount} credits granted.', { amount: credits(grant.amount) }) };
    },
  },
  take_back_credits: {
    async run(ctx, form) {
      const taken = await ctx.api.v1<{ amount: number }>(
        'POST',
        `/customers/${encodeURIComponent(ctx.params.id!)}/credits/adjustments`,
        { amount: num(form.amount), reason: text(form.reason) },
        { idempotencyKey: form._idem },
      );
      return { notice: ctx.t('{amount} credits taken back.', { amount: credits(taken.amount) }) };
    },
  },
};
