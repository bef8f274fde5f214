import {
  ApiError,
  CreatePaymentMethodBody,
  type CreatedPaymentMethod,
  type Invoice,
  detailsFromZodIssues,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { findTextProblems, formBodies } from '@billing/service';
import type { Express, Response } from 'express';
import { setDefaultPaymentMethod } from '../../engine/renewals/new-card';
import { checkoutClient } from '../../dependencies';
import { listInvoices } from '../../invoices/read-model';
import { listSubscriptions } from '../../subscriptions/queries';
import { openPortal } from './access';
import type { OpenPortal } from './open-portal';
import { renderCardForm } from './render-card';
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

/** Checkout saves the card (its processor verifies it, nothing charged); a refusal is 402 with the reason. */
async function saveCard(context: ServiceContext, portal: OpenPortal, card: CreatePaymentMethodBody) {
  const checkout = checkoutClient(context);
  if (!checkout) throw new ApiError(503, 'service_unavailable', 'checkout is not configured');
  const { status, body } = await checkout.post<CreatedPaymentMethod>('/internal/payment_methods', card, {
    ...portal.tenant,
    keyKind: 'secret',
    keyId: 'billing-portal',
  });
  if (status === 201) return { saved: body };
  if (status === 402 || status === 422) return { refused: true as const };
  throw new ApiError(503, 'service_unavailable', `checkout answered ${status} to a new card`);
}

/**
 * Update the card in the portal: the sandbox card form (as on checkout's page), saved by
 * checkout, made the customer's default by `setDefaultPaymentMethod`, which at once retries
 * the open invoice of a PAST_DUE subscription with it (the same charges and webhooks as a
 * dunning retry).
 */
export function mountPortalCardPages(app: Express, context: ServiceContext): void {
  const send = async (res: Response, portal: OpenPortal, status: number, error?: string) =>
    res
      .status(status)
      .type('html')
      .send(renderCardForm(portal, await overdueInvoices(context, portal), error));

  app.get(PATH, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    if (!portal.features.payment_method_update.enabled) return notFoundPage(res, portal);
    await send(res, portal, 200);
  });

  app.post(PATH, form, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    if (!portal.features.payment_method_update.enabled) return notFoundPage(res, portal);
    const { card, invalid } = cardOf((req.body ?? {}) as Record<string, unknown>);
    if (!card) return send(res, portal, 422, portal.t.checkFields(invalid.join(', ')));
    const outcome = await saveCard(context, portal, card);
    if (!outcome.saved) return send(res, portal, 402, portal.t.cardDeclined);
    const { retried_invoices: retried } = await setDefaultPaymentMethod(
      context,
      portal.tenant,
      portal.session.customer_id,
      outcome.saved,
    );
    if (retried.some((invoice) => invoice.status !== 'paid')) return send(res, portal, 402, portal.t.cardRetryFailed);
    backToPortal(res, portal, { notice: retried.length > 0 ? 'card_paid' : 'card_updated' });
  });
}
