import { createHash, timingSafeEqual } from 'node:crypto';
import type { ServiceContext } from '@billing/runtime';
import type { Express } from 'express';
import { escapeHtml, formatTwd, page } from '../hosted-page/html';
import { findSession } from '../sessions/queries';
import { statusAt } from '../sessions/resource';
import type { Session } from '../sessions/session';

const sameSecret = (a: string, b: string) => {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b));
};

/** The price line of the checkout: today's amount, and the plan's period. */
function priceLine(session: Session): string {
  const { interval, interval_count } = session.product;
  const period =
    session.mode === 'SUBSCRIPTION' && interval
      ? interval_count === 1
        ? ` per ${interval}`
        : ` every ${interval_count} ${interval}s`
      : '';
  if (session.trial_days)
    return `Free for ${session.trial_days} days, then ${formatTwd(session.product.price)}${period}`;
  return `${formatTwd(session.order.amount_total)}${period ? ` today, then ${formatTwd(session.product.price)}${period}` : ''}`;
}

/**
 * The embedded checkout's own page, for the SDK's `checkout.js` button and `widget.js`, which
 * open `<embed URL>/checkout?id=&key=&client_secret=` in a dialog's iframe: the checkout, the
 * sandbox card form, and pay through the public API with the Publishable Key and the
 * client_secret. The outcome goes to the merchant's page as the SDK listens for it
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
    if (!session || session.ui_mode !== 'embedded' || !secret || !sameSecret(secret, session.intent.client_secret)) {
      res
        .status(404)
        .type('html')
        .send(
          page(
            'Checkout not found',
            '<h1>Checkout not found</h1><p class="muted">This checkout link is not valid.</p>',
          ),
        );
      return;
    }
    if (statusAt(session, now()) !== 'OPEN') {
      const done = session.status === 'COMPLETE';
      const title = done ? 'Already paid' : 'Checkout expired';
      res
        .status(409)
        .type('html')
        .send(page(title, `<h1>${title}</h1>`));
      return;
    }
    const config = {
      id,
      key,
      clientSecret: secret,
      token: session.card_form_token,
      needsCard: session.requires_payment_method,
    };
    const prefilled = (value: string | null) => (value ? ` value="${escapeHtml(value)}" readonly` : '');
    res.type('html').send(
      page(
        `Pay ${session.product.name}`,
        `<h1>${escapeHtml(session.product.name)}</h1>
<p class="price" id="price">${escapeHtml(priceLine(session))}</p>
<p class="sandbox">Sandbox: pay with test card 4242 4242 4242 4242, any future expiry and any CVC.</p>
<p class="error" role="alert" id="error" hidden></p>
<form id="embedded-form">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="email" required${prefilled(session.customer_email)}>
<label for="name">Name</label><input id="name" name="name" autocomplete="name" required${prefilled(session.customer_name)}>
${
  session.requires_payment_method
    ? `<label>Card number</label><div class="card-field" id="card-no"></div>
<div class="row"><div><label>Expiry (MM/YY)</label><div class="card-field" id="card-exp"></div></div>
<div><label>CVC</label><div class="card-field" id="card-cvc"></div></div></div>`
    : ''
}
<button type="submit" id="pay">Pay ${escapeHtml(formatTwd(session.order.amount_total))}</button>
</form>
<style>.card-field { padding: .6rem; border: 1px solid #c9ced8; border-radius: 6px; } input[readonly] { background: #f0f2f5; color: #4a5060; }</style>
<script src="/sandbox/card-form.js"></script>
<script>
(function () {
  var config = ${JSON.stringify(config).replaceAll('<', '\\u003c')};
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
      headers: { 'Content-Type': 'application/json', 'X-Recur-Publishable-Key': config.key },
      body: JSON.stringify(body)
    }).then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); });
  }
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    if (button.disabled) return;
    button.disabled = true; error.hidden = true;
    ready.then(function () { return card ? card.getTradeResult() : { Status: 'SUCCESS' }; })
      .then(function (entered) {
        if (entered.Status !== 'SUCCESS') throw new Error(entered.Message || 'Please check the card');
        return api('/pay', { client_secret: config.clientSecret, email: form.email.value || undefined, name: form.name.value || undefined });
      })
      .then(function (paid) {
        if (!paid.ok) throw new Error((paid.body.error && paid.body.error.message) || 'The payment failed');
        var c = paid.body.checkout;
        tell('RECUR_PAYMENT_SUCCESS', { checkoutId: c.id, orderId: c.order_id, subscriptionId: c.subscription_id, amount: c.amount, status: c.status });
        document.querySelector('main').innerHTML = '<h1 id="paid">Payment complete</h1><p class="muted">Thank you. You can close this window.</p>';
      })
      .catch(function (e) { fail(e.message); });
  });
})();
</script>`,
      ),
    );
  });
}
