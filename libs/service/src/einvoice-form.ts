import { Einvoice, einvoiceViolations } from '@billing/contracts';
import { findTextProblems } from './text-guard';

/**
 * The e-invoice choice as buyers' pages post it (the hosted and embedded checkout, the customer
 * portal): `einvoice_type` and an `einvoice_<field>` per field, read and checked the same way
 * everywhere.
 */
export type EinvoiceField = 'barcode' | 'certificate' | 'donation_code' | 'tax_id' | 'company_name';

/** What the buyer typed in the e-invoice section, kept field by field for the page shown again. */
export type EinvoiceForm = { type: Einvoice['type'] } & Partial<Record<EinvoiceField, string>>;

/** The fields each choice asks for, in the order shown. */
export const EINVOICE_FORM_FIELDS: Record<Einvoice['type'], EinvoiceField[]> = {
  MEMBER: [],
  MOBILE_BARCODE: ['barcode'],
  CITIZEN_CERTIFICATE: ['certificate'],
  DONATION: ['donation_code'],
  B2B: ['tax_id', 'company_name'],
};

export const offeredEinvoiceChoices = (donationOffered: boolean): Einvoice['type'][] =>
  (Object.keys(EINVOICE_FORM_FIELDS) as Einvoice['type'][]).filter((type) => type !== 'DONATION' || donationOffered);

/** The form showing a choice made already (the merchant's, through the API), or the member carrier. */
export function einvoiceFormOf(choice: Einvoice | null | undefined): EinvoiceForm {
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

const TYPES = new Set<string>(Object.keys(EINVOICE_FORM_FIELDS));
// Carriers are uppercase; phones often type them in lowercase.
const UPPERCASE = new Set<EinvoiceField>(['barcode', 'certificate']);

/** The section as posted (`einvoice_type` and `einvoice_<field>`), or null when the page had none. */
export function readEinvoiceForm(posted: Record<string, unknown>): EinvoiceForm | null {
  const type = posted.einvoice_type;
  if (typeof type !== 'string') return null;
  const form: EinvoiceForm = { type: (TYPES.has(type) ? type : '') as Einvoice['type'] };
  for (const field of Object.values(EINVOICE_FORM_FIELDS).flat()) {
    const value = posted[`einvoice_${field}`];
    // Text the service kit refuses is not typed back into the page.
    if (typeof value !== 'string' || findTextProblems({ value }).length > 0) continue;
    const trimmed = value.trim().slice(0, 255);
    if (trimmed !== '') form[field] = UPPERCASE.has(field) ? trimmed.toUpperCase() : trimmed;
  }
  return form;
}

/** The choice the form makes, or the field that breaks its rule (`einvoiceViolations`, the schema's lengths). */
export function einvoiceFormChoice(
  form: EinvoiceForm,
  donationOffered: boolean,
): { choice: Einvoice } | { invalid: EinvoiceField | 'type' } {
  if (!offeredEinvoiceChoices(donationOffered).includes(form.type)) return { invalid: 'type' };
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
