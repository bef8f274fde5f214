import type { ServiceContext } from '@billing/runtime';
import { type EinvoiceField, type EinvoiceForm, einvoiceFormOf } from '@billing/service';
import { einvoiceOffer } from '../sessions/einvoice-enabled';
import type { Session } from '../sessions/session';

/** The e-invoice section of the hosted page: the choices, what is chosen, and the field refused. */
export interface EinvoiceSection {
  form: EinvoiceForm;
  donationOffered: boolean;
  invalid?: EinvoiceField | 'type';
}

/**
 * The e-invoice choices of a session's page (hosted or embedded) when the organization issues
 * e-invoices for what it sells: the form as posted, else the merchant's choice (a donation only
 * where it is offered). Undefined when there is nothing to choose.
 */
export async function einvoiceSectionFor(
  context: ServiceContext,
  session: Session,
  posted: EinvoiceForm | null,
): Promise<EinvoiceSection | undefined> {
  if (session.product.type === 'DONATION') return undefined;
  const offer = await einvoiceOffer(context, session.organization, session.environment);
  if (!offer.enabled) return undefined;
  const given = session.einvoice?.type === 'DONATION' && !offer.donationOffered ? null : session.einvoice;
  return { form: posted ?? einvoiceFormOf(given), donationOffered: offer.donationOffered };
}
