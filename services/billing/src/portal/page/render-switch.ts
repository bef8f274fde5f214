import type { ProductInterval, Subscription } from '@billing/contracts';
import type { OpenPortal } from './open-portal';
import { postForm } from './html';
import { billingPeriod } from './i18n';
import { portalPage, priceLine } from './render';
import { type Html, formatDate, formatTwd, html } from '@billing/service';

/** What the portal shows of a switch preview (the spec's switch_preview, the fields it uses). */
export interface SwitchOffer {
  new_plan: {
    product_id: string;
    product_name: string;
    amount: number;
    interval: ProductInterval;
    interval_count: number;
  };
  execution_mode: 'immediate' | 'scheduled';
  proration: { credit_amount: number; charge_amount: number; net_amount: number } | null;
  effective_date: string;
  can_proceed: boolean;
  blocking_reason: string | null;
}

const planPrice = (portal: OpenPortal, plan: { amount: number; interval: ProductInterval; interval_count: number }) =>
  portal.t.perPeriod(formatTwd(plan.amount), billingPeriod(portal.locale, plan.interval, plan.interval_count));

/** The plans the configuration allows, each with its price; choosing one leads to its preview. */
export function renderSwitchChoices(portal: OpenPortal, subscription: Subscription, offers: SwitchOffer[]): string {
  const { t, base } = portal;
  const current = html`<section class="card">
    <div class="heading">
      <h3>${subscription.product.name}</h3>
      <span class="badge off">${t.currentPlan}</span>
    </div>
    ${priceLine(portal.locale, subscription.price, subscription.interval, subscription.interval_count)}
  </section>`;
  const choose = (productId: string) => `${base}/subscriptions/${subscription.id}/switch/${productId}`;
  const choice = ({ new_plan: plan }: SwitchOffer) =>
    html`<section class="card plan" id="plan-${plan.product_id}">
      <div class="heading">
        <h3>${plan.product_name}</h3>
        <a class="button" id="choose-${plan.product_id}" href="${choose(plan.product_id)}">${t.choosePlan}</a>
      </div>
      ${priceLine(portal.locale, plan.amount, plan.interval, plan.interval_count)}
    </section>`;
  const choices = offers.length
    ? offers.map(choice)
    : html`<section class="card"><p class="muted">${t.noPlans}</p></section>`;
  return portalPage(
    portal,
    t.switchTitle,
    html`<h1>${t.switchTitle}</h1>
      ${current} ${choices}
      <p><a class="back" href="${base}">← ${t.manageTitle}</a></p>`,
  );
}

/** The live preview before the customer confirms: credit, charge, net, when it takes effect. */
export function renderSwitchConfirm(
  portal: OpenPortal,
  subscription: Subscription,
  offer: SwitchOffer,
  error?: string,
): string {
  const { t, locale, base, csrfToken } = portal;
  const date = formatDate(offer.effective_date, { lang: locale });
  const current = {
    amount: subscription.price,
    interval: subscription.interval,
    interval_count: subscription.interval_count,
  };
  const rows: Html[] = [
    html`<div>
      <span>${t.switchFrom}</span><span>${subscription.product.name} · ${planPrice(portal, current)}</span>
    </div>`,
    html`<div>
      <span>${t.switchTo}</span><span>${offer.new_plan.product_name} · ${planPrice(portal, offer.new_plan)}</span>
    </div>`,
  ];
  const proration = offer.proration;
  if (proration) {
    rows.push(
      html`<div id="preview-credit"><span>${t.credit}</span><span>${formatTwd(-proration.credit_amount)}</span></div>`,
    );
    rows.push(
      html`<div id="preview-charge"><span>${t.charge}</span><span>${formatTwd(proration.charge_amount)}</span></div>`,
    );
    const net = formatTwd(Math.max(proration.net_amount, 0));
    rows.push(html`<div class="total" id="preview-net"><span>${t.net}</span><span>${net}</span></div>`);
  }
  rows.push(html`<div id="preview-effective"><span>${t.effective}</span><span>${date}</span></div>`);
  const notes: string[] = [offer.execution_mode === 'scheduled' ? t.switchScheduled(date) : t.switchNow];
  if (proration && proration.net_amount > 0 && offer.execution_mode === 'immediate')
    notes.push(t.switchCharged(formatTwd(proration.net_amount)));
  if (proration && proration.net_amount < 0) notes.push(t.switchBalance(formatTwd(-proration.net_amount)));
  // A refusal's own reason says it better than the preview's blocking reason: one message, not two.
  const refusal = t.switchBlocked[offer.blocking_reason ?? ''] ?? t.notAllowed;
  const blocked = !offer.can_proceed && !error && html`<p class="error" role="alert" id="blocked">${refusal}</p>`;
  const failed = error && html`<p class="error" role="alert" id="error">${error}</p>`;
  const confirm =
    offer.can_proceed &&
    postForm(
      `${base}/subscriptions/${subscription.id}/switch/${offer.new_plan.product_id}`,
      csrfToken,
      html`<button type="submit" id="confirm-switch">${t.confirmSwitch}</button>`,
    );
  return portalPage(
    portal,
    t.previewTitle,
    html`<h1>${t.previewTitle}</h1>
      ${failed}${blocked}
      <section class="card" id="switch-preview">
        <div class="summary">${rows}</div>
        ${notes.map((n) => html`<p class="muted">${n}</p>`)}
        <div class="actions">
          ${confirm}<a class="button secondary" href="${base}/subscriptions/${subscription.id}/switch">${t.keep}</a>
        </div>
      </section>`,
  );
}
