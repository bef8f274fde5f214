import type { Invoice } from '@billing/contracts';
import type { OpenPortal } from './open-portal';
import { postForm } from './html';
import { portalPage } from './render';
import { type Html, formatTwd, html } from '@billing/service';

function field(label: string, name: string, autocomplete: string, extra: Html): Html {
  const id = `field-${name}`;
  return html`<label for="${id}">${label}</label>
    <input id="${id}" name="${name}" type="text" autocomplete="${autocomplete}" required${extra} />`;
}

/** The sandbox card form, as on checkout's hosted page; an overdue invoice is said to be charged at once. */
export function renderCardForm(portal: OpenPortal, overdue: Invoice[], error?: string): string {
  const { t, livemode, base, csrfToken } = portal;
  const due = overdue.reduce((sum, invoice) => sum + invoice.amount_due, 0);
  const sandbox = !livemode && html`<p class="sandbox">${t.sandboxCard}</p>`;
  const failed = error && html`<p class="error" role="alert" id="error">${error}</p>`;
  const retry = due > 0 && html`<p class="alert">${t.cardRetry(formatTwd(due))}</p>`;
  const fields = html`${field(t.cardNumber, 'card_number', 'cc-number', html` inputmode="numeric" placeholder="4242 4242 4242 4242"`)}
    <div class="row">
      <div>${field(t.expiry, 'exp', 'cc-exp', html` placeholder="12/34"`)}</div>
      <div>${field(t.cvc, 'cvc', 'cc-csc', html` inputmode="numeric" placeholder="123"`)}</div>
    </div>
    <button type="submit" class="wide" id="save-card">${t.saveCard}</button>`;
  return portalPage(
    portal,
    t.cardTitle,
    html`<h1>${t.cardTitle}</h1>
      <section class="card" style="max-width:30rem">
        <p class="muted">${t.cardIntro}</p>
        ${retry} ${sandbox} ${failed} ${postForm(`${base}/payment_method`, csrfToken, fields, html`id="card-form"`)}
      </section>
      <p><a class="back" href="${base}">← ${t.manageTitle}</a></p>`,
  );
}
