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

/** What the portal's PAYUNi card page needs: the fields' SDK token, PAYUNi's script, and checkout's that binds the card. */
export type PayuniCardPage = { sdkToken: string; scriptUrl: string; bindScriptUrl: string; env: 'S' | 'P' };

/**
 * The card page of an organization on PAYUNi: PAYUNi's card fields, charged for the first overdue
 * invoice, or with nothing overdue verified by NT$1 given back (PAYUNi keeps a card once it has
 * authorised it); on ECPay, what the customer can do instead, and no form.
 */
export function renderProcessorCardPage(
  portal: OpenPortal,
  overdue: Invoice[],
  fields: PayuniCardPage | 'ecpay',
  error?: string,
): string {
  const { t, base, csrfToken } = portal;
  const failed = error && html`<p class="error" role="alert" id="error">${error}</p>`;
  const first = overdue[0];
  // Overdue: the card pays the first invoice. Nothing due: PAYUNi verifies it by NT$1 given back.
  const lead = first
    ? html`<p class="alert">${t.cardRetry(formatTwd(first.amount_due))}</p>`
    : html`<p class="muted" id="verification-note">${t.payuniVerificationNote}</p>`;
  const button = first ? t.payAndSaveCard(formatTwd(first.amount_due)) : t.saveCard;
  const body =
    fields === 'ecpay'
      ? html`<p class="alert" id="card-kept">${t.cardKeptByEcpay}</p>`
      : html`<p class="muted">${t.cardIntro}</p>
          ${lead} ${failed}
          ${postForm(
            `${base}/payment_method`,
            csrfToken,
            html`<input type="hidden" name="processor" value="payuni" />
              ${payuniFields(portal, fields)}
              <button type="submit" class="wide" id="save-card">${button}</button>`,
            html`id="card-form"`,
          )}`;
  return portalPage(
    portal,
    t.cardTitle,
    html`<h1>${t.cardTitle}</h1>
      <section class="card" style="max-width:30rem">${body}</section>
      <p><a class="back" href="${base}">← ${t.manageTitle}</a></p>`,
  );
}

/** PAYUNi's three card fields: its script fills the holders, checkout's binds the card on submit before the form posts (without the card). */
function payuniFields(portal: OpenPortal, fields: PayuniCardPage): Html {
  const { t } = portal;
  const holder = (label: string, id: string) =>
    html`<label id="${id}-label">${label}</label>
      <div id="${id}" class="card-field" role="group" aria-labelledby="${id}-label"></div>`;
  return html`<div
      id="payuni-fields"
      data-sdk-token="${fields.sdkToken}"
      data-env="${fields.env}"
      data-failed="${t.cardFieldsFailed}"
    >
      ${holder(t.cardNumber, 'payuni-card-no')}
      <div class="row">
        <div>${holder(t.expiry, 'payuni-card-exp')}</div>
        <div>${holder(t.cvc, 'payuni-card-cvc')}</div>
      </div>
      <p class="error" role="alert" id="payuni-error" hidden></p>
    </div>
    <script src="${fields.scriptUrl}"></script>
    <script src="${fields.bindScriptUrl}"></script>`;
}

/** On the way to the card's bank (3-D Secure): the page refreshes there (its `Refresh` header), or the link does. */
export function renderToTheBank(portal: OpenPortal, bankUrl: string): string {
  const { t } = portal;
  return portalPage(
    portal,
    t.toBankTitle,
    html`<h1>${t.toBankTitle}</h1>
      <section class="card">
        <p class="muted">${t.toBank}</p>
        <a class="button" id="to-bank" href="${bankUrl}">${t.toBankLink}</a>
      </section>`,
  );
}
