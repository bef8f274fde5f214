/**
 * The page-side half of PAYUNi's card fields, one script for every page that shows them (the
 * hosted checkout, the customer portal's card page), served by checkout at
 * `<CHECKOUT_URL>/payuni-fields.js` after PAYUNi's own `uni-payment.js`. It opens PAYUNi's fields
 * in the three holders of `#payuni-fields` and, when the form around them is submitted, binds the
 * card typed there to the SDK token at PAYUNi first, and only then posts the form (without any
 * card data). On a page that offers an ATM account or a store code too (`input[name=method]`,
 * `data-code-label`), the fields step aside when one is chosen and the form posts at once.
 */
export const payuniFieldsScriptUrl = (checkoutUrl: string) => `${checkoutUrl.replace(/\/$/, '')}/payuni-fields.js`;

export const PAYUNI_FIELDS_SCRIPT = `(function () {
  var holder = document.getElementById('payuni-fields');
  if (!holder) return;
  var form = holder.closest('form');
  var failure = document.getElementById('payuni-error');
  // The submit button comes after this script in the form: read it when it is needed.
  function button() { return form.querySelector('button[type="submit"]'); }
  function fail(message) {
    failure.textContent = message || holder.getAttribute('data-failed');
    failure.hidden = false;
    if (button()) button().disabled = false;
  }
  if (!window.UniPayment) { fail(); return; }
  var session = window.UniPayment.createSession(holder.getAttribute('data-sdk-token'), {
    env: holder.getAttribute('data-env'),
    elements: { CardNo: 'payuni-card-no', CardExp: 'payuni-card-exp', CardCvc: 'payuni-card-cvc' }
  });
  var started = session.start();
  var bound = false;
  var cardLabel = null;
  function cardChosen() {
    var chosen = form.querySelector('input[name="method"]:checked');
    return !chosen || chosen.value === 'card';
  }
  var codeLabel = holder.getAttribute('data-code-label');
  if (codeLabel) {
    form.addEventListener('change', function () {
      if (cardLabel === null) cardLabel = button().textContent;
      holder.hidden = !cardChosen();
      button().textContent = cardChosen() ? cardLabel : codeLabel;
    });
  }
  form.addEventListener('submit', function (event) {
    if (bound || !cardChosen()) return;
    event.preventDefault();
    failure.hidden = true;
    Promise.resolve(started)
      .then(function () { return session.getTradeResult(); })
      .then(function (result) {
        if (!result || result.Status !== 'SUCCESS') return fail(result && result.Message);
        bound = true;
        form.submit();
      }, function () { fail(); });
  });
})();
`;
