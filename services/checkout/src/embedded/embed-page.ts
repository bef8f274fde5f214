import { createHash, timingSafeEqual } from 'node:crypto';
import type { ServiceContext } from '@billing/runtime';
import type { Express } from 'express';
import { page } from '../hosted-page/html';
import { type Messages, chooseLocale, messagesFor, priceSchedule } from '../hosted-page/messages';
import { merchantHeader, renderMessagePage } from '../hosted-page/render';
import { einvoiceSectionFor } from '../hosted-page/einvoice-form';
import { einvoiceSection } from '../hosted-page/einvoice-section';
import { findMerchant } from '@billing/runtime';
import { findSession } from '../sessions/queries';
import { statusAt } from '../sessions/resource';
import type { Session } from '../sessions/session';
import { type Html, formatTwd, html, raw } from '@billing/service';

const sameSecret = (a: string, b: string) => {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b));
};

/** What is charged and when, in the page's words. */
function priceLine(session: Session, t: Messages): string {
  const { interval, interval_count, price } = session.product;
  if (session.mode !== 'SUBSCRIPTION' || !interval) return priceSchedule(t, { today: session.order.amount_total });
  const trialDays = session.trial_days ?? 0;
  const then = trialDays ? price - (session.discount?.amount ?? 0) : price;
  return priceSchedule(t, {
    today: session.order.amount_total,
    recurring: { amount: then, interval, count: interval_count },
    trialDays: trialDays || undefined,
  });
}

/** The buyer's email or name; one the merchant gave is shown read-only. */
function buyerField(name: 'email' | 'name', label: string, value: string | null): Html {
  const prefilled = value && html` value="${value}" readonly`;
  const attributes = html`type="${name === 'email' ? 'email' : 'text'}" autocomplete="${name}" required${prefilled}`;
  return html`<label for="${name}">${label}</label><input id="${name}" name="${name}" ${attributes} />`;
}

/** Where the sandbox card form puts its fields. */
const cardElements = (t: Messages): Html =>
  html`<label>${t.cardNumber}</label>
    <div class="card-field" id="card-no"></div>
    <div class="row">
      <div>
        <label>${t.expiry}</label>
        <div class="card-field" id="card-exp"></div>
      </div>
      <div>
        <label>${t.cvc}</label>
        <div class="card-field" id="card-cvc"></div>
      </div>
    </div>`;

const EMBED_STYLE = raw(
  '<style>.card-field { padding: .6rem; border: 1px solid #c9ced8; border-radius: 6px; } input[readonly] { background: #f0f2f5; color: #4a5060; }</style>',
);

/**
 * The sandbox card form and the script that pays and tells the merchant's page. Its settings go
 * in as JSON with every `<` written `\u003c`, so no value can close the script element.
 */
function embeddedScript(config: Record<string, unknown>): Html {
  const json = JSON.stringify(config).replaceAll('<', '\\u003c');
  return raw(`<script src="/sandbox/card-form.js"></script>
<script>
(function () {
  var config = ${json};
  var form = document.getElementById('embedded-form');
  var button = document.getElementById('pay');
  var error = document.getElementById('error');
  var card = config.needsCard ? UniPayment.createSession(config.token, { elements: { CardNo: 'card-no', CardExp: 'card-exp', CardCvc: 'card-cvc' } }) : null;
  var ready = card ? card.start() : Promise.resolve();
  function tell(type, data) { if (window.parent !== window) window.parent.postMessage({ type: type, data: data }, '*'); }
  function fail(message) {
    error.textContent = message; error.hidden = false; button.disabled = false;
    tell('RECUR_PAYMENT_ERROR', { message: message });
  }
  function api(path, body) {
    return fetch('/v1/checkouts/' + encodeURIComponent(config.id) + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Service-Publishable-Key': config.key },
      body: JSON.stringify(body)
    }).then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); });
  }
  function chosenEinvoice() { return form.querySelector('input[name="einvoice_type"]:checked'); }
  function einvoiceOf() {
    var chosen = chosenEinvoice();
    if (!chosen) return undefined;
    function value(field) { var input = form.elements['einvoice_' + field]; return input ? input.value.trim() : ''; }
    if (chosen.value === 'MOBILE_BARCODE') return { type: chosen.value, carrier: value('barcode').toUpperCase() };
    if (chosen.value === 'CITIZEN_CERTIFICATE') return { type: chosen.value, carrier: value('certificate').toUpperCase() };
    if (chosen.value === 'DONATION') return { type: chosen.value, donation_code: value('donation_code') };
    if (chosen.value === 'B2B') {
      var b2b = { type: chosen.value, tax_id: value('tax_id') };
      if (value('company_name')) b2b.company_name = value('company_name');
      return b2b;
    }
    return { type: 'MEMBER' };
  }
  // An e-invoice field refused by the API, or a declined card, is told in the page's words.
  function refusal(error) {
    if (!error) return null;
    var detail = error.details && error.details[0];
    if (detail && /^einvoice\./.test(detail.path)) {
      var field = detail.path.split('.')[1];
      if (field === 'carrier') field = chosenEinvoice() && chosenEinvoice().value === 'MOBILE_BARCODE' ? 'barcode' : 'certificate';
      return config.einvoiceRules[field] || detail.message;
    }
    return (detail && config.declines[detail.code]) || error.message;
  }
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    if (button.disabled) return;
    button.disabled = true; error.hidden = true;
    ready.then(function () { return card ? card.getTradeResult() : { Status: 'SUCCESS' }; })
      .then(function (entered) {
        if (entered.Status !== 'SUCCESS') throw new Error(entered.Message || 'Please check the card');
        return api('/pay', { client_secret: config.clientSecret, email: form.email.value || undefined, name: form.name.value || undefined, einvoice: einvoiceOf() });
      })
      .then(function (paid) {
        if (!paid.ok) throw new Error(refusal(paid.body.error) || 'The payment failed');
        var c = paid.body.checkout;
        tell('RECUR_PAYMENT_SUCCESS', { checkoutId: c.id, orderId: c.order_id, subscriptionId: c.subscription_id, amount: c.amount, status: c.status });
        document.querySelector('main').innerHTML = '<h1 id="paid"></h1><p class="muted"></p>';
        document.getElementById('paid').textContent = config.thanks[0];
        document.querySelector('main p').textContent = config.thanks[1];
      })
      .catch(function (e) { fail(e.message); });
  });
})();
</script>`);
}

/**
 * The embedded checkout's own page, for the SDK's `checkout.js` button and `widget.js`, which
 * open `<embed URL>/checkout?id=&key=&client_secret=` in a dialog's iframe: the checkout, the
 * sandbox card form, and pay through the public API with the Publishable Key and the
 * client_secret, with the buyer's e-invoice choice when the organization issues e-invoices. The
 * outcome goes to the merchant's page as the SDK listens for it
 * (`RECUR_PAYMENT_SUCCESS`, `RECUR_PAYMENT_ERROR` messages). Framed by any origin: the
 * client_secret in its address is what opens it.
 */
export function mountEmbedPage(app: Express, context: ServiceContext): void {
  const { store, now } = context;
  app.get('/embed/checkout', async (req, res) => {
    const text = (name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string) : '');
    const [id, key, secret] = [text('id'), text('key'), text('client_secret')];
    const session = /^cs_[A-Za-z0-9]+$/.test(id) ? await findSession(store.database, store.tables.schema, id) : null;
    res.set('Content-Security-Policy', "frame-ancestors *; base-uri 'none'").set('Referrer-Policy', 'no-referrer');
    const valid = session?.ui_mode === 'embedded' && !!secret && sameSecret(secret, session.intent.client_secret);
    const t = messagesFor(chooseLocale(valid ? session?.locale : null, req.get('accept-language')));
    if (!session || !valid) {
      res
        .status(404)
        .type('html')
        .send(renderMessagePage(t.titles.notFound, t.texts.notFound, undefined, { t }));
      return;
    }
    const merchant = await findMerchant(store.database, store.tables.schema, session.organization);
    if (statusAt(session, now()) !== 'OPEN') {
      const [title, text] =
        session.status === 'COMPLETE'
          ? [t.titles.alreadyPaid, t.texts.alreadyPaid]
          : [t.titles.expired, t.texts.expired];
      res
        .status(409)
        .type('html')
        .send(renderMessagePage(title, text, undefined, { t, merchant }));
      return;
    }
    const config = {
      id,
      key,
      clientSecret: secret,
      token: session.card_form_token,
      needsCard: session.requires_payment_method,
      thanks: [t.titles.thanks, t.texts.thanks],
      einvoiceRules: t.einvoice.rules,
      declines: t.declines,
    };
    const einvoice = await einvoiceSectionFor(context, session, null);
    res.type('html').send(
      page(
        t.pay(session.product.name),
        html`${merchantHeader(merchant)}
          <h1>${session.product.name}</h1>
          <p class="price" id="price">${formatTwd(session.order.amount_total)}</p>
          <p class="schedule" id="schedule">${priceLine(session, t)}</p>
          ${session.environment === 'SANDBOX' && html`<p class="sandbox">${t.sandbox}</p>`}
          <p class="error" role="alert" id="error" hidden></p>
          <form id="embedded-form">
            ${buyerField('email', t.email, session.customer_email)} ${buyerField('name', t.name, session.customer_name)}
            ${session.requires_payment_method && cardElements(t)} ${einvoice && einvoiceSection(einvoice, t)}
            <button type="submit" id="pay">${t.pay(formatTwd(session.order.amount_total))}</button>
          </form>
          ${EMBED_STYLE} ${embeddedScript(config)}`,
      ),
    );
  });
}
