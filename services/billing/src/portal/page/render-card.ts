import type { Invoice } from '@billing/contracts';
import type { OpenPortal } from './open-portal';
import { postForm } from './html';
import { portalPage } from './render';
import { escapeHtml, formatTwd } from '@billing/service';

function field(label: string, name: string, autocomplete: string, extra: string) {
  const id = `field-${name}`;
  return `<label for="${id}">${escapeHtml(label)}</label>
<input id="${id}" name="${name}" type="text" autocomplete="${autocomplete}" required${extra}>`;
}

/** The sandbox card form, as on checkout's hosted page; an overdue invoice is said to be charged at once. */
export function renderCardForm(portal: OpenPortal, overdue: Invoice[], error?: string): string {
  const { t, livemode, base, csrfToken } = portal;
  const due = overdue.reduce((sum, invoice) => sum + invoice.amount_due, 0);
  const sandbox = livemode ? '' : `<p class="sandbox">${escapeHtml(t.sandboxCard)}</p>`;
  const failed = error ? `<p class="error" role="alert" id="error">${escapeHtml(error)}</p>` : '';
  const retry = due > 0 ? `<p class="alert">${escapeHtml(t.cardRetry(formatTwd(due)))}</p>` : '';
  const fields = `${field(t.cardNumber, 'card_number', 'cc-number', ' inputmode="numeric" placeholder="4242 4242 4242 4242"')}
<div class="row">
  <div>${field(t.expiry, 'exp', 'cc-exp', ' placeholder="12/34"')}</div>
  <div>${field(t.cvc, 'cvc', 'cc-csc', ' inputmode="numeric" placeholder="123"')}</div>
</div>
<button type="submit" class="wide" id="save-card">${escapeHtml(t.saveCard)}</button>`;
  return portalPage(
    portal,
    t.cardTitle,
    `<h1>${escapeHtml(t.cardTitle)}</h1>
<section class="card" style="max-width:30rem">
<p class="muted">${escapeHtml(t.cardIntro)}</p>
${retry}
${sandbox}
${failed}
${postForm(`${base}/payment_method`, csrfToken, fields, ' id="card-form"')}
</section>
<p><a class="back" href="${escapeHtml(base)}">← ${escapeHtml(t.manageTitle)}</a></p>`,
  );
}
