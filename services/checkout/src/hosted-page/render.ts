import { escapeHtml, formatTwd, page } from './html';

export interface CheckoutPageView {
  sessionId: string;
  productName: string;
  /** e.g. "per month", "every 3 months"; absent for one-time products. */
  billingPeriod?: string;
  amountSubtotal: number;
  amountTotal: number;
  discount?: { label: string; amount: number };
  /** Prefilled values are shown read-only; missing ones are asked for. */
  email?: string;
  name?: string;
  requiresPaymentMethod: boolean;
  cancelUrl: string;
  /** Where the form posts. */
  action: string;
  livemode: boolean;
  /** Why the last attempt failed, such as a declined card. */
  error?: string;
  /** The card needs a challenge step (3-D Secure) before it can be charged. */
  challenge?: boolean;
  /** A subscription that starts free: nothing is charged today, `thenAmount` after `days`. */
  trial?: { days: number; thenAmount: number };
}

function field(
  label: string,
  name: string,
  autocomplete: string,
  options: { value?: string; type?: string; extra?: string } = {},
) {
  const id = `field-${name}`;
  const value = options.value === undefined ? '' : ` value="${escapeHtml(options.value)}" readonly`;
  return `<label for="${id}">${escapeHtml(label)}</label>
<input id="${id}" name="${name}" type="${options.type ?? 'text'}" autocomplete="${autocomplete}" required${value}${options.extra ?? ''}>`;
}

function cardFields(): string {
  return `${field('Card number', 'card_number', 'cc-number', { extra: ' inputmode="numeric" placeholder="4242 4242 4242 4242"' })}
<div class="row">
  <div>${field('Expiry (MM/YY)', 'exp', 'cc-exp', { extra: ' placeholder="12/34"' })}</div>
  <div>${field('CVC', 'cvc', 'cc-csc', { extra: ' inputmode="numeric" placeholder="123"' })}</div>
</div>`;
}

/** Said plainly: what is charged today, and what and when after the trial. */
function trialSummary(view: CheckoutPageView): string {
  const { trial } = view;
  if (!trial) return '';
  const period = view.billingPeriod ? ` ${escapeHtml(view.billingPeriod)}` : '';
  return `<div class="summary" id="trial">
  <div><span>Free trial</span><span>${trial.days} days</span></div>
  <div><span>Then</span><span>${formatTwd(trial.thenAmount)}${period}</span></div>
  <div><strong>Due today</strong><strong>${formatTwd(0)}</strong></div>
</div>
<p class="muted">Your card is saved now and first charged when the trial ends. Cancel before then and nothing is charged.</p>`;
}

function summary(view: CheckoutPageView): string {
  if (view.trial) return trialSummary(view);
  if (!view.discount) return '';
  return `<div class="summary">
  <div><span>Subtotal</span><span>${formatTwd(view.amountSubtotal)}</span></div>
  <div><span>${escapeHtml(view.discount.label)}</span><span>−${formatTwd(view.discount.amount)}</span></div>
  <div><strong>Total</strong><strong>${formatTwd(view.amountTotal)}</strong></div>
</div>`;
}

/** The hosted checkout page: product, price, discount, buyer details, card form, pay. */
export function renderCheckoutPage(view: CheckoutPageView): string {
  const period = view.billingPeriod ? ` <span class="muted">${escapeHtml(view.billingPeriod)}</span>` : '';
  const sandbox = view.livemode
    ? ''
    : '<p class="sandbox">Sandbox: pay with test card 4242 4242 4242 4242, any future expiry and any CVC.</p>';
  const error = view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : '';
  const challenge = view.challenge
    ? `<p class="sandbox">Your bank asks you to confirm this payment.</p><input type="hidden" name="challenge" value="pass">`
    : '';
  return page(
    `Pay ${view.productName}`,
    `<h1>${escapeHtml(view.productName)}</h1>
<p class="price">${formatTwd(view.trial ? view.trial.thenAmount : view.amountTotal)}${period}</p>
${summary(view)}
${sandbox}
${error}
<form method="post" action="${escapeHtml(view.action)}" id="checkout-form">
${field('Email', 'email', 'email', { type: 'email', value: view.email })}
${field('Name', 'name', 'name', { value: view.name })}
${view.requiresPaymentMethod ? cardFields() : ''}
${challenge}
<button type="submit" id="pay">${payLabel(view)}</button>
</form>
<a class="cancel" href="${escapeHtml(view.cancelUrl)}">Cancel and return</a>
<script>
  // One submission per page: a second click must not send a second payment.
  document.getElementById('checkout-form').addEventListener('submit', function (event) {
    var button = document.getElementById('pay');
    if (button.disabled) { event.preventDefault(); return; }
    button.disabled = true;
  });
</script>`,
  );
}

function payLabel(view: CheckoutPageView): string {
  if (view.trial) return `Start ${view.trial.days}-day free trial`;
  return `${view.challenge ? 'Confirm and pay' : 'Pay'} ${formatTwd(view.amountTotal)}`;
}

/** A page for a session that cannot be paid: expired, already paid, or not found. */
export function renderMessagePage(title: string, message: string, link?: { href: string; text: string }): string {
  const back = link ? `<a class="cancel" href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a>` : '';
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p class="muted">${escapeHtml(message)}</p>\n${back}`);
}
