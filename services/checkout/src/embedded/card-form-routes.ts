import { createHash, timingSafeEqual } from 'node:crypto';
import type { ServiceContext } from '@billing/runtime';
import { formBodies } from '@billing/service';
import type { Express, Response } from 'express';
import { dependenciesOf } from '../dependencies';
import { CardForms } from '../payments/card-form';
import { sessionOfCardFormToken } from '../sessions/create';
import { findSession } from '../sessions/queries';
import { statusAt } from '../sessions/resource';

/** Where pages load the sandbox card form: beside the hosted pages, at the gateway. */
export const cardFormScriptUrl = (checkoutUrl: string) => new URL('/sandbox/card-form.js', checkoutUrl).toString();

const sameToken = (a: string, b: string) => {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b));
};

/**
 * The sandbox payment provider's card form for embedded checkouts, in the shape of the
 * provider's browser script the recur-tw SDK drives (`window.UniPayment.createSession(token,
 * { elements })`, `start()`, `onUpdate()`, `getTradeResult()`): card inputs in the page's three
 * elements, whose card is sent to this service's `/sandbox/card-form/<token>`, never to the
 * merchant's page or API. Sandbox test cards as on the hosted page.
 */
function cardFormScript(collectBase: string): string {
  return `(function () {
  var COLLECT = ${JSON.stringify(collectBase)};
  var FIELDS = {
    CardNo: { name: 'card_number', placeholder: '4242 4242 4242 4242', mode: 'numeric', auto: 'cc-number', ok: function (v) { return /^[0-9 ]{12,23}$/.test(v); } },
    CardExp: { name: 'exp', placeholder: 'MM/YY', mode: 'numeric', auto: 'cc-exp', ok: function (v) { return /^(0[1-9]|1[0-2])\\s*\\/\\s*[0-9]{2}$/.test(v); } },
    CardCvc: { name: 'cvc', placeholder: 'CVC', mode: 'numeric', auto: 'cc-csc', ok: function (v) { return /^[0-9]{3,4}$/.test(v); } }
  };
  function createSession(token, options) {
    var inputs = {};
    var listeners = [];
    function status() {
      var s = {};
      Object.keys(FIELDS).forEach(function (k) { s[k] = !!inputs[k] && FIELDS[k].ok(inputs[k].value.trim()); });
      return s;
    }
    function changed() { var s = { status: status() }; listeners.forEach(function (l) { l(s); }); }
    return {
      start: function () {
        Object.keys(FIELDS).forEach(function (k) {
          var holder = document.getElementById(options.elements[k]);
          if (!holder) throw new Error('Card form element not found: ' + options.elements[k]);
          var input = document.createElement('input');
          input.name = FIELDS[k].name;
          input.setAttribute('data-sandbox-card-field', FIELDS[k].name);
          input.placeholder = FIELDS[k].placeholder;
          input.inputMode = FIELDS[k].mode;
          input.autocomplete = FIELDS[k].auto;
          input.style.cssText = 'width:100%;border:0;outline:0;font:inherit;background:transparent;padding:0;';
          input.addEventListener('input', changed);
          holder.innerHTML = '';
          holder.appendChild(input);
          inputs[k] = input;
        });
        setTimeout(changed, 0);
        return Promise.resolve();
      },
      onUpdate: function (listener) { listeners.push(listener); },
      getTradeResult: function () {
        var body = new URLSearchParams();
        Object.keys(FIELDS).forEach(function (k) { body.set(FIELDS[k].name, inputs[k] ? inputs[k].value.trim() : ''); });
        return fetch(COLLECT + encodeURIComponent(token), { method: 'POST', body: body })
          .then(function (r) { return r.json(); })
          .catch(function () { return { Status: 'FAIL', Message: 'The card form could not reach the payment provider' }; });
      }
    };
  }
  window.UniPayment = { createSession: createSession, sandbox: true };
})();
`;
}

/** Answers the page's script, which runs on the merchant's origin: readable by any origin, never with credentials. */
const fromAnyOrigin = (res: Response) => res.set('Access-Control-Allow-Origin', '*').vary('Origin');

export function mountCardFormRoutes(app: Express, context: ServiceContext): void {
  const { store, now } = context;
  const cardForms = new CardForms(store);

  app.get('/sandbox/card-form.js', (_req, res) => {
    const collectBase = new URL('/sandbox/card-form/', dependenciesOf(context).checkoutUrl).toString();
    fromAnyOrigin(res)
      .type('application/javascript')
      .set('Cache-Control', 'no-cache')
      .send(cardFormScript(collectBase));
  });

  app.options('/sandbox/card-form/:sdk_token', (_req, res) => {
    fromAnyOrigin(res).set('Access-Control-Allow-Methods', 'POST').set('Access-Control-Allow-Headers', 'Content-Type');
    res.status(204).end();
  });

  app.post('/sandbox/card-form/:sdk_token', formBodies('2kb'), async (req, res) => {
    fromAnyOrigin(res);
    const token = String(req.params.sdk_token);
    const sessionId = sessionOfCardFormToken(token);
    const session = sessionId ? await findSession(store.database, store.tables.schema, sessionId) : null;
    if (!session?.card_form_token || !sameToken(session.card_form_token, token)) {
      res.status(404).json({ Status: 'FAIL', Code: 'token_not_found', Message: 'This card form is not valid' });
      return;
    }
    if (statusAt(session, now()) !== 'OPEN') {
      res.status(409).json({ Status: 'FAIL', Code: 'checkout_closed', Message: 'This checkout is paid or expired' });
      return;
    }
    const form = (req.body ?? {}) as Record<string, unknown>;
    const text = (name: string) => (typeof form[name] === 'string' ? (form[name] as string).slice(0, 32) : '');
    const { processor } = dependenciesOf(context);
    const result = processor.collect?.({ number: text('card_number'), exp: text('exp'), cvc: text('cvc') }, now());
    if (!result) {
      res
        .status(501)
        .json({ Status: 'FAIL', Code: 'no_card_form', Message: 'This payment processor has no card form' });
      return;
    }
    if (result.status !== 'collected') {
      res.status(402).json({ Status: 'FAIL', Code: result.code, Message: result.message });
      return;
    }
    await cardForms.put(token, result.card);
    res.json({
      Status: 'SUCCESS',
      EncryptInfo: `card_${result.card.brand}_${result.card.last4}`,
      HashTimestamp: String(Math.floor(now().getTime() / 1000)),
      Card: { brand: result.card.brand, last4: result.card.last4 },
    });
  });
}
