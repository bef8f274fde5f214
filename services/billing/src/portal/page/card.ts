import {
  ApiError,
  CreatePaymentMethodBody,
  type CreatedPaymentMethod,
  type ErrorDetail,
  type ErrorEnvelope,
  type Invoice,
  type PortalCardChallenge,
  type PortalCardFields,
  detailsFromZodIssues,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { findTextProblems, formBodies } from '@billing/service';
import type { Express, Response } from 'express';
import { recordDeclinedRetry, setDefaultPaymentMethod } from '../../engine/renewals/new-card';
import { checkoutClient } from '../../dependencies';
import { forgetPendingCharges, isChargePending, notePendingCharges } from '../../charges/pending';
import { invoiceChargeKey } from '../../invoices/payment';
import { listInvoices } from '../../invoices/read-model';
import { DEFAULT_PORTAL_URL } from '../sessions/capability';
import { listSubscriptions } from '../../subscriptions/queries';
import { openPortal } from './access';
import type { OpenPortal } from './open-portal';
import { renderCardForm, renderProcessorCardPage, renderToTheBank } from './render-card';
import { backToPortal, notFoundPage } from './respond';

const PATH = '/portal/:session_id/:token/payment_method';
const form = formBodies('10kb');

/** The open invoices of the customer's PAST_DUE subscriptions: the new card pays them at once. */
async function overdueInvoices(context: ServiceContext, portal: OpenPortal): Promise<Invoice[]> {
  const { store } = context;
  const customerId = portal.session.customer_id;
  const [{ subscriptions }, { invoices }] = await Promise.all([
    listSubscriptions(store.database, store.tables.schema, portal.tenant, { limit: 100, customer_id: customerId }),
    listInvoices(store.database, store.tables.schema, portal.tenant, {
      limit: 100,
      customer_id: customerId,
      status: 'open',
    }),
  ]);
  const pastDue = new Set(subscriptions.filter((s) => s.status === 'PAST_DUE').map((s) => s.id));
  return invoices.filter((invoice) => invoice.subscription_id !== null && pastDue.has(invoice.subscription_id));
}

/** The form's fields as checkout's card body; text problems and bad fields name the fields. */
function cardOf(fields: Record<string, unknown>): { card?: CreatePaymentMethodBody; invalid: string[] } {
  const pick = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string).trim() : undefined);
  const parsed = CreatePaymentMethodBody.safeParse({
    card_number: pick('card_number'),
    exp: pick('exp'),
    cvc: pick('cvc'),
  });
  const refused = findTextProblems({ card_number: fields.card_number, exp: fields.exp, cvc: fields.cvc }).map(
    (d) => d.path,
  );
  const invalid = parsed.success ? [] : detailsFromZodIssues(parsed.error.issues).map((d) => d.path);
  const all = [...new Set([...refused, ...invalid])];
  return all.length === 0 && parsed.success ? { card: parsed.data, invalid: [] } : { invalid: all };
}

/** Who the portal's calls to checkout are from: the customer's organization and environment, as billing's portal. */
const checkoutCallerOf = (portal: OpenPortal) => ({
  ...portal.tenant,
  keyKind: 'secret' as const,
  keyId: 'billing-portal',
});

/** Where the portal's pages are served from (`PORTAL_URL`'s origin): PAYUNi's fields and the bank send the customer back there. */
const portalOriginOf = (context: ServiceContext) => new URL(context.config.PORTAL_URL ?? DEFAULT_PORTAL_URL).origin;

/** Checkout saves the card (its processor verifies it, nothing charged); a refusal is 402 with the reason. */
async function saveCard(context: ServiceContext, portal: OpenPortal, card: CreatePaymentMethodBody) {
  const checkout = checkoutClient(context);
  if (!checkout) throw new ApiError(503, 'service_unavailable', 'checkout is not configured');
  const { status, body } = await checkout.post<CreatedPaymentMethod | ErrorEnvelope>(
    '/internal/payment_methods',
    card,
    checkoutCallerOf(portal),
  );
  if (status === 201) return { saved: body as CreatedPaymentMethod };
  if (status === 402 || status === 422) return { refused: refusalCode(body) };
  throw new ApiError(503, 'service_unavailable', `checkout answered ${status} to a new card`);
}

/**
 * Where the customer types the new card, by the organization's processor (checkout knows it):
 * the portal's own form for the simulator, PAYUNi's card fields, or none for ECPay.
 */
async function cardFieldsOf(context: ServiceContext, portal: OpenPortal): Promise<PortalCardFields> {
  const checkout = checkoutClient(context);
  if (!checkout) return { processor: 'sandbox' };
  const iframeDomain = portalOriginOf(context);
  const { status, body } = await checkout.post<PortalCardFields>(
    '/internal/payment_methods/card_fields',
    { customer_id: portal.session.customer_id, iframe_domain: iframeDomain },
    checkoutCallerOf(portal),
  );
  if (status === 200) return body;
  throw new ApiError(503, 'service_unavailable', `checkout answered ${status} for the card fields`);
}

/** The first detail of checkout's refusal of a card, which says why. */
const refusalDetailOf = (body: unknown) =>
  (body as ErrorEnvelope | undefined)?.error?.details?.[0] as Partial<ErrorDetail> | undefined;

/** The reason checkout gave for refusing a card (its first detail's code), e.g. `authentication_required`. */
const refusalCode = (body: unknown): string => refusalDetailOf(body)?.code ?? 'card_declined';

/**
 * What became of a card typed into PAYUNi's fields: kept, refused (with checkout's reason), sent
 * to its bank (3-D Secure, `challenge` the bank's page), a charge's outcome not known, or not saved.
 */
type PayuniCardOutcome =
  | { saved: CreatedPaymentMethod }
  | { refused: string }
  | { challenge: string }
  | { unknown: true }
  | { notSaved: true };

/** The portal's page the customer comes back to from the bank, for the charge under `key`. */
const confirmUrlOf = (context: ServiceContext, portal: OpenPortal, key: string) =>
  `${portalOriginOf(context)}${portal.base}/payment_method/confirm?${new URLSearchParams({ key })}`;

/**
 * PAYUNi keeps a card once it has charged it: the card in its fields pays the first overdue
 * invoice, under the key billing's retry of that invoice uses (so the retry that follows finds
 * that charge at PAYUNi and charges nothing more), and is kept. Noted as pending before it is
 * asked, as every charge is (docs/lost-answers.md): an answer lost leaves it to the reconciler,
 * and the page asks nothing more under that key meanwhile. Nothing overdue: the card is verified
 * instead (`verifyPayuniCard`).
 */
async function payWithPayuniCard(
  context: ServiceContext,
  portal: OpenPortal,
  overdue: Invoice[],
): Promise<PayuniCardOutcome> {
  const invoice = overdue[0];
  const checkout = checkoutClient(context);
  if (!checkout) return { notSaved: true };
  if (!invoice) return verifyPayuniCard(context, portal);
  const { database, tables } = context.store;
  const attempt = invoice.attempt_count + 1;
  const key = invoiceChargeKey(invoice.id, attempt);
  if (await isChargePending(database, tables.schema, key)) return { unknown: true };
  const amount = invoice.amount_due;
  const pending = { key, ...portal.tenant, purpose: 'invoice' as const, subject: invoice.id, attempt, amount };
  await notePendingCharges(database, tables.schema, [pending]);
  const charge = {
    customer_id: portal.session.customer_id,
    idempotency_key: key,
    amount,
    description: invoice.number ?? invoice.id,
    return_url: confirmUrlOf(context, portal, key),
  };
  const caller = checkoutCallerOf(portal);
  const answer = await checkout
    .post<CreatedPaymentMethod | ErrorEnvelope | PortalCardChallenge>(
      '/internal/payment_methods/payuni',
      charge,
      caller,
    )
    .catch(() => null);
  // Charged: the retry with the kept card records it under the same key.
  if (answer?.status === 201) return { saved: answer.body as CreatedPaymentMethod };
  // The bank asks for the customer: the charge stays pending until they come back (confirmPayuniCard).
  if (answer?.status === 202) return { challenge: (answer.body as PortalCardChallenge).redirect_url };
  if (answer?.status === 402) return declinedUnder(context, portal, invoice, answer.body);
  if (answer && [400, 409, 422].includes(answer.status)) {
    // Refused before PAYUNi was asked (no card in the fields, or the organization not on PAYUNi).
    await forgetPendingCharges(database, tables.schema, [key]);
    return { refused: refusalCode(answer.body) };
  }
  return { unknown: true };
}

/** Declined under the attempt's key: counted, so the next card gets a key of its own. */
async function declinedUnder(
  context: ServiceContext,
  portal: OpenPortal,
  invoice: Invoice,
  refusal: unknown,
): Promise<PayuniCardOutcome> {
  const reason = refusalDetailOf(refusal);
  const declined = { code: reason?.code ?? 'card_declined', message: reason?.message ?? 'The card was declined' };
  await recordDeclinedRetry(context, portal.tenant, invoice, declined);
  return { refused: declined.code };
}

/**
 * The customer back from the bank: checkout tells what came of the charge under `key`, which
 * must be the next attempt of one of the customer's overdue invoices. Kept, it pays the invoice
 * as a card typed here does; declined, it is counted; not known yet, the page says the payment is
 * being confirmed and the pending charge is the reconciler's. Null when the key names no such
 * attempt (already settled, or not this customer's).
 */
async function confirmPayuniCard(
  context: ServiceContext,
  portal: OpenPortal,
  key: string,
): Promise<PayuniCardOutcome | null> {
  const overdue = await overdueInvoices(context, portal);
  const invoice = overdue.find((i) => invoiceChargeKey(i.id, i.attempt_count + 1) === key);
  if (!invoice) return null;
  const answer = await checkoutClient(context)!
    .post<CreatedPaymentMethod | ErrorEnvelope>(
      '/internal/payment_methods/payuni/result',
      { customer_id: portal.session.customer_id, idempotency_key: key },
      checkoutCallerOf(portal),
    )
    .catch(() => null);
  if (answer?.status === 201) return { saved: answer.body as CreatedPaymentMethod };
  if (answer?.status === 402) return declinedUnder(context, portal, invoice, answer.body);
  if (answer?.status === 404) return null;
  return { unknown: true };
}

/** Nothing due: checkout verifies the card in PAYUNi's fields by NT$1 given back, and keeps it. */
async function verifyPayuniCard(context: ServiceContext, portal: OpenPortal): Promise<PayuniCardOutcome> {
  const caller = checkoutCallerOf(portal);
  const answer = await checkoutClient(context)!
    .post<CreatedPaymentMethod | ErrorEnvelope>(
      '/internal/payment_methods/payuni/verify',
      { customer_id: portal.session.customer_id },
      caller,
    )
    .catch(() => null);
  if (answer?.status === 201) return { saved: answer.body as CreatedPaymentMethod };
  if (answer && [400, 402, 409, 422].includes(answer.status)) return { refused: refusalCode(answer.body) };
  // No answer: nothing was kept; the NT$1, if PAYUNi took it, is given back by checkout's sweep.
  return { notSaved: true };
}

/**
 * Update the card in the portal: the sandbox card form (as on checkout's page), saved by
 * checkout, made the customer's default by `setDefaultPaymentMethod`, which at once retries
 * the open invoice of a PAST_DUE subscription with it (the same charges and webhooks as a
 * dunning retry). For an organization on PAYUNi, the card in PAYUNi's fields pays the first
 * overdue invoice, or with nothing overdue is verified by NT$1 given back (`payWithPayuniCard`);
 * on ECPay the page says the card is ECPay's.
 */
export function mountPortalCardPages(app: Express, context: ServiceContext): void {
  const send = async (res: Response, portal: OpenPortal, status: number, error?: string) => {
    const overdue = await overdueInvoices(context, portal);
    const answer = await cardFieldsOf(context, portal);
    if (answer.processor === 'sandbox')
      return res
        .status(status)
        .type('html')
        .send(renderCardForm(portal, overdue, error));
    if (answer.processor === 'ecpay') {
      return res
        .status(status)
        .type('html')
        .send(renderProcessorCardPage(portal, [], 'ecpay', error));
    }
    const { fields } = answer;
    const page = {
      sdkToken: fields.sdk_token,
      scriptUrl: fields.script_url,
      bindScriptUrl: fields.bind_script_url,
      env: fields.env,
    };
    // PAYUNi's script and frames, and checkout's script beside them; nothing inline.
    const scripts = `${new URL(fields.script_url).origin} ${new URL(fields.bind_script_url).origin}`;
    const payuni = `${new URL(fields.script_url).origin} https://*.payuni.com.tw`;
    res
      .status(status)
      .set(
        'Content-Security-Policy',
        `default-src 'none'; style-src 'unsafe-inline'; script-src ${scripts} https://*.payuni.com.tw; ` +
          `connect-src ${payuni}; frame-src ${payuni}; img-src ${payuni} data:; form-action 'self'; ` +
          "frame-ancestors 'none'; base-uri 'none'",
      )
      .type('html')
      .send(renderProcessorCardPage(portal, overdue, page, error));
  };

  app.get(PATH, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    if (!portal.features.payment_method_update.enabled) return notFoundPage(res, portal);
    await send(res, portal, 200);
  });

  /** The card's outcome as the customer sees it: the portal with a notice, or this page saying why not. */
  const answer = async (res: Response, portal: OpenPortal, outcome: CardOutcome) => {
    if ('invalid' in outcome) return send(res, portal, 422, portal.t.checkFields(outcome.invalid.join(', ')));
    if ('challenge' in outcome) return toTheBank(res, portal, outcome.challenge);
    if ('unknown' in outcome) return send(res, portal, 502, portal.t.paymentPending);
    if ('notSaved' in outcome) return send(res, portal, 502, portal.t.cardNotSaved);
    if ('refused' in outcome) {
      // A card that asks for 3-D Secure is not declined: the portal cannot send the customer to the bank.
      const refusal = outcome.refused === 'authentication_required' ? portal.t.cardNeedsBank : portal.t.cardDeclined;
      return send(res, portal, 402, refusal);
    }
    const { retried_invoices: retried } = await setDefaultPaymentMethod(
      context,
      portal.tenant,
      portal.session.customer_id,
      outcome.saved,
    );
    if (retried.some((invoice) => invoice.status !== 'paid')) return send(res, portal, 402, portal.t.cardRetryFailed);
    backToPortal(res, portal, { notice: retried.length > 0 ? 'card_paid' : 'card_updated' });
  };

  app.post(PATH, form, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    if (!portal.features.payment_method_update.enabled) return notFoundPage(res, portal);
    const fields = (req.body ?? {}) as Record<string, unknown>;
    const outcome =
      fields.processor === 'payuni'
        ? await payWithPayuniCard(context, portal, await overdueInvoices(context, portal))
        : await typedCard(context, portal, fields);
    await answer(res, portal, outcome);
  });

  // Back from the card's bank (3-D Secure), through checkout, which read PAYUNi's signed result.
  app.get(`${PATH}/confirm`, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    if (!portal.features.payment_method_update.enabled) return notFoundPage(res, portal);
    const key = typeof req.query.key === 'string' ? req.query.key : '';
    const outcome = key ? await confirmPayuniCard(context, portal, key) : null;
    if (!outcome) return backToPortal(res, portal, {});
    await answer(res, portal, outcome);
  });
}

type CardOutcome = PayuniCardOutcome | Awaited<ReturnType<typeof typedCard>>;

/**
 * Sends the customer to the bank's page (3-D Secure) by a page that refreshes there, with a link:
 * not a redirect of the form's post, which a browser checks against the card page's form-action
 * (the bank's address is not known before).
 */
function toTheBank(res: Response, portal: OpenPortal, bankUrl: string) {
  res.status(200).set('Refresh', `0; url=${bankUrl}`).type('html').send(renderToTheBank(portal, bankUrl));
}

/** A card typed into the portal's own form, checked and saved by checkout. */
async function typedCard(context: ServiceContext, portal: OpenPortal, fields: Record<string, unknown>) {
  const { card, invalid } = cardOf(fields);
  if (!card) return { invalid };
  return saveCard(context, portal, card);
}
