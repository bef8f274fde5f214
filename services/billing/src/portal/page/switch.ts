import { ApiError, type Subscription, type SwitchPreview } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { formBodies } from '@billing/service';
import type { Express, Response } from 'express';
import { performSwitch, previewSwitch } from '../../engine/switching/perform';
import { cancelSchedule } from '../../engine/switching/schedules';
import { findSchedule } from '../../subscriptions/switch-read-model';
import { openPortal, ownSubscription } from './access';
import type { OpenPortal } from './open-portal';
import type { SubscriptionView } from './render';
import { renderSwitchChoices, renderSwitchConfirm } from './render-switch';
import { backToPortal, notFoundPage } from './respond';

const BASE = '/portal/:session_id/:token/subscriptions/:subscription_id';
const form = formBodies('10kb');

/** The subscription's pending plan switch, as the main page shows it with its cancel form. */
export async function scheduledSwitchOf(
  context: ServiceContext,
  portal: OpenPortal,
  subscription: Subscription,
): Promise<SubscriptionView['scheduledSwitch']> {
  const { store } = context;
  const schedule = await findSchedule(store.database, store.tables.schema, portal.tenant, subscription.id);
  if (!schedule || schedule.status !== 'pending') return null;
  return {
    planName: schedule.target_plan.name,
    at: schedule.effective_date,
    cancelAction: `${portal.base}/subscriptions/${subscription.id}/schedule/cancel`,
  };
}

const allowed = (portal: OpenPortal, subscription: Subscription) =>
  portal.features.subscription_update.enabled
    ? portal.features.subscription_update.products.filter((id) => id !== subscription.product.id)
    : [];

/** A switch preview; null when the catalog refuses the product (archived, another environment, absent). */
async function preview(context: ServiceContext, portal: OpenPortal, subscription: Subscription, productId: string) {
  try {
    return await previewSwitch(
      context,
      portal.tenant.organization,
      portal.tenant.environment,
      subscription.id,
      productId,
    );
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) return null;
    throw error;
  }
}

/** The subscription named in the path, the customer's own and allowed to switch; else a 404 page. */
async function switchable(context: ServiceContext, portal: OpenPortal, res: Response, id: string) {
  const subscription = await ownSubscription(context, portal, id);
  if (!subscription || allowed(portal, subscription).length === 0) {
    notFoundPage(res, portal);
    return null;
  }
  return subscription;
}

/**
 * Switch plan in the portal: the plans the configuration allows, the live preview (plan
 * switching's own, `engine/switching/`) on a confirmation page, the switch, and canceling a
 * scheduled one; the same functions as the API's, so the same charges and webhooks.
 */
export function mountPortalSwitchPages(app: Express, context: ServiceContext): void {
  app.get(`${BASE}/switch`, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const subscription = await switchable(context, portal, res, String(req.params.subscription_id));
    if (!subscription) return;
    const offers = await Promise.all(
      allowed(portal, subscription).map((id) => preview(context, portal, subscription, id)),
    );
    res.type('html').send(
      renderSwitchChoices(
        portal,
        subscription,
        offers.filter((o): o is SwitchPreview => o !== null),
      ),
    );
  });

  app.get(`${BASE}/switch/:product_id`, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const subscription = await switchable(context, portal, res, String(req.params.subscription_id));
    if (!subscription) return;
    const productId = String(req.params.product_id);
    const offer = allowed(portal, subscription).includes(productId)
      ? await preview(context, portal, subscription, productId)
      : null;
    if (!offer) return notFoundPage(res, portal);
    res.type('html').send(renderSwitchConfirm(portal, subscription, offer));
  });

  app.post(`${BASE}/switch/:product_id`, form, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const subscription = await switchable(context, portal, res, String(req.params.subscription_id));
    if (!subscription) return;
    const productId = String(req.params.product_id);
    if (!allowed(portal, subscription).includes(productId)) return notFoundPage(res, portal);
    try {
      const done = await performSwitch(
        context,
        portal.tenant.organization,
        portal.tenant.environment,
        subscription.id,
        {
          targetProductId: productId,
        },
      );
      backToPortal(res, portal, { notice: done.execution_mode === 'scheduled' ? 'scheduled' : 'switched' });
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      // A declined card or a refusal: the preview again, as it is now, with the reason.
      const offer = await preview(context, portal, subscription, productId);
      if (!offer) return notFoundPage(res, portal);
      const reason =
        error.code === 'payment_pending'
          ? portal.t.paymentPending
          : error.status === 402
            ? portal.t.cardDeclined
            : portal.t.notAllowed;
      res
        .status(error.status)
        .type('html')
        .send(renderSwitchConfirm(portal, subscription, offer, reason));
    }
  });

  app.post(`${BASE}/schedule/cancel`, form, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const subscription = await ownSubscription(context, portal, String(req.params.subscription_id));
    if (!subscription) return notFoundPage(res, portal);
    try {
      await cancelSchedule(context, portal.tenant.organization, portal.tenant.environment, subscription.id);
      backToPortal(res, portal, { notice: 'schedule_canceled' });
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) return backToPortal(res, portal, { error: 'not_allowed' });
      throw error;
    }
  });
}
