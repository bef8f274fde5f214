import type { AsyncPaymentProcessor, PaymentMethodKind } from '@billing/contracts';
import type { Merchant } from '@billing/runtime';
import { page } from './html';
import type { EinvoiceSection } from './einvoice-form';
import { type ReceiptEinvoice, einvoiceReceiptRows, einvoiceSection } from './einvoice-section';
import { type Messages, messagesFor } from './messages';
import { type Html, formatDate, formatTwd, html, raw } from '@billing/service';

export interface CheckoutPageView {
  sessionId: string;
  productName: string;
  /** e.g. "per month", "every 3 months"; absent for one-time products. */
  billingPeriod?: string;
  amountSubtotal: number;
  amountTotal: number;
  /**
   * What the code takes off (today's charge, or the first one after a trial): shown as the code
   * and its coupon's name; `label` ("20% off") when the session knows neither.
   */
  discount?: { label: string; amount: number; code?: string; couponName?: string | null };
  /** The promotion code field, or the way to remove a code the buyer applied here. */
  promotionCode?: PromotionCodeField;
  /** Prefilled values are shown read-only; missing ones are asked for. */
  email?: string;
  name?: string;
  /** What the buyer typed before a declined or challenged attempt: kept, never the card number or CVC. */
  typed?: { email?: string; name?: string; exp?: string };
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
  /** What is charged and when, in words ("NT$240 today, then NT$299 per month"). */
  schedule?: string;
  /** What a plan grants on the buyer's credit balance each paid period, in words. */
  allowance?: string;
  /** What a plan bills for usage after each period, in words. */
  usagePrices?: string;
  /** The page's language (English when absent). */
  t?: Messages;
  /** Who sells: on every page. */
  merchant?: Merchant | null;
  /**
   * The methods the buyer chooses between at the merchant's processor: ECPay takes each on its own
   * pages, in place of the card fields here; PAYUNi takes the card in its fields on this page and
   * the ATM account and store code on its own.
   */
  processorMethods?: { processor: AsyncPaymentProcessor; methods: PaymentMethodKind[] };
  /** PAYUNi's card fields in place of the page's own: its script and the SDK token they bind the card to. */
  /** PAYUNi's card fields: its SDK token and script, and checkout's script that binds them (payuni/fields-script.ts). */
  payuniFields?: { sdkToken: string; scriptUrl: string; env: 'S' | 'P'; bindScriptUrl: string };
  /** The buyer's e-invoice choice, when the organization issues e-invoices. */
  einvoice?: EinvoiceSection;
}

/**
 * A form of its own beside the payment's (forms do not nest; Enter in the payment's fields still
 * pays), posted without JavaScript: it applies the typed code, or removes the applied one.
 */
export interface PromotionCodeField {
  action: string;
  /** A code the buyer applied on this page: a Remove button in place of the field. */
  removable?: boolean;
  /** What the buyer typed before a refusal. */
  typed?: string;
  /** Why the code was refused, in the page's language. */
  error?: string;
}

const textOf = (view: { t?: Messages }) => view.t ?? messagesFor('en');

function field(
  label: string,
  name: string,
  autocomplete: string,
  options: { value?: string; typed?: string; type?: string; extra?: Html } = {},
): Html {
  const id = `field-${name}`;
  const value =
    options.value !== undefined
      ? html` value="${options.value}" readonly aria-readonly="true"`
      : options.typed
        ? html` value="${options.typed}"`
        : '';
  const rest = html`type="${options.type ?? 'text'}" autocomplete="${autocomplete}" required${value}${options.extra}`;
  return html`<label for="${id}">${label}</label> <input id="${id}" name="${name}" ${rest} />`;
}

function cardFields(view: CheckoutPageView): Html {
  const t = textOf(view);
  return html`${field(t.cardNumber, 'card_number', 'cc-number', { extra: html` inputmode="numeric" placeholder="4242 4242 4242 4242"` })}
    <div class="row">
      <div>${field(t.expiry, 'exp', 'cc-exp', { typed: view.typed?.exp, extra: html` placeholder="12/34"` })}</div>
      <div>${field(t.cvc, 'cvc', 'cc-csc', { extra: html` inputmode="numeric" placeholder="123"` })}</div>
    </div>`;
}

/**
 * PAYUNi's card fields (its uni-payment.js fills the three holders): on submit the card is bound
 * to the SDK token at PAYUNi first, and only then is the form (without any card data) posted
 * (payuni/fields-script.ts). When the buyer chose an ATM account or a store code instead, the
 * fields hide and the form posts at once (checkout then sends the buyer to PAYUNi's page for the code).
 */
function payuniCardFields(view: CheckoutPageView, fields: NonNullable<CheckoutPageView['payuniFields']>): Html {
  const t = textOf(view);
  const holder = (label: string, id: string) =>
    html`<label id="${id}-label">${label}</label>
      <div id="${id}" class="card-field" role="group" aria-labelledby="${id}-label"></div>`;
  return html`<div
      id="payuni-fields"
      data-sdk-token="${fields.sdkToken}"
      data-env="${fields.env}"
      data-failed="${t.cardFieldsFailed}"
      data-code-label="${t.asyncPayment.continue(t.asyncPayment.processors.payuni)}"
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

/** The code and its coupon's name, and what it takes off. */
function discountRow(view: CheckoutPageView): Html | '' {
  const { discount } = view;
  if (!discount) return '';
  const label = discount.code
    ? textOf(view).promotion.applied(discount.code, discount.couponName ?? discount.label)
    : discount.label;
  return html`<div id="discount"><span>${label}</span><span>−${formatTwd(discount.amount)}</span></div>`;
}

/** Said plainly: what is charged today, and what and when after the trial. */
function trialSummary(view: CheckoutPageView): Html | '' {
  const { trial } = view;
  const t = textOf(view);
  if (!trial) return '';
  const period = view.billingPeriod ? ` ${view.billingPeriod}` : '';
  return html`<div class="summary" id="trial">
      <div><span>${t.freeTrial}</span><span>${t.days(trial.days)}</span></div>
      ${discountRow(view)}
      <div><span>${t.then}</span><span>${formatTwd(trial.thenAmount)}${period}</span></div>
      <div><strong>${t.dueToday}</strong><strong>${formatTwd(0)}</strong></div>
    </div>
    <p class="muted">${t.trialNote}</p>
    ${view.payuniFields ? html`<p class="muted" id="verification-note">${t.payuniVerificationNote}</p>` : ''}`;
}

function summary(view: CheckoutPageView): Html | '' {
  const t = textOf(view);
  if (view.trial) return trialSummary(view);
  if (!view.discount) return '';
  return html`<div class="summary">
    <div><span>${t.subtotal}</span><span>${formatTwd(view.amountSubtotal)}</span></div>
    ${discountRow(view)}
    <div><strong>${t.total}</strong><strong>${formatTwd(view.amountTotal)}</strong></div>
  </div>`;
}

/** The field and its Apply button while no code is applied; Remove for a code the buyer applied here. */
function promotionCodeForm(view: CheckoutPageView): Html | '' {
  const field = view.promotionCode;
  const t = textOf(view).promotion;
  if (!field) return '';
  if (view.discount) {
    if (!field.removable) return '';
    return html`<form method="post" action="${field.action}" class="promotion-remove" id="promotion-form">
      <input type="hidden" name="remove" value="${view.discount.code ?? ''}" />
      <button type="submit" class="link" id="remove-promotion">${t.remove(view.discount.code ?? '')}</button>
    </form>`;
  }
  const error = field.error && html`<p class="field-error" id="promotion-error" role="alert">${field.error}</p>`;
  const invalid = field.error ? html` aria-invalid="true" aria-describedby="promotion-error"` : '';
  return html`<form method="post" action="${field.action}" class="promotion" id="promotion-form">
    <label for="field-promotion_code">${t.label}</label>
    <div class="inline">
      <input
        id="field-promotion_code"
        name="code"
        type="text"
        autocomplete="off"
        autocapitalize="characters"
        spellcheck="false"
        maxlength="100"
        required
        value="${field.typed ?? ''}"
        ${invalid}
      />
      <button type="submit" class="secondary" id="apply-promotion">${t.apply}</button>
    </div>
    ${error}
  </form>`;
}

/** The merchant's name (and logo) at the top of every page; nothing before the replica knows it. */
export function merchantHeader(merchant: Merchant | null | undefined): Html | '' {
  if (!merchant) return '';
  const logo = merchant.logo_url && html`<img class="logo" src="${merchant.logo_url}" alt="" width="32" height="32" />`;
  return html`<header class="merchant" id="merchant">${logo}<span>${merchant.name}</span></header>`;
}

/** The methods a buyer chooses between (radio buttons; the first chosen). */
export function methodChoice(choice: NonNullable<CheckoutPageView['processorMethods']>, t: Messages): Html {
  const a = t.asyncPayment;
  const label = (method: PaymentMethodKind) =>
    method === 'card' && choice.processor === 'ecpay' ? a.cardOnEcpay : a[method];
  return html`<fieldset class="methods" id="methods">
    <legend>${a.payBy}</legend>
    ${choice.methods.map(
      (method, i) =>
        html`<label class="method"
          ><input type="radio" name="method" value="${method}" ${i === 0 ? html` checked` : ''} required />
          ${label(method)}</label
        >`,
    )}
  </fieldset>`;
}

/** One submission per page: a second click must not send a second payment. */
const ONE_SUBMISSION = raw(`<script>
  document.getElementById('checkout-form').addEventListener('submit', function (event) {
    var button = document.getElementById('pay');
    if (button.disabled) { event.preventDefault(); return; }
    button.disabled = true;
  });
</script>`);

/** The hosted checkout page: merchant, product, price schedule, discount, buyer details, card form, pay. */
export function renderCheckoutPage(view: CheckoutPageView): string {
  const t = textOf(view);
  // A discounted first period is not the price per period: the schedule line says both.
  const recurringPrice = view.billingPeriod && (!view.discount || view.trial);
  const period = recurringPrice && html` <span class="muted">${view.billingPeriod}</span>`;
  const sandbox = !view.livemode && html`<p class="sandbox">${sandboxNote(view)}</p>`;
  const error = view.error && html`<p class="error" role="alert">${view.error}</p>`;
  const challenge =
    view.challenge &&
    html`<p class="sandbox">${t.challenge}</p>
      <input type="hidden" name="challenge" value="pass" />`;
  // The plain plan's schedule ("NT$299 per month") would repeat the price line word for word.
  const scheduleSaysMore = view.schedule && !(recurringPrice && !view.trial);
  const schedule = scheduleSaysMore && html`<p class="schedule" id="schedule">${view.schedule}</p>`;
  const allowance = view.allowance && html`<p class="schedule" id="allowance">${view.allowance}</p>`;
  const usagePrices = view.usagePrices && html`<p class="schedule" id="usage-prices">${view.usagePrices}</p>`;
  return page(
    t.pay(view.productName),
    html`${merchantHeader(view.merchant)}
      <h1>${view.productName}</h1>
      <p class="price">${formatTwd(view.trial ? view.trial.thenAmount : view.amountTotal)}${period}</p>
      ${schedule} ${allowance} ${usagePrices} ${summary(view)} ${promotionCodeForm(view)} ${sandbox} ${error}
      <form method="post" action="${view.action}" id="checkout-form">
        <input type="hidden" name="shown_total" value="${String(view.amountTotal)}" />
        ${field(t.email, 'email', 'email', { type: 'email', value: view.email, typed: view.typed?.email })}
        ${field(t.name, 'name', 'name', { value: view.name, typed: view.typed?.name })} ${paymentFields(view)}
        ${challenge} ${view.einvoice ? einvoiceSection(view.einvoice, t) : ''}
        <button type="submit" id="pay">${payLabel(view)}</button>
      </form>
      <a class="cancel" id="cancel" href="${view.cancelUrl}">${t.cancel}</a>
      ${ONE_SUBMISSION}`,
    { lang: t.lang, brandColor: view.merchant?.brand_color },
  );
}

/** The processor's method choice (with PAYUNi's card fields under it), PAYUNi's card fields, or the page's own; none when nothing is charged. */
function paymentFields(view: CheckoutPageView): Html | false {
  const choice = view.processorMethods && methodChoice(view.processorMethods, textOf(view));
  if (view.processorMethods?.processor === 'ecpay') return choice!;
  if (!view.requiresPaymentMethod) return false;
  if (!view.payuniFields) return cardFields(view);
  return html`${choice || ''}${payuniCardFields(view, view.payuniFields)}`;
}

/** What a sandbox page says: test cards for the simulator, the processor's test environment otherwise. */
function sandboxNote(view: CheckoutPageView): string {
  const t = textOf(view);
  const processor = view.processorMethods?.processor ?? (view.payuniFields ? 'payuni' : null);
  return processor ? t.asyncPayment.sandbox(t.asyncPayment.processors[processor]) : t.sandbox;
}

function payLabel(view: CheckoutPageView): string {
  const t = textOf(view);
  if (view.processorMethods?.processor === 'ecpay') return t.asyncPayment.continue(t.asyncPayment.processors.ecpay);
  if (view.trial) return t.startTrial(view.trial.days);
  return (view.challenge ? t.confirmAndPay : t.pay)(formatTwd(view.amountTotal));
}

/** What every hosted page knows of its request: the buyer's language, and the merchant when known. */
export interface PageContext {
  t: Messages;
  merchant: Merchant | null;
}

/** A receipt's lines: what was bought, what was paid, when, and its e-invoice when one is issued. */
export type Receipt = { product: string; amount: number; date: string; einvoice?: ReceiptEinvoice };

export interface MessagePageOptions {
  t?: Messages;
  merchant?: Merchant | null;
  receipt?: Receipt;
}

/** A page for a session that cannot be paid (expired, already paid, not found), or a thank-you page. */
export function renderMessagePage(
  title: string,
  message: string,
  link?: { href: string; text: string },
  options: MessagePageOptions = {},
): string {
  const t = textOf(options);
  const back = link && html`<a class="cancel" id="back" href="${link.href}">${link.text}</a>`;
  const { receipt } = options;
  // The day the buyer paid, in Taipei; the month in words, as on a receipt.
  const paidOn = receipt && formatDate(receipt.date, { lang: t.lang, month: 'long' });
  return page(
    title,
    html`${merchantHeader(options.merchant)}
      <h1>${title}</h1>
      <p class="muted">${message}</p>
      ${
        receipt &&
        html`<dl class="summary receipt" id="receipt">
          <div>
            <dt>${t.product}</dt>
            <dd>${receipt.product}</dd>
          </div>
          <div>
            <dt>${t.amountPaid}</dt>
            <dd>${formatTwd(receipt.amount)}</dd>
          </div>
          <div>
            <dt>${t.date}</dt>
            <dd>${paidOn}</dd>
          </div>
          ${receipt.einvoice ? einvoiceReceiptRows(receipt.einvoice, t) : ''}
        </dl>`
      }
      ${back}`,
    { lang: t.lang, brandColor: options.merchant?.brand_color },
  );
}
