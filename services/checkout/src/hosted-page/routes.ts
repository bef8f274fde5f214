import { ApiError, PayCheckoutSessionBody, detailsFromZodIssues } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { findTextProblems } from '@billing/service';
import express, { type Express, type Request, type Response } from 'express';
import { findSession } from '../sessions/queries';
import { statusAt } from '../sessions/resource';
import { SOLD_OUT_MESSAGE } from '../payment-links/link';
import { openedBySoldOutLink } from '../payment-links/queries';
import { paySession } from '../sessions/pay';
import type { Session } from '../sessions/session';
import { type CheckoutPageView, renderCheckoutPage, renderMessagePage } from './render';

function billingPeriod(session: Session): string | undefined {
  const { interval, interval_count } = session.product;
  if (session.mode !== 'SUBSCRIPTION' || !interval) return undefined;
  return interval_count === 1 ? `per ${interval}` : `every ${interval_count} ${interval}s`;
}

/** What the buyer pays after a free trial: the plan, less the code's discount of its first invoice. */
function trialOf(session: Session): CheckoutPageView['trial'] {
  if (!session.trial_days) return undefined;
  return { days: session.trial_days, thenAmount: session.product.price - (session.discount?.amount ?? 0) };
}

function viewOf(session: Session, action: string, extra: Partial<CheckoutPageView> = {}): CheckoutPageView {
  return {
    sessionId: session.id,
    productName: session.product.name,
    billingPeriod: billingPeriod(session),
    amountSubtotal: session.order.amount_subtotal,
    amountTotal: session.order.amount_total,
    discount: session.discount ? { label: session.discount.label, amount: session.order.discount_amount } : undefined,
    email: session.customer_email ?? undefined,
    name: session.customer_name ?? undefined,
    requiresPaymentMethod: session.requires_payment_method,
    cancelUrl: session.cancel_url ?? '',
    action,
    livemode: session.environment === 'PRODUCTION',
    trial: trialOf(session),
    ...extra,
  };
}

/** The merchant's page to go back to: hosted sessions always have one. */
const backTo = (session: Session) =>
  session.cancel_url ? { href: session.cancel_url, text: 'Return to the shop' } : undefined;

/** A session that cannot be paid gets a page that says why, never the form. */
function unpayablePage(res: Response, session: Session | null, now: Date, linkSoldOut: boolean): boolean {
  if (!session) {
    res.status(404).type('html').send(renderMessagePage('Checkout not found', 'This checkout link is not valid.'));
    return true;
  }
  if (session.order.status === 'REFUNDED') {
    const back = backTo(session);
    res
      .status(409)
      .type('html')
      .send(renderMessagePage('Payment refunded', refundedMessage(session), back));
    return true;
  }
  if (session.status === 'COMPLETE') {
    res
      .status(409)
      .type('html')
      .send(renderMessagePage('Already paid', 'This checkout has been paid. Nothing more is charged.'));
    return true;
  }
  if (statusAt(session, now) === 'EXPIRED') {
    const back = backTo(session);
    res
      .status(410)
      .type('html')
      .send(renderMessagePage('Checkout expired', 'This checkout has expired. Please start again.', back));
    return true;
  }
  if (linkSoldOut) {
    const back = backTo(session);
    res
      .status(410)
      .type('html')
      .send(renderMessagePage('Payment link unavailable', SOLD_OUT_MESSAGE, back));
    return true;
  }
  return false;
}

function refundedMessage(session: Session): string {
  return session.subscription_id === null && session.mode === 'SUBSCRIPTION'
    ? 'This email already had a subscription to this product, so this payment was refunded in full.'
    : 'This payment was refunded in full.';
}

/** Billing's duplicate-subscription 409: the session stays payable with another email. */
const isAlreadySubscribed = (error: ApiError) =>
  error.status === 409 &&
  (error.details?.[0] as { existing_subscription_id?: unknown } | undefined)?.existing_subscription_id !== undefined;

const ALREADY_SUBSCRIBED =
  'This email already has a subscription to this product. Nothing was charged. Use another email, or manage the subscription you have.';

/** The form's fields as the pay body; empty fields are left out. */
function payBodyOf(form: Record<string, unknown>) {
  const pick = (name: string) =>
    typeof form[name] === 'string' && form[name] !== '' ? (form[name] as string) : undefined;
  return PayCheckoutSessionBody.safeParse({
    email: pick('email'),
    name: pick('name'),
    card_number: pick('card_number'),
    exp: pick('exp'),
    cvc: pick('cvc'),
    challenge: pick('challenge'),
  });
}

/**
 * The hosted checkout page at CHECKOUT_URL/<session id>, served through the gateway's
 * /checkout pages. It works without JavaScript: the form posts back here, success redirects
 * to the merchant's success URL, a decline shows the page again with the reason.
 */
export function mountHostedPage(app: Express, context: ServiceContext): void {
  const { store, now } = context;
  // An embedded checkout is paid on the merchant's page only: it has no hosted page.
  const load = async (req: Request) => {
    const session = await findSession(store.database, store.tables.schema, String(req.params.session_id));
    return session?.ui_mode === 'embedded' ? null : session;
  };
  const soldOut = (session: Session | null) =>
    session ? openedBySoldOutLink(store.database, store.tables.schema, session.id) : Promise.resolve(false);
  const refused = async (res: Response, session: Session | null) =>
    unpayablePage(res, session, now(), await soldOut(session));
  const action = (req: Request) => req.originalUrl.split('?')[0]!;

  app.get('/checkout/:session_id', async (req, res) => {
    const session = await load(req);
    if (await refused(res, session)) return;
    res.type('html').send(renderCheckoutPage(viewOf(session!, action(req))));
  });

  app.post('/checkout/:session_id', express.urlencoded({ extended: false, limit: '10kb' }), async (req, res) => {
    const session = await load(req);
    // A sold-out link is checked by paySession itself; its 409 then shows the page below.
    if (unpayablePage(res, session, now(), false)) return;
    const form = (req.body ?? {}) as Record<string, unknown>;
    // The form is read here, after the service kit's edge: its text is checked the same way
    // (NUL, lone surrogates, control characters; a name on one line) before anything is charged.
    const refusedText = findTextProblems(form).map((d) => d.path);
    const parsed = payBodyOf(form);
    if (refusedText.length > 0 || !parsed.success) {
      const invalid = parsed.success ? [] : detailsFromZodIssues(parsed.error.issues).map((d) => d.path);
      const fields = [...new Set([...refusedText, ...invalid])].join(', ');
      res
        .status(422)
        .type('html')
        .send(renderCheckoutPage(viewOf(session!, action(req), { error: `Please check: ${fields}` })));
      return;
    }
    try {
      const outcome = await paySession(context, session!.id, parsed.data);
      if (outcome.status === 'complete') return res.redirect(303, outcome.redirectUrl!);
      res.type('html').send(renderCheckoutPage(viewOf(session!, action(req), { challenge: true })));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (isAlreadySubscribed(error)) {
        res
          .status(409)
          .type('html')
          .send(renderCheckoutPage(viewOf(session!, action(req), { error: ALREADY_SUBSCRIBED })));
        return;
      }
      if (error.status === 409 || error.status === 404) {
        if (await refused(res, await load(req))) return;
        res
          .status(409)
          .type('html')
          .send(renderMessagePage('Payment in progress', 'This checkout is being paid in another window.'));
        return;
      }
      res
        .status(error.status)
        .type('html')
        .send(renderCheckoutPage(viewOf(session!, action(req), { error: error.message })));
    }
  });
}
