import type { Invoice, PortalLocale, SavedPaymentMethod, Subscription } from '@billing/contracts';
import { page, postForm } from './html';
import { billingPeriod, brandName, formatDate, invoiceStatusText, messagesFor, subscriptionStatusText } from './i18n';
import type { OpenPortal } from './open-portal';
import { escapeHtml, formatTwd } from '@billing/service';

/** A subscription as the portal shows it, with what its next invoice will charge. */
export interface SubscriptionView {
  subscription: Subscription;
  /** What the next period's invoice comes to, after the coupon's discount; null when none will come. */
  nextAmount: number | null;
  /** The open invoice of a PAST_DUE subscription. */
  overdue: Invoice | null;
  /** A switch to another plan waiting for the period end: its plan name and date. */
  scheduledSwitch?: { planName: string; at: string; cancelAction: string } | null;
}

export interface PortalPageView {
  customerEmail: string;
  subscriptions: SubscriptionView[];
  invoices: Invoice[];
  paymentMethod: SavedPaymentMethod | null;
  /** The card form's address, when the configuration lets the customer change the card. */
  cardForm?: string;
  notice?: string;
  error?: string;
}

/** A page framed with the merchant's name, the link back, and the footer. */
export function portalPage(portal: OpenPortal, title: string, body: string): string {
  const { t, businessProfile } = portal;
  const links = [
    businessProfile.privacy_policy_url
      ? `<a href="${escapeHtml(businessProfile.privacy_policy_url)}">${escapeHtml(t.privacy)}</a>`
      : '',
    businessProfile.terms_of_service_url
      ? `<a href="${escapeHtml(businessProfile.terms_of_service_url)}">${escapeHtml(t.terms)}</a>`
      : '',
  ].join('');
  return page(
    {
      locale: portal.locale,
      title,
      businessName: businessProfile.name ?? t.title,
      back: { href: portal.session.return_url, text: businessProfile.name ? t.backTo(businessProfile.name) : t.back },
      footer: `${links}<span>${escapeHtml(t.poweredBy)}</span>`,
    },
    body,
  );
}

function badge(portal: OpenPortal, subscription: Subscription): string {
  const { status } = subscription;
  const tone =
    status === 'PAST_DUE' ? ' bad' : status === 'CANCELED' ? ' off' : subscription.cancel_at_period_end ? ' warn' : '';
  return `<span class="badge${tone}" data-status="${status}">${escapeHtml(subscriptionStatusText(portal.locale, status))}</span>`;
}

function facts(rows: Array<[string, string]>): string {
  if (rows.length === 0) return '';
  return `<dl class="facts">${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('')}</dl>`;
}

function subscriptionFacts(portal: OpenPortal, view: SubscriptionView): string {
  const { t, locale } = portal;
  const s = view.subscription;
  const date = (iso: string) => formatDate(iso, locale);
  const rows: Array<[string, string]> = [];
  if (s.status === 'TRIAL' && s.trial_end) rows.push([t.trialEnds, date(s.trial_end)]);
  if (s.status === 'CANCELED') {
    if (s.canceled_at) rows.push([t.canceledOn, date(s.canceled_at)]);
  } else if (s.cancel_at_period_end) {
    rows.push([t.cancelsOn, date(s.current_period_end)]);
  } else if (view.overdue) {
    rows.push([t.amountDue, formatTwd(view.overdue.amount_due)]);
  } else if (view.nextAmount !== null) {
    rows.push([t.nextBilling, t.nextBillingValue(formatTwd(view.nextAmount), date(s.current_period_end))]);
  }
  return facts(rows);
}

function subscriptionActions(portal: OpenPortal, view: SubscriptionView): string {
  const { t, features, base, csrfToken } = portal;
  const s = view.subscription;
  if (s.status === 'CANCELED') return '';
  const at = `${base}/subscriptions/${s.id}`;
  const buttons: string[] = [];
  if (s.cancel_at_period_end) {
    buttons.push(
      postForm(`${at}/resume`, csrfToken, `<button type="submit" id="resume-${s.id}">${escapeHtml(t.resume)}</button>`),
    );
  } else {
    const switchable = s.status === 'ACTIVE' || s.status === 'TRIAL';
    if (
      switchable &&
      features.subscription_update.enabled &&
      features.subscription_update.products.some((id) => id !== s.product.id) &&
      !view.scheduledSwitch
    ) {
      buttons.push(
        `<a class="button" id="switch-${s.id}" href="${escapeHtml(`${at}/switch`)}">${escapeHtml(t.switchPlan)}</a>`,
      );
    }
    if (features.cancel.enabled) {
      buttons.push(
        `<a class="button danger" id="cancel-${s.id}" href="${escapeHtml(`${at}/cancel`)}">${escapeHtml(t.cancel)}</a>`,
      );
    }
  }
  if (view.scheduledSwitch) {
    buttons.push(
      postForm(
        view.scheduledSwitch.cancelAction,
        csrfToken,
        `<button type="submit" class="secondary" id="cancel-schedule-${s.id}">${escapeHtml(t.cancelSchedule)}</button>`,
      ),
    );
  }
  return buttons.length ? `<div class="actions">${buttons.join('\n')}</div>` : '';
}

function subscriptionCard(portal: OpenPortal, view: SubscriptionView, cardForm: string | undefined): string {
  const { t, locale } = portal;
  const s = view.subscription;
  const alerts: string[] = [];
  if (s.cancel_at_period_end && s.status !== 'CANCELED') {
    alerts.push(t.pendingCancel(formatDate(s.current_period_end, locale)));
  }
  if (view.scheduledSwitch) {
    alerts.push(t.scheduledSwitch(view.scheduledSwitch.planName, formatDate(view.scheduledSwitch.at, locale)));
  }
  let pastDue = '';
  if (s.status === 'PAST_DUE') {
    const card = cardForm
      ? `<br><a class="button danger solid" style="margin-top:.6rem" href="${escapeHtml(cardForm)}" id="fix-card-${s.id}">${escapeHtml(t.updateCard)}</a>`
      : '';
    pastDue = `<p class="error" role="alert">${escapeHtml(t.pastDue)}${card}</p>`;
  }
  return `<section class="card subscription" id="subscription-${s.id}" data-subscription-id="${s.id}">
<div class="heading"><h3>${escapeHtml(s.product.name)}</h3>${badge(portal, s)}</div>
<p class="price">${formatTwd(s.price)} <span class="muted">${escapeHtml(billingPeriod(locale, s.interval, s.interval_count))}</span></p>
${subscriptionFacts(portal, view)}
${alerts.map((a) => `<p class="alert">${escapeHtml(a)}</p>`).join('\n')}
${pastDue}
${subscriptionActions(portal, view)}
</section>`;
}

function paymentMethodSection(
  portal: OpenPortal,
  method: SavedPaymentMethod | null,
  cardForm: string | undefined,
): string {
  const { t } = portal;
  const text = method
    ? t.cardOnFile(brandName(method.brand), method.last4, method.exp_month, method.exp_year)
    : t.noCard;
  const update = cardForm
    ? `<a class="button secondary" id="update-card" href="${escapeHtml(cardForm)}">${escapeHtml(t.updateCard)}</a>`
    : '';
  return `<h2>${escapeHtml(t.paymentMethod)}</h2>
<section class="card" id="payment-method">
<div class="heading"><span id="card-on-file">${escapeHtml(text)}</span>${update}</div>
</section>`;
}

function invoiceSection(portal: OpenPortal, invoices: Invoice[]): string {
  const { t, locale, features, base } = portal;
  if (!features.invoice_history.enabled) return '';
  if (invoices.length === 0)
    return `<h2>${escapeHtml(t.invoices)}</h2><section class="card"><p class="muted">${escapeHtml(t.noInvoices)}</p></section>`;
  const rows = invoices.map((invoice) => {
    const tone = invoice.status === 'paid' ? '' : invoice.status === 'open' ? ' bad' : ' off';
    const receipt =
      invoice.status === 'paid'
        ? `<a href="${escapeHtml(`${base}/invoices/${invoice.id}`)}" id="receipt-${invoice.id}">${escapeHtml(t.receipt)}</a>`
        : '';
    return `<tr id="invoice-${invoice.id}"><td class="date">${formatDate(invoice.created_at, locale)}</td><td class="number">${escapeHtml(invoice.number)}</td>
<td class="amount">${formatTwd(invoice.total)}</td><td><span class="badge${tone}">${escapeHtml(invoiceStatusText(locale, invoice.status))}</span></td><td>${receipt}</td></tr>`;
  });
  return `<h2>${escapeHtml(t.invoices)}</h2>
<section class="card"><table id="invoices">
<thead><tr><th>${escapeHtml(t.date)}</th><th class="number">${escapeHtml(t.invoiceNumber)}</th><th class="amount">${escapeHtml(t.amount)}</th><th>${escapeHtml(t.status)}</th><th></th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table></section>`;
}

/** The portal's main page: subscriptions, the card, invoices. */
export function renderPortalPage(portal: OpenPortal, view: PortalPageView): string {
  const { t } = portal;
  const notice = view.notice ? `<p class="notice" role="status" id="notice">${escapeHtml(view.notice)}</p>` : '';
  const error = view.error ? `<p class="error" role="alert" id="error">${escapeHtml(view.error)}</p>` : '';
  const subscriptions =
    view.subscriptions.length === 0
      ? `<section class="card"><p class="muted">${escapeHtml(t.noSubscriptions)}</p></section>`
      : view.subscriptions.map((s) => subscriptionCard(portal, s, view.cardForm)).join('\n');
  return portalPage(
    portal,
    t.manageTitle,
    `<h1>${escapeHtml(t.manageTitle)}</h1>
<p class="muted">${escapeHtml(t.signedInAs(view.customerEmail))}</p>
${notice}${error}
<h2>${escapeHtml(t.subscriptions)}</h2>
${subscriptions}
${paymentMethodSection(portal, view.paymentMethod, view.cardForm)}
${invoiceSection(portal, view.invoices)}`,
  );
}

/** Asks before canceling: what happens, and when. */
export function renderCancelPage(portal: OpenPortal, subscription: Subscription): string {
  const { t, locale, features, base, csrfToken } = portal;
  const now = features.cancel.mode === 'immediately';
  const explanation = now ? t.cancelNow : t.cancelAtPeriodEnd(formatDate(subscription.current_period_end, locale));
  const button = `<button type="submit" class="danger solid" id="confirm-cancel">${escapeHtml(now ? t.confirmCancelNow : t.confirmCancel)}</button>`;
  return portalPage(
    portal,
    t.cancelConfirmTitle,
    `<h1>${escapeHtml(t.cancelConfirmTitle)}</h1>
<section class="card">
<div class="heading"><h3>${escapeHtml(subscription.product.name)}</h3>${badge(portal, subscription)}</div>
<p class="price">${formatTwd(subscription.price)} <span class="muted">${escapeHtml(billingPeriod(locale, subscription.interval, subscription.interval_count))}</span></p>
<p>${escapeHtml(explanation)}</p>
<div class="actions">${postForm(`${base}/subscriptions/${subscription.id}/cancel`, csrfToken, button)}
<a class="button secondary" href="${escapeHtml(base)}" id="keep">${escapeHtml(t.keep)}</a></div>
</section>`,
  );
}

/** A printable receipt of a paid invoice. */
export function renderReceipt(portal: OpenPortal, invoice: Invoice, customerEmail: string): string {
  const { t, locale, base } = portal;
  const date = (iso: string) => formatDate(iso, locale);
  const lines = invoice.lines
    .map(
      (line) =>
        `<tr><td>${escapeHtml(line.description)}<br><span class="muted">${escapeHtml(t.period(date(line.period.start), date(line.period.end)))}</span></td><td class="amount">${formatTwd(line.amount)}</td></tr>`,
    )
    .join('\n');
  const discount = invoice.discount_amount
    ? `<div><span>${escapeHtml(t.discount)}</span><span>${formatTwd(-invoice.discount_amount)}</span></div>`
    : '';
  const refunded = invoice.amount_refunded
    ? `<div><span>${escapeHtml(t.refunded)}</span><span>${formatTwd(-invoice.amount_refunded)}</span></div>`
    : '';
  const business = portal.businessProfile.name ?? t.title;
  return portalPage(
    portal,
    t.receiptTitle(invoice.number),
    `<section class="card" id="receipt">
<div class="heading"><h1>${escapeHtml(t.receiptTitle(invoice.number))}</h1><span class="badge">${escapeHtml(invoiceStatusText(locale, invoice.status))}</span></div>
<p class="muted">${escapeHtml(business)} · ${escapeHtml(invoice.paid_at ? t.receiptPaidOn(date(invoice.paid_at)) : '')}</p>
${facts([
  [t.billedTo, customerEmail],
  [t.invoiceNumber, invoice.number],
])}
<table style="margin-top:1rem"><thead><tr><th></th><th class="amount">${escapeHtml(t.amount)}</th></tr></thead><tbody>${lines}</tbody></table>
<div class="summary" style="margin-top:1rem">
<div><span>${escapeHtml(t.subtotal)}</span><span>${formatTwd(invoice.subtotal)}</span></div>
${discount}
<div><span>${escapeHtml(t.total)}</span><span>${formatTwd(invoice.total)}</span></div>
<div class="total"><span>${escapeHtml(t.amountPaid)}</span><span id="amount-paid">${formatTwd(invoice.amount_paid)}</span></div>
${refunded}
</div>
</section>
<p class="no-print"><a class="back" href="${escapeHtml(base)}">← ${escapeHtml(t.manageTitle)}</a></p>`,
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
  const back = options.back
    ? `<div class="actions"><a class="button" id="return-button" href="${escapeHtml(options.back.href)}">${escapeHtml(options.back.text)}</a></div>`
    : '';
  return page(
    { locale: options.locale, title: options.title, businessName: options.businessName ?? t.title },
    `<section class="card" style="max-width:30rem;margin:3rem auto"><h1>${escapeHtml(options.title)}</h1>
<p class="muted">${escapeHtml(options.message)}</p>${back}</section>`,
  );
}
