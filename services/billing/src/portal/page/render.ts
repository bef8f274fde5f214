import type {
  CreditLedgerEntry,
  EinvoiceResource,
  Invoice,
  PortalLocale,
  ProductInterval,
  SavedPaymentMethod,
  Subscription,
} from '@billing/contracts';
import { page, postForm } from './html';
import { billingPeriod, brandName, invoiceStatusText, messagesFor, subscriptionStatusText } from './i18n';
import type { OpenPortal } from './open-portal';
import { billsUsage } from '../../subscriptions/metered';
import type { UsageSoFar } from '../../engine/renewals/usage-lines';
import { type PortalEinvoices, einvoiceFacts, einvoiceSection } from './einvoice-view';
import { type Html, formatDate, formatDateTime, formatTwd, html } from '@billing/service';

/** A subscription as the portal shows it, with what its next invoice will charge. */
export interface SubscriptionView {
  subscription: Subscription;
  /** What the next period's invoice comes to, after the coupon's discount; null when none will come. */
  nextAmount: number | null;
  /** The open invoice of a PAST_DUE subscription. */
  overdue: Invoice | null;
  /** A switch to another plan waiting for the period end: its plan name and date. */
  scheduledSwitch?: { planName: string; at: string; cancelAction: string } | null;
  /** The usage its next invoice bills so far, by metered price; null when it bills none. */
  usage?: UsageSoFar[] | null;
}

export interface PortalPageView {
  customerEmail: string;
  subscriptions: SubscriptionView[];
  invoices: Invoice[];
  paymentMethod: SavedPaymentMethod | null;
  /** The card form's address, when the configuration lets the customer change the card. */
  cardForm?: string;
  /** Where the customer's e-invoices go and the e-invoice of each invoice; null without e-invoices. */
  einvoices: PortalEinvoices | null;
  /** The customer's credit balance and latest ledger entries; null when they never had credits. */
  credits: { balance: number; entries: CreditLedgerEntry[] } | null;
  notice?: string;
  error?: string;
}

/** A page framed with the merchant's name, the link back, and the footer. */
export function portalPage(portal: OpenPortal, title: string, body: Html): string {
  const { t, businessProfile } = portal;
  const privacy = businessProfile.privacy_policy_url;
  const terms = businessProfile.terms_of_service_url;
  const links = html`${privacy && html`<a href="${privacy}">${t.privacy}</a>`}${terms && html`<a href="${terms}">${t.terms}</a>`}`;
  return page(
    {
      locale: portal.locale,
      title,
      businessName: businessProfile.name ?? t.title,
      back: { href: portal.session.return_url, text: businessProfile.name ? t.backTo(businessProfile.name) : t.back },
      footer: html`${links}<span>${t.poweredBy}</span>`,
    },
    body,
  );
}

/** A plan's price and how often it is charged: `NT$299 per month`. */
export function priceLine(locale: PortalLocale, amount: number, interval: ProductInterval, count: number): Html {
  const period = billingPeriod(locale, interval, count);
  return html`<p class="price">${formatTwd(amount)} <span class="muted">${period}</span></p>`;
}

function badge(portal: OpenPortal, subscription: Subscription): Html {
  const { status } = subscription;
  const tone =
    status === 'PAST_DUE' ? ' bad' : status === 'CANCELED' ? ' off' : subscription.cancel_at_period_end ? ' warn' : '';
  const text = subscriptionStatusText(portal.locale, status);
  return html`<span class="badge${tone}" data-status="${status}">${text}</span>`;
}

function facts(rows: Array<[string, string]>): Html | '' {
  if (rows.length === 0) return '';
  // prettier-ignore
  const pairs = rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`);
  return html`<dl class="facts">${pairs}</dl>`;
}

function subscriptionFacts(portal: OpenPortal, view: SubscriptionView): Html | '' {
  const { t, locale } = portal;
  const s = view.subscription;
  const date = (iso: string) => formatDate(iso, { lang: locale });
  const rows: Array<[string, string]> = [];
  if (s.status === 'TRIAL' && s.trial_end) rows.push([t.trialEnds, date(s.trial_end)]);
  if (s.status === 'CANCELED') {
    if (s.canceled_at) rows.push([t.canceledOn, date(s.canceled_at)]);
  } else if (s.cancel_at_period_end) {
    rows.push([t.cancelsOn, date(s.current_period_end)]);
  } else if (view.overdue) {
    rows.push([t.amountDue, formatTwd(view.overdue.amount_due)]);
  } else if (view.nextAmount !== null) {
    // The period's usage is billed on the same invoice: shown beside the price when there is some.
    const usage = (view.usage ?? []).reduce((sum, used) => sum + used.amount, 0);
    const amount = usage > 0 ? `${formatTwd(view.nextAmount)} + ${formatTwd(usage)}` : formatTwd(view.nextAmount);
    rows.push([t.nextBilling, t.nextBillingValue(amount, date(s.current_period_end))]);
  }
  if (view.usage) {
    if (view.usage.length === 0) rows.push([t.usageSoFar, t.noUsageYet]);
    for (const used of view.usage) {
      rows.push([t.usageOf(used.name), t.usageValue(used.quantity.toLocaleString('en-US'), formatTwd(used.amount))]);
    }
  }
  return html`${facts(rows)}${view.usage ? html`<p class="muted" id="usage-note-${s.id}">${t.usageBilledLater}</p>` : ''}`;
}

function subscriptionActions(portal: OpenPortal, view: SubscriptionView): Html | '' {
  const { t, features, base, csrfToken } = portal;
  const s = view.subscription;
  if (s.status === 'CANCELED') return '';
  const at = `${base}/subscriptions/${s.id}`;
  const buttons: Html[] = [];
  if (s.cancel_at_period_end) {
    buttons.push(
      postForm(`${at}/resume`, csrfToken, html`<button type="submit" id="resume-${s.id}">${t.resume}</button>`),
    );
  } else {
    const switchable = s.status === 'ACTIVE' || s.status === 'TRIAL';
    if (
      switchable &&
      features.subscription_update.enabled &&
      features.subscription_update.products.some((id) => id !== s.product.id) &&
      !view.scheduledSwitch
    ) {
      buttons.push(html`<a class="button" id="switch-${s.id}" href="${at}/switch">${t.switchPlan}</a>`);
    }
    if (features.cancel.enabled) {
      buttons.push(html`<a class="button danger" id="cancel-${s.id}" href="${at}/cancel">${t.cancel}</a>`);
    }
  }
  if (view.scheduledSwitch) {
    buttons.push(
      postForm(
        view.scheduledSwitch.cancelAction,
        csrfToken,
        html`<button type="submit" class="secondary" id="cancel-schedule-${s.id}">${t.cancelSchedule}</button>`,
      ),
    );
  }
  return buttons.length ? html`<div class="actions">${buttons}</div>` : '';
}

function subscriptionCard(portal: OpenPortal, view: SubscriptionView, cardForm: string | undefined): Html {
  const { t, locale } = portal;
  const s = view.subscription;
  const alerts: string[] = [];
  if (s.cancel_at_period_end && s.status !== 'CANCELED') {
    alerts.push(t.pendingCancel(formatDate(s.current_period_end, { lang: locale })));
  }
  if (view.scheduledSwitch) {
    alerts.push(
      t.scheduledSwitch(view.scheduledSwitch.planName, formatDate(view.scheduledSwitch.at, { lang: locale })),
    );
  }
  const fixAttributes = html`style="margin-top:.6rem" href="${cardForm}" id="fix-card-${s.id}"`;
  const fixCard = cardForm && html`<br /><a class="button danger solid" ${fixAttributes}>${t.updateCard}</a>`;
  const pastDue = s.status === 'PAST_DUE' && html`<p class="error" role="alert">${t.pastDue}${fixCard}</p>`;
  return html`<section class="card subscription" id="subscription-${s.id}" data-subscription-id="${s.id}">
    <div class="heading">
      <h3>${s.product.name}</h3>
      ${badge(portal, s)}
    </div>
    ${priceLine(locale, s.price, s.interval, s.interval_count)} ${subscriptionFacts(portal, view)}
    ${alerts.map((a) => html`<p class="alert">${a}</p>`)} ${pastDue} ${subscriptionActions(portal, view)}
  </section>`;
}

/** A payment method ECPay or PAYUNi keeps (a card plan, a kept card, a transfer per invoice: docs/payments.md). */
export const keptByProcessor = (method: SavedPaymentMethod | null) =>
  method !== null && /^pm_(ecpay|payuni|code)_/.test(method.id);

function paymentMethodSection(
  portal: OpenPortal,
  method: SavedPaymentMethod | null,
  cardForm: string | undefined,
): Html {
  const { t } = portal;
  const text = !method
    ? t.noCard
    : method.id.startsWith('pm_code_')
      ? t.paysByTransfer(method.brand === 'cvs' ? 'cvs' : 'atm')
      : t.cardOnFile(brandName(method.brand), method.last4, method.exp_month, method.exp_year);
  const update = cardForm
    ? html`<a class="button secondary" id="update-card" href="${cardForm}">${t.updateCard}</a>`
    : keptByProcessor(method) && html`<p class="muted" id="change-with-shop">${t.changeWithShop}</p>`;
  return html`<h2>${t.paymentMethod}</h2>
    <section class="card" id="payment-method">
      <div class="heading"><span id="card-on-file">${text}</span>${update}</div>
    </section>`;
}

function invoiceSection(portal: OpenPortal, invoices: Invoice[], einvoices: PortalEinvoices | null): Html | '' {
  const { t, locale, features, base } = portal;
  if (!features.invoice_history.enabled) return '';
  if (invoices.length === 0)
    return html`<h2>${t.invoices}</h2>
      <section class="card"><p class="muted">${t.noInvoices}</p></section>`;
  const rows = invoices.map((invoice) => {
    const tone = invoice.status === 'paid' ? '' : invoice.status === 'open' ? ' bad' : ' off';
    const receipt =
      invoice.status === 'paid' &&
      html`<a href="${base}/invoices/${invoice.id}" id="receipt-${invoice.id}">${t.receipt}</a>`;
    return html`<tr id="invoice-${invoice.id}">
      <td class="date">${formatDate(invoice.created_at, { lang: locale })}${einvoiceNumber(einvoices, invoice)}</td>
      <td class="number">${invoice.number}</td>
      <td class="amount">${formatTwd(invoice.total)}</td>
      <td><span class="badge${tone}">${invoiceStatusText(locale, invoice.status)}</span></td>
      <td>${receipt}</td>
    </tr>`;
  });
  return html`<h2>${t.invoices}</h2>
    <section class="card">
      <table id="invoices">
        <thead>
          <tr>
            <th>${t.date}</th>
            <th class="number">${t.invoiceNumber}</th>
            <th class="amount">${t.amount}</th>
            <th>${t.status}</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>
    </section>`;
}

const creditCount = (value: number) => value.toLocaleString('en-US');

/** The balance and the latest changes, for a customer who ever had credits. */
function creditsSection(portal: OpenPortal, credits: PortalPageView['credits']): Html | '' {
  if (!credits) return '';
  const { t, locale } = portal;
  const rows = credits.entries.map(
    (entry) =>
      html`<tr>
        <td class="date">${formatDate(entry.created_at, { lang: locale })}</td>
        <td>${t.creditEntry(entry.type)}</td>
        <td class="amount">${entry.amount > 0 ? '+' : '−'}${creditCount(Math.abs(entry.amount))}</td>
        <td class="amount">${creditCount(entry.balance_after)}</td>
      </tr>`,
  );
  return html`<h2>${t.credits}</h2>
    <section class="card" id="credits">
      <p id="credit-balance"><strong>${t.creditBalance(creditCount(credits.balance))}</strong></p>
      <table id="credit-ledger">
        <thead>
          <tr>
            <th>${t.date}</th>
            <th>${t.creditChange}</th>
            <th class="amount">${t.amount}</th>
            <th class="amount">${t.creditBalanceAfter}</th>
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>
    </section>`;
}

/** Under an invoice's date, its e-invoice's number once issued (the invoice number column hides on phones). */
function einvoiceNumber(einvoices: PortalEinvoices | null, invoice: Invoice): Html | '' {
  const number = einvoices?.byInvoice.get(invoice.id)?.number;
  return number ? html`<br /><span class="muted" id="einvoice-${invoice.id}">${number}</span>` : '';
}

/**
 * Open invoices that wait for the customer's transfer (a subscription paid by ATM account or
 * store code): the account or code, the amount and the deadline, above everything else.
 */
function transferSection(portal: OpenPortal, invoices: Invoice[]): Html[] {
  const { t, locale } = portal;
  const line = (label: string, value: string, id: string) =>
    html`<div>
      <dt>${label}</dt>
      <dd id="${id}">${value}</dd>
    </div>`;
  return invoices.flatMap((invoice) => {
    const pay = invoice.status === 'open' ? invoice.payment_instructions : null;
    if (!pay) return [];
    // ECPay issues the account or code on its own page: until then, a link to the page that sends the customer there.
    const getCode = !pay.account && !pay.payment_code && pay.hosted_instructions_url;
    const code = getCode
      ? ''
      : html`${pay.type === 'atm' ? line(t.bankCode, pay.bank_code ?? '', 'bank-code') : ''}
        ${pay.type === 'atm' ? line(t.account, pay.account ?? '', 'account') : line(t.paymentCode, pay.payment_code ?? '', 'payment-code')}`;
    return [
      html`<h2>${t.transferTitle}</h2>
        <section class="card" id="transfer-${invoice.id}">
          <p class="muted">${t.transferNote(invoice.number)}</p>
          <dl class="summary">
            ${code} ${line(t.amount, formatTwd(pay.amount), 'transfer-amount')}
            ${line(t.payBefore, formatDateTime(pay.expires_at, { lang: locale }), 'pay-before')}
          </dl>
          ${getCode ? html`<a class="button" id="get-code" href="${getCode}">${t.getCode(pay.type)}</a>` : ''}
        </section>`,
    ];
  });
}

/** The portal's main page: subscriptions, the card, credits, invoices. */
export function renderPortalPage(portal: OpenPortal, view: PortalPageView): string {
  const { t } = portal;
  const notice = view.notice && html`<p class="notice" role="status" id="notice">${view.notice}</p>`;
  const error = view.error && html`<p class="error" role="alert" id="error">${view.error}</p>`;
  const subscriptions =
    view.subscriptions.length === 0
      ? html`<section class="card"><p class="muted">${t.noSubscriptions}</p></section>`
      : view.subscriptions.map((s) => subscriptionCard(portal, s, view.cardForm));
  return portalPage(
    portal,
    t.manageTitle,
    html`<h1>${t.manageTitle}</h1>
      <p class="muted">${t.signedInAs(view.customerEmail)}</p>
      ${notice}${error} ${transferSection(portal, view.invoices)}
      <h2>${t.subscriptions}</h2>
      ${subscriptions} ${paymentMethodSection(portal, view.paymentMethod, view.cardForm)}
      ${creditsSection(portal, view.credits)} ${einvoiceSection(portal, view.einvoices)}
      ${invoiceSection(portal, view.invoices, view.einvoices)}`,
  );
}

/** Asks before canceling: what happens, and when. */
export function renderCancelPage(portal: OpenPortal, subscription: Subscription): string {
  const { t, locale, features, base, csrfToken } = portal;
  const now = features.cancel.mode === 'immediately';
  const explanation = now
    ? t.cancelNow
    : t.cancelAtPeriodEnd(formatDate(subscription.current_period_end, { lang: locale }));
  const label = now ? t.confirmCancelNow : t.confirmCancel;
  const button = html`<button type="submit" class="danger solid" id="confirm-cancel">${label}</button>`;
  return portalPage(
    portal,
    t.cancelConfirmTitle,
    html`<h1>${t.cancelConfirmTitle}</h1>
      <section class="card">
        <div class="heading">
          <h3>${subscription.product.name}</h3>
          ${badge(portal, subscription)}
        </div>
        ${priceLine(locale, subscription.price, subscription.interval, subscription.interval_count)}
        <p>${explanation}</p>
        ${now && billsUsage(subscription) ? html`<p id="usage-billed">${t.cancelNowBillsUsage}</p>` : ''}
        <div class="actions">
          ${postForm(`${base}/subscriptions/${subscription.id}/cancel`, csrfToken, button)}
          <a class="button secondary" href="${base}" id="keep">${t.keep}</a>
        </div>
      </section>`,
  );
}

/** A printable receipt of a paid invoice. */
export function renderReceipt(
  portal: OpenPortal,
  invoice: Invoice,
  customerEmail: string,
  einvoice?: EinvoiceResource,
): string {
  const { t, locale, base } = portal;
  const date = (iso: string) => formatDate(iso, { lang: locale });
  const lines = invoice.lines.map((line) => {
    const period = t.period(date(line.period.start), date(line.period.end));
    return html`<tr>
      <td>${line.description}<br /><span class="muted">${period}</span></td>
      <td class="amount">${formatTwd(line.amount)}</td>
    </tr>`;
  });
  const discount = invoice.discount_amount
    ? html`<div><span>${t.discount}</span><span>${formatTwd(-invoice.discount_amount)}</span></div>`
    : '';
  const refunded = invoice.amount_refunded
    ? html`<div><span>${t.refunded}</span><span>${formatTwd(-invoice.amount_refunded)}</span></div>`
    : '';
  const business = portal.businessProfile.name ?? t.title;
  return portalPage(
    portal,
    t.receiptTitle(invoice.number),
    html`<section class="card" id="receipt">
        <div class="heading">
          <h1>${t.receiptTitle(invoice.number)}</h1>
          <span class="badge">${invoiceStatusText(locale, invoice.status)}</span>
        </div>
        <p class="muted">${business} · ${invoice.paid_at ? t.receiptPaidOn(date(invoice.paid_at)) : ''}</p>
        ${facts([[t.billedTo, customerEmail], [t.invoiceNumber, invoice.number], ...einvoiceFacts(locale, einvoice)])}
        <table style="margin-top:1rem">
          <thead>
            <tr>
              <th></th>
              <th class="amount">${t.amount}</th>
            </tr>
          </thead>
          <tbody>
            ${lines}
          </tbody>
        </table>
        <div class="summary" style="margin-top:1rem">
          <div><span>${t.subtotal}</span><span>${formatTwd(invoice.subtotal)}</span></div>
          ${discount}
          <div><span>${t.total}</span><span>${formatTwd(invoice.total)}</span></div>
          <div class="total">
            <span>${t.amountPaid}</span><span id="amount-paid">${formatTwd(invoice.amount_paid)}</span>
          </div>
          ${refunded}
        </div>
      </section>
      <p class="no-print"><a class="back" href="${base}">← ${t.manageTitle}</a></p>`,
  );
}

/** A page that only says something: expired, not valid, refused. */
export function renderMessagePage(options: {
  locale: PortalLocale;
  title: string;
  message: string;
  back?: { href: string; text: string };
  businessName?: string | null;
}): string {
  const t = messagesFor(options.locale);
  const back =
    options.back &&
    html`<div class="actions">
      <a class="button" id="return-button" href="${options.back.href}">${options.back.text}</a>
    </div>`;
  return page(
    { locale: options.locale, title: options.title, businessName: options.businessName ?? t.title },
    html`<section class="card" style="max-width:30rem;margin:3rem auto">
      <h1>${options.title}</h1>
      <p class="muted">${options.message}</p>
      ${back}
    </section>`,
  );
}
