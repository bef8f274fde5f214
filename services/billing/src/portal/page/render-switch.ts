import type { ProductInterval, Subscription } from '@billing/contracts';
import type { OpenPortal } from './open-portal';
import { postForm } from './html';
import { billingPeriod, formatDate } from './i18n';
import { portalPage } from './render';
import { escapeHtml, formatTwd } from '@billing/service';

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
  const current = `<section class="card"><div class="heading"><h3>${escapeHtml(subscription.product.name)}</h3><span class="badge off">${escapeHtml(t.currentPlan)}</span></div>
<p class="price">${formatTwd(subscription.price)} <span class="muted">${escapeHtml(billingPeriod(portal.locale, subscription.interval, subscription.interval_count))}</span></p></section>`;
  const choices = offers.length
    ? offers
        .map(
          (
            offer,
          ) => `<section class="card plan" id="plan-${offer.new_plan.product_id}"><div class="heading"><h3>${escapeHtml(offer.new_plan.product_name)}</h3>
<a class="button" id="choose-${offer.new_plan.product_id}" href="${escapeHtml(`${base}/subscriptions/${subscription.id}/switch/${offer.new_plan.product_id}`)}">${escapeHtml(t.choosePlan)}</a></div>
<p class="price">${formatTwd(offer.new_plan.amount)} <span class="muted">${escapeHtml(billingPeriod(portal.locale, offer.new_plan.interval, offer.new_plan.interval_count))}</span></p></section>`,
        )
        .join('\n')
    : `<section class="card"><p class="muted">${escapeHtml(t.noPlans)}</p></section>`;
  return portalPage(
    portal,
    t.switchTitle,
    `<h1>${escapeHtml(t.switchTitle)}</h1>
${current}
${choices}
<p><a class="back" href="${escapeHtml(base)}">← ${escapeHtml(t.manageTitle)}</a></p>`,
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
  const date = formatDate(offer.effective_date, locale);
  const rows: string[] = [
    `<div><span>${escapeHtml(t.switchFrom)}</span><span>${escapeHtml(subscription.product.name)} · ${escapeHtml(planPrice(portal, { amount: subscription.price, interval: subscription.interval, interval_count: subscription.interval_count }))}</span></div>`,
    `<div><span>${escapeHtml(t.switchTo)}</span><span>${escapeHtml(offer.new_plan.product_name)} · ${escapeHtml(planPrice(portal, offer.new_plan))}</span></div>`,
  ];
  const proration = offer.proration;
  if (proration) {
    rows.push(
      `<div id="preview-credit"><span>${escapeHtml(t.credit)}</span><span>${formatTwd(-proration.credit_amount)}</span></div>`,
    );
    rows.push(
      `<div id="preview-charge"><span>${escapeHtml(t.charge)}</span><span>${formatTwd(proration.charge_amount)}</span></div>`,
    );
    rows.push(
      `<div class="total" id="preview-net"><span>${escapeHtml(t.net)}</span><span>${formatTwd(Math.max(proration.net_amount, 0))}</span></div>`,
    );
  }
  rows.push(
    `<div id="preview-effective"><span>${escapeHtml(t.effective)}</span><span>${escapeHtml(date)}</span></div>`,
  );
  const notes: string[] = [offer.execution_mode === 'scheduled' ? t.switchScheduled(date) : t.switchNow];
  if (proration && proration.net_amount > 0 && offer.execution_mode === 'immediate')
    notes.push(t.switchCharged(formatTwd(proration.net_amount)));
  if (proration && proration.net_amount < 0) notes.push(t.switchBalance(formatTwd(-proration.net_amount)));
  // A refusal's own reason says it better than the preview's blocking reason: one message, not two.
  const blocked =
    offer.can_proceed || error
      ? ''
      : `<p class="error" role="alert" id="blocked">${escapeHtml(t.switchBlocked[offer.blocking_reason ?? ''] ?? t.notAllowed)}</p>`;
  const failed = error ? `<p class="error" role="alert" id="error">${escapeHtml(error)}</p>` : '';
  const confirm = offer.can_proceed
    ? postForm(
        `${base}/subscriptions/${subscription.id}/switch/${offer.new_plan.product_id}`,
        csrfToken,
        `<button type="submit" id="confirm-switch">${escapeHtml(t.confirmSwitch)}</button>`,
      )
    : '';
  return portalPage(
    portal,
    t.previewTitle,
    `<h1>${escapeHtml(t.previewTitle)}</h1>
${failed}${blocked}
<section class="card" id="switch-preview">
<div class="summary">${rows.join('\n')}</div>
${notes.map((n) => `<p class="muted">${escapeHtml(n)}</p>`).join('\n')}
<div class="actions">${confirm}<a class="button secondary" href="${escapeHtml(`${base}/subscriptions/${subscription.id}/switch`)}">${escapeHtml(t.keep)}</a></div>
</section>`,
  );
}
