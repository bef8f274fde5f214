import { ApiError, PayCheckoutSessionBody, detailsFromZodIssues } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import {
  type EinvoiceForm,
  einvoiceFormChoice,
  findTextProblems,
  formBodies,
  formatTwd,
  languageOf,
  readEinvoiceForm,
} from '@billing/service';
import type { Express, Request, Response } from 'express';
import { PAYUNI_FIELDS_SCRIPT, payuniFieldsScriptUrl } from '../payments/payuni/fields-script';
import { findSessionRow } from '../sessions/queries';
import { applyPromotion, removePromotion } from '../sessions/promotion-code';
import { chooseEinvoice } from '../sessions/einvoice-choice';
import { statusAt } from '../sessions/resource';
import { openedBySoldOutLink } from '../payment-links/queries';
import { paySession } from '../sessions/pay';
import {
  acceptEcpayNotification,
  acceptEcpayPeriodNotification,
  ecpayMethodsOf,
  returnFromEcpay,
  startEcpayPayment,
} from '../sessions/pay-ecpay';
import {
  acceptPayuniCardResult,
  afterPayuniReturn,
  openPayuniCardFields,
  payWithPayuni,
  payuniMerchantFor,
} from '../sessions/pay-payuni';
import { acceptPayuniCodeNotification, payuniCodeMethods, startPayuniCodePayment } from '../sessions/pay-payuni-codes';
import { processorMerchantOf } from '../payments/settings/merchant-of';
import { processorSettingsFor } from '../payments/settings/aggregate';
import { NOTIFICATION_RECEIVED as PAYUNI_RECEIVED } from '../payments/payuni/notifications';
import { dependenciesOf, serviceCaller } from '../dependencies';
import { renderInstructionsPage, renderProcessorRedirect } from './async-payment-pages';
import type { Session } from '../sessions/session';
import { findMerchant } from '@billing/runtime';
import {
  type Messages,
  chooseLocale,
  messagesFor,
  planAllowance,
  planUsagePrices,
  priceSchedule,
  promotionRefusal,
  refusalText,
} from './messages';
import {
  type CheckoutPageView,
  type PageContext,
  type PromotionCodeField,
  type Receipt,
  renderCheckoutPage,
  renderMessagePage,
} from './render';
import { einvoiceSectionFor } from './einvoice-form';
import { receiptOf } from './receipt';

function billingPeriod(session: Session, t: Messages): string | undefined {
  const { interval, interval_count } = session.product;
  if (session.mode !== 'SUBSCRIPTION' || !interval) return undefined;
  return t.period(interval, interval_count);
}

/** What the buyer pays after a free trial: the plan, less the code's discount of its first invoice. */
function trialOf(session: Session): CheckoutPageView['trial'] {
  if (!session.trial_days) return undefined;
  return { days: session.trial_days, thenAmount: session.product.price - (session.discount?.amount ?? 0) };
}

/**
 * What is charged and when: today's amount, then the plan's price per period (less the
 * discount when the coupon lasts forever), or the free days first.
 */
function scheduleOf(session: Session, t: Messages): string {
  const { interval, interval_count, price } = session.product;
  if (session.mode !== 'SUBSCRIPTION' || !interval) {
    const credits = session.product.type === 'CREDITS' ? session.product.credits : null;
    return priceSchedule(t, { today: session.order.amount_total, credits });
  }
  const trial = trialOf(session);
  const forever = session.coupon?.duration === 'forever' ? (session.discount?.amount ?? 0) : 0;
  return priceSchedule(t, {
    today: session.order.amount_total,
    recurring: { amount: trial ? trial.thenAmount : price - forever, interval, count: interval_count },
    trialDays: trial?.days,
  });
}

/** What the code takes off: today's charge, or after a free trial the first one. */
function discountOf(session: Session): CheckoutPageView['discount'] {
  const { discount } = session;
  if (!discount) return undefined;
  return {
    label: discount.label,
    amount: session.trial_days ? (discount.amount ?? 0) : session.order.discount_amount,
    // Promotions keeps codes upper-case and takes them in any case: the page shows the code as kept.
    code: session.promotion_code?.toUpperCase(),
    couponName: session.coupon_name,
  };
}

/** The promotion code form's path under the page's. */
const PROMOTION_CODE_PATH = '/promotion-code';

/** The field while the merchant allows a code and none is applied; Remove for a code the buyer applied. */
function promotionFieldOf(session: Session, pageAction: string): PromotionCodeField | undefined {
  const action = `${pageAction}${PROMOTION_CODE_PATH}`;
  if (session.promotion_code) return session.promotion_code_by_buyer ? { action, removable: true } : undefined;
  return session.allow_promotion_codes ? { action } : undefined;
}

function viewOf(
  session: Session,
  action: string,
  page: PageContext,
  extra: Partial<CheckoutPageView> = {},
): CheckoutPageView {
  return {
    sessionId: session.id,
    productName: session.product.name,
    billingPeriod: billingPeriod(session, page.t),
    amountSubtotal: session.order.amount_subtotal,
    amountTotal: session.order.amount_total,
    discount: discountOf(session),
    promotionCode: promotionFieldOf(session, action),
    email: session.customer_email ?? undefined,
    name: session.customer_name ?? undefined,
    requiresPaymentMethod: session.requires_payment_method,
    cancelUrl: session.cancel_url ?? '',
    action,
    livemode: session.environment === 'PRODUCTION',
    trial: trialOf(session),
    schedule: scheduleOf(session, page.t),
    allowance: session.mode === 'SUBSCRIPTION' ? planAllowance(page.t, session.product.credits) : undefined,
    usagePrices: session.mode === 'SUBSCRIPTION' ? planUsagePrices(page.t, session.product.metered_prices) : undefined,
    t: page.t,
    merchant: page.merchant,
    ...extra,
  };
}

/** The merchant's page to go back to: hosted sessions always have one. */
const backTo = (session: Session, page: PageContext) =>
  session.cancel_url
    ? { href: session.cancel_url, text: page.merchant ? page.t.backTo(page.merchant.name) : page.t.backToShop }
    : undefined;

/** A session that cannot be paid gets a page that says why, never the form. */
async function unpayablePage(
  context: ServiceContext,
  res: Response,
  session: Session | null,
  linkSoldOut: boolean,
  page: PageContext,
): Promise<boolean> {
  const { t } = page;
  const message = (
    status: number,
    title: string,
    text: string,
    back?: { href: string; text: string },
    receipt?: Receipt,
  ) =>
    res
      .status(status)
      .type('html')
      .send(renderMessagePage(title, text, back, { t, merchant: page.merchant, receipt }));
  if (!session) {
    message(404, t.titles.notFound, t.texts.notFound);
    return true;
  }
  if (session.order.status === 'REFUNDED') {
    const text =
      session.subscription_id === null && session.mode === 'SUBSCRIPTION'
        ? t.texts.refundedDuplicate
        : t.texts.refunded;
    message(409, t.titles.refunded, text, backTo(session, page));
    return true;
  }
  if (session.status === 'COMPLETE') {
    message(409, t.titles.alreadyPaid, t.texts.alreadyPaid, backTo(session, page), await receiptOf(context, session));
    return true;
  }
  if (statusAt(session, context.now()) === 'EXPIRED') {
    message(410, t.titles.expired, t.texts.expired, backTo(session, page));
    return true;
  }
  if (linkSoldOut) {
    message(410, t.titles.linkUnavailable, t.texts.linkSoldOut, backTo(session, page));
    return true;
  }
  return false;
}

/** Billing's duplicate-subscription 409: the session stays payable with another email. */
const isAlreadySubscribed = (error: ApiError) =>
  error.status === 409 &&
  (error.details?.[0] as { existing_subscription_id?: unknown } | undefined)?.existing_subscription_id !== undefined;

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
 * to the merchant's success URL, a decline shows the page again with the reason and every
 * field the buyer typed but the card number and CVC. In the session's `locale`, else the
 * browser's language; with the merchant's name, logo and brand colour.
 */
export function mountHostedPage(app: Express, context: ServiceContext): void {
  const { store } = context;
  // Before the session's page: no session id is this name.
  app.get('/checkout/payuni-fields.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'public, max-age=300').send(PAYUNI_FIELDS_SCRIPT);
  });
  // An embedded checkout is paid on the merchant's page only: it has no hosted page.
  const loadRow = async (req: Request) => {
    const row = await findSessionRow(store.database, store.tables.schema, String(req.params.session_id));
    return row?.session.ui_mode === 'embedded' ? null : row;
  };
  const load = async (req: Request) => (await loadRow(req))?.session ?? null;
  const pageOf = async (req: Request, session: Session | null): Promise<PageContext> => ({
    t: messagesFor(chooseLocale(session?.locale, req.get('accept-language'))),
    merchant: session ? await findMerchant(store.database, store.tables.schema, session.organization) : null,
  });
  const soldOut = (session: Session | null) =>
    session ? openedBySoldOutLink(store.database, store.tables.schema, session) : Promise.resolve(false);
  const refused = async (res: Response, session: Session | null, page: PageContext) =>
    unpayablePage(context, res, session, await soldOut(session), page);
  const action = (req: Request) => req.originalUrl.split('?')[0]!;
  // What the page offers in place of its own card fields: the processor's methods, PAYUNi's card fields, or both.
  const processorFields = async (session: Session): Promise<Partial<CheckoutPageView>> => {
    const processor = await processorMerchantOf(context, session.organization, session.environment);
    if (processor?.processor === 'ecpay') {
      return { processorMethods: { processor: 'ecpay', methods: ecpayMethodsOf(session, processor.methods) } };
    }
    if (processor?.processor !== 'payuni' || !session.requires_payment_method) return {};
    const origin = new URL(dependenciesOf(context).checkoutUrl).origin;
    const payuniFields = {
      ...(await openPayuniCardFields(context, session, processor.merchant, origin)),
      bindScriptUrl: payuniFieldsScriptUrl(dependenciesOf(context).checkoutUrl),
    };
    const codes = payuniCodeMethods(processor.methods, session);
    if (codes.length === 0) return { payuniFields };
    return { payuniFields, processorMethods: { processor: 'payuni', methods: ['card', ...codes] } };
  };
  const einvoiceSectionOf = (session: Session, posted: EinvoiceForm | null) =>
    einvoiceSectionFor(context, session, posted);
  /** The processor's fields, or null once a page saying payments are unavailable was sent (PAYUNi did not answer). */
  const fieldsOrUnavailable = async (res: Response, session: Session, page: PageContext) => {
    try {
      return await processorFields(session);
    } catch (err) {
      context.logger.warn({ err, session: session.id }, 'the processor did not open its card fields');
      const text = page.t.declines.processor_unavailable!;
      const title = page.t.titles.paymentsUnavailable;
      res
        .status(503)
        .type('html')
        .send(renderMessagePage(title, text, backTo(session, page), page));
      return null;
    }
  };

  app.get('/checkout/:session_id', async (req, res) => {
    const session = await load(req);
    const page = await pageOf(req, session);
    if (await refused(res, session, page)) return;
    if (session!.async_payment) {
      res.type('html').send(renderInstructionsPage(session!.product.name, session!.async_payment.instructions, page));
      return;
    }
    if (session!.pending_charge?.processor === 'ecpay') {
      const { confirmingTitle, confirming, processors } = page.t.asyncPayment;
      res.type('html').send(renderMessagePage(confirmingTitle, confirming(processors.ecpay), undefined, page));
      return;
    }
    const fields = await fieldsOrUnavailable(res, session!, page);
    if (!fields) return;
    const einvoice = await einvoiceSectionOf(session!, null);
    res.type('html').send(renderCheckoutPage(viewOf(session!, action(req), page, { ...fields, einvoice })));
  });

  // The promotion code form: applies the typed code as an embedded checkout's coupon box does
  // (reserved at promotions, recorded on the session), or removes a code the buyer applied here;
  // then back to the page, or the page again with the refusal at the field and nothing changed.
  app.post(`/checkout/:session_id${PROMOTION_CODE_PATH}`, formBodies('2kb'), async (req, res) => {
    const session = await load(req);
    const page = await pageOf(req, session);
    if (await refused(res, session, page)) return;
    const pageAction = action(req).slice(0, -PROMOTION_CODE_PATH.length);
    // Waiting for an ATM or store payment, or for a processor's answer: the page says so.
    if (session!.async_payment || session!.pending_charge) return res.redirect(303, pageAction);
    const form = (req.body ?? {}) as Record<string, unknown>;
    const typed =
      typeof form.code === 'string' && findTextProblems({ code: form.code }).length === 0
        ? form.code.trim().slice(0, 100)
        : undefined;
    const t = page.t.promotion;
    /** The page as the session now is, the refusal at the field (above the form once a code is applied). */
    const again = async (status: number, message: string) => {
      const current = (await load(req)) ?? session!;
      const fields = await fieldsOrUnavailable(res, current, page);
      if (!fields) return;
      const view = viewOf(current, pageAction, page, { ...fields, einvoice: await einvoiceSectionOf(current, null) });
      const atField = view.promotionCode && !view.discount;
      const refusal = atField
        ? { promotionCode: { ...view.promotionCode!, typed, error: message } }
        : { error: message };
      res
        .status(status)
        .type('html')
        .send(renderCheckoutPage({ ...view, ...refusal }));
    };
    try {
      if (typeof form.remove === 'string') {
        // Only the code the page showed, and only one the buyer applied: the merchant's stays.
        const shownCode = form.remove.toUpperCase() === session!.promotion_code?.toUpperCase();
        if (!session!.promotion_code_by_buyer || !shownCode) return await again(409, t.changedMeanwhile);
        await removePromotion(context, session!);
      } else {
        if (!session!.allow_promotion_codes) return await again(403, t.notOffered);
        // The same code again (a second click): applied already.
        const current = session!.promotion_code?.toUpperCase();
        if (current && current === typed?.toUpperCase()) return res.redirect(303, pageAction);
        if (current) return await again(409, t.changedMeanwhile);
        if (!typed) return await again(422, t.required);
        // Anyone with the page's address may type here: refusals say no more than to a Publishable Key.
        const buyer = {
          ...serviceCaller(session!.organization, session!.environment),
          keyKind: 'publishable' as const,
        };
        await applyPromotion(context, buyer, session!, typed);
      }
      res.redirect(303, pageAction);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 409) {
        const current = await load(req);
        if (await refused(res, current, page)) return;
        if (current?.attempt) {
          const { inProgress } = page.t.titles;
          return res
            .status(409)
            .type('html')
            .send(renderMessagePage(inProgress, page.t.texts.inProgress, undefined, page));
        }
      }
      const message = promotionRefusal(error, page.t);
      if (message === null) throw error;
      await again(error.status, message);
    }
  });

  // PAYUNi's card result after 3-D Secure: server to server (answered `OK` once recorded), and
  // through the buyer's browser (sent on to the success URL once paid, else back to the page).
  app.post('/checkout/:session_id/payuni/notify', formBodies('16kb'), async (req, res) => {
    try {
      await acceptPayuniCardResult(context, String(req.params.session_id), req.body ?? {});
      res.type('text').send('OK');
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      res.status(error.status).type('text').send(error.message);
    }
  });
  app.post('/checkout/:session_id/payuni/return', formBodies('16kb'), async (req, res) => {
    const session = await acceptPayuniCardResult(context, String(req.params.session_id), req.body ?? {});
    res.redirect(303, afterPayuniReturn(context, session));
  });

  // PAYUNi's posts about an ATM account or a store code: issued, then paid (server to server,
  // answered `OK` once recorded); and the buyer's browser back from PAYUNi's page with the same
  // signed fields, sent to the page (the account or code) or the success URL once paid.
  app.post('/checkout/:session_id/payuni/code-notify', formBodies('16kb'), async (req, res) => {
    try {
      await acceptPayuniCodeNotification(context, String(req.params.session_id), req.body ?? {});
      res.type('text').send(PAYUNI_RECEIVED);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      res.status(error.status).type('text').send(error.message);
    }
  });
  app.post('/checkout/:session_id/payuni/code-return', formBodies('16kb'), async (req, res) => {
    const sessionId = String(req.params.session_id);
    const session = await acceptPayuniCodeNotification(context, sessionId, req.body ?? {}).catch((err: unknown) => {
      if (!(err instanceof ApiError)) throw err;
      // A buyer's browser is never answered 400: the page says where the payment stands.
      context.logger.warn({ session: sessionId, reason: err.message }, 'a PAYUNi return did not check out');
      return null;
    });
    res.redirect(
      303,
      session ? afterPayuniReturn(context, session) : `${dependenciesOf(context).checkoutUrl}/${sessionId}`,
    );
  });

  // The buyer's browser back from ECPay's page: to the success URL once paid, else to this page.
  app.post('/checkout/:session_id/ecpay/return', formBodies('16kb'), async (req, res) => {
    res.redirect(303, await returnFromEcpay(context, String(req.params.session_id)));
  });

  // ECPay's server-to-server posts about the session's trade (docs/payments.md): answered as ECPay reads them.
  const accept = {
    'payment-info': acceptEcpayNotification,
    result: acceptEcpayNotification,
    period: acceptEcpayPeriodNotification,
  };
  for (const [kind, acceptPost] of Object.entries(accept)) {
    app.post(`/checkout/:session_id/ecpay/${kind}`, formBodies('16kb'), async (req, res) => {
      try {
        res.type('text').send(await acceptPost(context, String(req.params.session_id), req.body ?? {}));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        res.status(error.status).type('text').send(`0|${error.message}`);
      }
    });
  }

  app.post('/checkout/:session_id', formBodies('10kb'), async (req, res) => {
    const row = await loadRow(req);
    const session = row?.session ?? null;
    const page = await pageOf(req, session);
    // A sold-out link is checked by paySession itself; its 409 then shows the page below.
    if (await unpayablePage(context, res, session, false, page)) return;
    const form = (req.body ?? {}) as Record<string, unknown>;
    const typedValue = (name: string) =>
      typeof form[name] === 'string' && findTextProblems({ [name]: form[name] }).length === 0
        ? (form[name] as string).slice(0, 255)
        : undefined;
    // Kept for the next attempt: never the card number or the CVC.
    const typed = { email: typedValue('email'), name: typedValue('name'), exp: typedValue('exp') };
    // The e-invoice choice is checked with the rest of the form, and recorded before any charge.
    const postedEinvoice = readEinvoiceForm(form);
    const section = await einvoiceSectionOf(session!, postedEinvoice);
    const chosen = section && postedEinvoice ? einvoiceFormChoice(postedEinvoice, section.donationOffered) : null;
    const einvoice = section && { ...section, invalid: chosen && 'invalid' in chosen ? chosen.invalid : undefined };
    const again = (status: number, extra: Partial<CheckoutPageView>, shown: Session = session!) =>
      res
        .status(status)
        .type('html')
        .send(renderCheckoutPage(viewOf(shown, action(req), page, { typed, einvoice, ...extra })));
    /** The page with the new total, when a code changed it after the buyer saw the old one: nothing charged. */
    const newTotal = async (shown: Session) => {
      const fields = await fieldsOrUnavailable(res, shown, page);
      const error = page.t.promotion.totalChanged(formatTwd(shown.order.amount_total));
      if (fields) again(409, { error, ...fields }, shown);
    };
    const shownTotal = typeof form.shown_total === 'string' ? Number(form.shown_total) : null;
    if (shownTotal !== null && shownTotal !== session!.order.amount_total) return newTotal(session!);
    // The form is read here, after the service kit's edge: its text is checked the same way
    // (NUL, lone surrogates, control characters; a name on one line) before anything is charged.
    const refusedText = findTextProblems(form).map((d) => d.path);
    const parsed = payBodyOf(form);
    if (refusedText.length > 0 || !parsed.success || einvoice?.invalid) {
      const invalid = parsed.success ? [] : detailsFromZodIssues(parsed.error.issues).map((d) => d.path);
      const fields = [...new Set([...refusedText, ...invalid])].join(', ');
      const shown = await fieldsOrUnavailable(res, session!, page);
      if (shown) again(422, { error: fields ? page.t.checkFields(fields) : page.t.einvoice.invalid, ...shown });
      return;
    }
    // The language the buyer reads (the session's, else the one their browser asks for): their emails'.
    const locale = session!.locale ?? languageOf(req.get('accept-language')) ?? undefined;
    try {
      const known = chosen && 'choice' in chosen ? await chooseEinvoice(context, row!, chosen.choice) : row!;
      // A checkout with nothing to charge completes without a processor, as with the simulator.
      // Otherwise the processor settings are read once: where the payment goes, and whether it may.
      const processor = await processorSettingsFor(store, session!);
      const payuni = await payuniMerchantFor(context, session!, processor);
      // PAYUNi: the card is in its fields; any other method chosen is a code on PAYUNi's page.
      if (payuni && typeof form.method === 'string' && form.method !== 'card') {
        const { email, name } = parsed.data;
        const codeForm = await startPayuniCodePayment(context, session!.id, {
          method: form.method,
          email,
          name,
          locale,
        });
        res.type('html').send(renderProcessorRedirect(codeForm, 'payuni', page));
        return;
      }
      if (payuni) {
        const paid = await payWithPayuni(context, session!.id, { ...parsed.data, locale }, 'hosted', payuni);
        return res.redirect(303, paid.status === 'complete' ? paid.redirectUrl! : paid.url);
      }
      if (typeof form.method === 'string') {
        try {
          const processorForm = await startEcpayPayment(context, session!.id, {
            method: form.method,
            email: parsed.data.email,
            name: parsed.data.name,
            locale,
          });
          res.type('html').send(renderProcessorRedirect(processorForm, 'ecpay', page));
        } catch (error) {
          if (!(error instanceof ApiError) || error.status === 409) throw error;
          // Read only for the page shown again: the payment reads the processor settings itself.
          again(error.status, { error: refusalText(error, page.t), ...(await processorFields(session!)) });
        }
        return;
      }
      const outcome = await paySession(
        context,
        session!.id,
        parsed.data,
        { uiMode: 'hosted', locale, processor },
        known,
      );
      if (outcome.status === 'complete') return res.redirect(303, outcome.redirectUrl!);
      again(200, { challenge: true });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (isAlreadySubscribed(error)) {
        again(409, { error: page.t.alreadySubscribed });
        return;
      }
      if (error.status === 409 || error.status === 404) {
        const current = await load(req);
        if (await refused(res, current, page)) return;
        if (current && current.order.amount_total !== session!.order.amount_total) return newTotal(current);
        res
          .status(409)
          .type('html')
          .send(renderMessagePage(page.t.titles.inProgress, page.t.texts.inProgress, undefined, page));
        return;
      }
      const fields = await fieldsOrUnavailable(res, session!, page);
      if (fields) again(error.status, { error: refusalText(error, page.t), ...fields });
    }
  });
}
