import type { ServiceContext } from '@billing/runtime';
import { einvoiceOffer } from '../sessions/einvoice-enabled';
import { findOrderEinvoice } from '../sessions/order-einvoices';
import type { Session } from '../sessions/session';
import type { ReceiptEinvoice } from './einvoice-section';
import type { Receipt } from './render';

/** What was bought, for how much, when, and its e-invoice: on the thank-you and already-paid pages. */
export async function receiptOf(context: ServiceContext, session: Session): Promise<Receipt | undefined> {
  if (!session.completed_at) return undefined;
  const einvoice = await receiptEinvoiceOf(context, session);
  return {
    product: session.product.name,
    amount: session.order.amount_total,
    date: session.completed_at,
    ...(einvoice ? { einvoice } : {}),
  };
}

/** Billing issues an e-invoice for a payment today (a trial's or a card saved for later is none), never for a donation. */
const einvoiceExpected = (session: Session) =>
  session.order.amount_total > 0 && session.mode !== 'SETUP' && session.product.type !== 'DONATION';

/** The issued e-invoice's number, else where billing will issue it when the organization issues e-invoices. */
async function receiptEinvoiceOf(context: ServiceContext, session: Session): Promise<ReceiptEinvoice | undefined> {
  const { store } = context;
  const issued = await findOrderEinvoice(store.database, store.tables.schema, session);
  if (issued?.number) {
    return { number: issued.number, randomCode: issued.random_code, voided: issued.status === 'voided' };
  }
  if (!einvoiceExpected(session)) return undefined;
  const offer = await einvoiceOffer(context, session.organization, session.environment);
  if (!offer.enabled) return undefined;
  const chosen = issued?.buyer ?? session.einvoice ?? { type: 'MEMBER' };
  // Billing issues a donation the organization does not offer to the member carrier.
  return { issuedTo: chosen.type === 'DONATION' && !offer.donationOffered ? { type: 'MEMBER' } : chosen };
}
