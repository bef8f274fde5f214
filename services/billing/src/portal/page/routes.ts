import { ApiError, type Customer, type Invoice, type SavedPaymentMethod, type Subscription } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { formBodies, formatDate } from '@billing/service';
import type { Express, Request, Response } from 'express';
import { ledgerPage, spendableCredits } from '../../credits/queries';
import { findCustomer } from '../../customers/queries';
import { timeOn } from '../../test-clocks/read-model';
import { findInvoice, listInvoices } from '../../invoices/read-model';
import { periodDiscount } from '../../subscriptions/discount';
import { nextPeriodEndOf } from '../../subscriptions/decide';
import { cancelSubscription, resumeSubscription } from '../../subscriptions/commands';
import { cancelNowWithFinalInvoice } from '../../engine/renewals/final-invoice';
import { usageSoFar } from '../../engine/renewals/usage-lines';
import { billsUsage } from '../../subscriptions/metered';
import { listSubscriptions } from '../../subscriptions/queries';
import { openPortal, ownSubscription } from './access';
import type { OpenPortal } from './open-portal';
import { type Notice, backToPortal, notFoundPage } from './respond';
import { savedPaymentMethod } from './queries';
import { mountPortalSwitchPages, scheduledSwitchOf } from './switch';
import { mountPortalCardPages } from './card';
import { mountPortalEinvoicePages } from './einvoice';
import { einvoiceTexts, portalEinvoices } from './einvoice-view';
import { findEinvoiceOf } from '../../einvoices/read-model';
import { type SubscriptionView, keptByProcessor, renderCancelPage, renderPortalPage, renderReceipt } from './render';

const BASE = '/portal/:session_id/:token';
const form = formBodies('10kb');

function noticeText(portal: OpenPortal, notice: unknown, subscriptions: SubscriptionView[]): string | undefined {
  const { t } = portal;
  switch (notice as Notice) {
    case 'canceled':
      return t.noticeCanceled;
    case 'canceling': {
      const canceling = subscriptions.find((s) => s.subscription.cancel_at_period_end);
      return canceling
        ? t.noticeCanceling(formatDate(canceling.subscription.current_period_end, { lang: portal.locale }))
        : t.noticeCanceled;
    }
    case 'resumed':
      return t.noticeResumed;
    case 'card_updated':
      return t.noticeCardUpdated;
    case 'card_paid':
      return t.noticeCardPaid;
    case 'switched':
      return t.noticeSwitched;
    case 'scheduled':
      return t.noticeScheduled;
    case 'schedule_canceled':
      return t.noticeScheduleCanceled;
    case 'einvoice_saved':
      return einvoiceTexts(portal.locale).saved;
    default:
      return undefined;
  }
}

/** What the renewal at `current_period_end` will invoice, by the renewals' own discount rule (`periodDiscount`). */
function nextInvoiceAmount(subscription: Subscription): number {
  return (
    subscription.price - periodDiscount(subscription, subscription.current_period_end, nextPeriodEndOf(subscription))
  );
}

/** Live subscriptions first, then ended ones; each with what its next invoice charges. */
async function subscriptionViews(
  context: ServiceContext,
  portal: OpenPortal,
  invoices: Invoice[],
): Promise<SubscriptionView[]> {
  const { store } = context;
  const { subscriptions } = await listSubscriptions(store.database, store.tables.schema, portal.tenant, {
    limit: 20,
    customer_id: portal.session.customer_id,
  });
  const order = (s: Subscription) => (s.status === 'CANCELED' ? 1 : 0);
  const sorted = [...subscriptions].sort((a, b) => order(a) - order(b));
  const [scheduled, usage] = await Promise.all([
    Promise.all(sorted.map((s) => scheduledSwitchOf(context, portal, s))),
    Promise.all(sorted.map((s) => usageSoFarOf(context, portal, s))),
  ]);
  return sorted.map((subscription, i) => ({
    scheduledSwitch: scheduled[i],
    usage: usage[i] ?? null,
    subscription,
    nextAmount:
      subscription.status === 'CANCELED' || subscription.cancel_at_period_end ? null : nextInvoiceAmount(subscription),
    overdue:
      subscription.status === 'PAST_DUE'
        ? (invoices.find((i) => i.subscription_id === subscription.id && i.status === 'open') ?? null)
        : null,
  }));
}

/** The usage the subscription's next invoice bills so far; null when it bills none (no metered prices, or ended). */
async function usageSoFarOf(context: ServiceContext, portal: OpenPortal, subscription: Subscription) {
  if (subscription.status === 'CANCELED' || !billsUsage(subscription)) return null;
  const { database, tables } = context.store;
  return usageSoFar(database, tables.schema, portal.tenant, subscription);
}

/** The latest credit changes the portal lists. */
const CREDIT_ENTRIES_SHOWN = 10;

/**
 * The customer's credits as of their time (a test clock's for a customer on one), without
 * writing: grants past their expiry count as spent though no expiry is recorded yet. Null for a
 * customer who never had credits. `customer` is read beside it by the main page.
 */
async function portalCredits(context: ServiceContext, portal: OpenPortal, customer: Promise<Customer | undefined>) {
  const { database: db, tables } = context.store;
  const customerId = portal.session.customer_id;
  const { entries } = await ledgerPage(db, tables.schema, portal.tenant, customerId, { limit: CREDIT_ENTRIES_SHOWN });
  if (entries.length === 0) return null;
  const now = await timeOn(db, tables.schema, portal.tenant, (await customer)?.test_clock, context.now);
  return { balance: await spendableCredits(db, tables.schema, portal.tenant, customerId, now), entries };
}

/** Everything the main page shows, read from billing's read models. */
export async function mainPageView(context: ServiceContext, portal: OpenPortal, query: Request['query']) {
  const { store } = context;
  const { schema } = store.tables;
  const customerId = portal.session.customer_id;
  const customerRead = findCustomer(store.database, schema, portal.tenant, { by: 'id', value: customerId });
  const [customer, { invoices }, paymentMethod, einvoices, credits] = await Promise.all([
    customerRead,
    listInvoices(store.database, schema, portal.tenant, { limit: 24, customer_id: customerId }),
    savedPaymentMethod(store.database, schema, portal.tenant, customerId),
    portalEinvoices(context, portal),
    portalCredits(context, portal, customerRead),
  ]);
  const subscriptions = await subscriptionViews(context, portal, invoices);
  return {
    customerEmail: customer?.email ?? '',
    subscriptions,
    invoices,
    paymentMethod,
    einvoices,
    credits,
    cardForm:
      portal.features.payment_method_update.enabled && cardChangeable(paymentMethod)
        ? `${portal.base}/payment_method`
        : undefined,
    notice: noticeText(portal, query.notice, subscriptions),
    error: query.error === 'not_allowed' ? portal.t.notAllowed : undefined,
  };
}

/**
 * Whether the card page can change the customer's method: the simulator's card, or none; a card
 * PAYUNi keeps (its fields on the card page: card.ts). Any other method a processor keeps
 * (ECPay's card plan, a transfer per invoice) is changed with the shop.
 */
const cardChangeable = (method: SavedPaymentMethod | null) =>
  !keptByProcessor(method) || method!.id.startsWith('pm_payuni_');

/** A refused change (a 4xx of the domain, such as a canceled subscription) goes back with a notice. */
async function attempt(res: Response, portal: OpenPortal, action: () => Promise<void>) {
  try {
    await action();
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) return backToPortal(res, portal, { error: 'not_allowed' });
    throw error;
  }
}

/**
 * The customer portal's pages at `/portal/<session id>/<token>`, reached through the gateway
 * without an API key; forms only, no script (docs/customer-portal.md).
 */
export function mountPortalPages(app: Express, context: ServiceContext): void {
  const { store } = context;
  const { schema } = store.tables;
  const noStore = (_req: Request, res: Response, next: () => void) => {
    // Pages carry the customer's data and a URL that is a key: never cached, never in a frame.
    res.set({
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'Content-Security-Policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    });
    next();
  };
  app.use('/portal', noStore);

  app.get(BASE, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    res.type('html').send(renderPortalPage(portal, await mainPageView(context, portal, req.query)));
  });

  app.get(`${BASE}/subscriptions/:subscription_id/cancel`, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const subscription = await ownSubscription(context, portal, String(req.params.subscription_id));
    if (!subscription || !portal.features.cancel.enabled) return notFoundPage(res, portal);
    if (subscription.status === 'CANCELED' || subscription.cancel_at_period_end)
      return backToPortal(res, portal, { error: 'not_allowed' });
    res.type('html').send(renderCancelPage(portal, subscription));
  });

  app.post(`${BASE}/subscriptions/:subscription_id/cancel`, form, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const subscription = await ownSubscription(context, portal, String(req.params.subscription_id));
    if (!subscription || !portal.features.cancel.enabled) return notFoundPage(res, portal);
    const atPeriodEnd = portal.features.cancel.mode === 'at_period_end';
    await attempt(res, portal, async () => {
      // Ending now leaves no period end to bill the usage at: it is billed at once, as the API's `invoice_now`.
      if (!atPeriodEnd && billsUsage(subscription)) {
        await cancelNowWithFinalInvoice(context, portal.tenant, subscription.id);
      } else {
        await cancelSubscription(context, portal.tenant, subscription.id, atPeriodEnd);
      }
      backToPortal(res, portal, { notice: atPeriodEnd ? 'canceling' : 'canceled' });
    });
  });

  app.post(`${BASE}/subscriptions/:subscription_id/resume`, form, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const subscription = await ownSubscription(context, portal, String(req.params.subscription_id));
    if (!subscription) return notFoundPage(res, portal);
    await attempt(res, portal, async () => {
      await resumeSubscription(context, portal.tenant, subscription.id);
      backToPortal(res, portal, { notice: 'resumed' });
    });
  });

  mountPortalSwitchPages(app, context);
  mountPortalCardPages(app, context);
  mountPortalEinvoicePages(app, context);

  app.get(`${BASE}/invoices/:invoice_id`, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const invoice = await findInvoice(store.database, schema, portal.tenant, String(req.params.invoice_id));
    const own = invoice && invoice.customer_id === portal.session.customer_id && invoice.status === 'paid';
    if (!own || !portal.features.invoice_history.enabled) return notFoundPage(res, portal);
    const [customer, einvoice] = await Promise.all([
      findCustomer(store.database, schema, portal.tenant, { by: 'id', value: invoice.customer_id }),
      findEinvoiceOf(store.database, schema, portal.tenant, { invoiceId: invoice.id }),
    ]);
    res.type('html').send(renderReceipt(portal, invoice, customer?.email ?? '', einvoice));
  });
}
