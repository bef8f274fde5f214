import { Einvoice, einvoiceViolations } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { findTextProblems } from '@billing/service';
import { einvoiceOffer } from '../sessions/einvoice-enabled';
import type { Session } from '../sessions/session';
import type { EinvoiceField } from './messages';

/** What the buyer typed in the e-invoice section, kept field by field for the page shown again. */
export type EinvoiceForm = { type: Einvoice['type'] } & Partial<Record<EinvoiceField, string>>;

/** The e-invoice section of the hosted page: the choices, what is chosen, and the field refused. */
export interface EinvoiceSection {
  form: EinvoiceForm;
  donationOffered: boolean;
  invalid?: EinvoiceField | 'type';
}

/** The fields each choice asks for, in the order shown. */
export const FIELDS_OF: Record<Einvoice['type'], EinvoiceField[]> = {
  MEMBER: [],
  MOBILE_BARCODE: ['barcode'],
  CITIZEN_CERTIFICATE: ['certificate'],
  DONATION: ['donation_code'],
  B2B: ['tax_id', 'company_name'],
};

export const offeredChoices = (donationOffered: boolean): Einvoice['type'][] =>
  (Object.keys(FIELDS_OF) as Einvoice['type'][]).filter((type) => type !== 'DONATION' || donationOffered);

/** The form showing a choice made already (the merchant's, through the API), or the member carrier. */
export function formOf(choice: Einvoice | null | undefined): EinvoiceForm {
  switch (choice?.type) {
    case 'MOBILE_BARCODE':
      return { type: choice.type, barcode: choice.carrier };
    case 'CITIZEN_CERTIFICATE':
      return { type: choice.type, certificate: choice.carrier };
    case 'DONATION':
      return { type: choice.type, donation_code: choice.donation_code };
    case 'B2B':
      return { type: choice.type, tax_id: choice.tax_id, company_name: choice.company_name };
    default:
      return { type: 'MEMBER' };
  }
}

const TYPES = new Set<string>(Object.keys(FIELDS_OF));
// Carriers are uppercase; phones often type them in lowercase.
const UPPERCASE = new Set<EinvoiceField>(['barcode', 'certificate']);

/** The section as posted (`einvoice_type` and `einvoice_<field>`), or null when the page had none. */
export function readEinvoiceForm(posted: Record<string, unknown>): EinvoiceForm | null {
  const type = posted.einvoice_type;
  if (typeof type !== 'string') return null;
  const form: EinvoiceForm = { type: (TYPES.has(type) ? type : '') as Einvoice['type'] };
  for (const field of Object.values(FIELDS_OF).flat()) {
    const value = posted[`einvoice_${field}`];
    // Text the service kit refuses is not typed back into the page.
    if (typeof value !== 'string' || findTextProblems({ value }).length > 0) continue;
    const trimmed = value.trim().slice(0, 255);
    if (trimmed !== '') form[field] = UPPERCASE.has(field) ? trimmed.toUpperCase() : trimmed;
  }
  return form;
}

/** The choice the form makes, or the field that breaks its rule (`einvoiceViolations`, the schema's lengths). */
export function choiceOf(
  form: EinvoiceForm,
  donationOffered: boolean,
): { choice: Einvoice } | { invalid: EinvoiceField | 'type' } {
  if (!offeredChoices(donationOffered).includes(form.type)) return { invalid: 'type' };
  const parsed = Einvoice.safeParse(candidateOf(form));
  if (!parsed.success) return { invalid: fieldAt(form.type, parsed.error.issues[0]?.path[0]) };
  const [violation] = einvoiceViolations(parsed.data);
  return violation ? { invalid: fieldAt(form.type, violation.path.split('.')[1]) } : { choice: parsed.data };
}

function candidateOf(form: EinvoiceForm): Record<string, unknown> {
  switch (form.type) {
    case 'MOBILE_BARCODE':
      return { type: form.type, carrier: form.barcode ?? '' };
    case 'CITIZEN_CERTIFICATE':
      return { type: form.type, carrier: form.certificate ?? '' };
    case 'DONATION':
      return { type: form.type, donation_code: form.donation_code ?? '' };
    case 'B2B':
      return { type: form.type, tax_id: form.tax_id ?? '', company_name: form.company_name };
    default:
      return { type: form.type };
  }
}

/** The page's field of a path of the choice (`carrier` is the barcode's or the certificate's). */
function fieldAt(type: Einvoice['type'], path: PropertyKey | undefined): EinvoiceField | 'type' {
  if (path === 'carrier') return type === 'MOBILE_BARCODE' ? 'barcode' : 'certificate';
  if (path === 'tax_id' || path === 'company_name' || path === 'donation_code') return path;
  return 'type';
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
  return { form: posted ?? formOf(given), donationOffered: offer.donationOffered };
}
