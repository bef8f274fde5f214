import type { Einvoice } from '../checkout/sessions';
import type { ErrorDetail } from './errors';

const TAX_ID_WEIGHTS = [1, 2, 1, 2, 1, 2, 4, 1];

/**
 * Taiwan business tax id (統一編號): 8 digits; each digit times its weight, the digits of
 * each product summed; valid when the total is divisible by 5 (the MOF rule since 2023, which
 * accepts every number the old divisor 10 did). When the 7th digit is 7 its product 28 counts
 * as 10 or as 1, so the total plus 1 divisible by 5 is also valid.
 */
export function isValidTaxId(taxId: string): boolean {
  if (!/^[0-9]{8}$/.test(taxId)) return false;
  const digits = [...taxId].map(Number);
  const sum = digits.reduce((total, digit, i) => {
    const product = digit * TAX_ID_WEIGHTS[i]!;
    return total + Math.floor(product / 10) + (product % 10);
  }, 0);
  return sum % 5 === 0 || (digits[6] === 7 && (sum + 1) % 5 === 0);
}

/** Mobile barcode carrier (手機條碼): "/" and 7 of 0-9, A-Z, ".", "+", "-". */
export const MOBILE_BARCODE = /^\/[0-9A-Z.+-]{7}$/;
/** Citizen digital certificate carrier (自然人憑證): 2 uppercase letters and 14 digits. */
export const CITIZEN_CERTIFICATE = /^[A-Z]{2}[0-9]{14}$/;
/** Donation code (愛心碼): 3-7 digits. */
export const DONATION_CODE = /^[0-9]{3,7}$/;

/** The format rules of an e-invoice choice; each failure is a 422 detail at its field. */
export function einvoiceViolations(einvoice: Einvoice | undefined): ErrorDetail[] {
  if (!einvoice) return [];
  const bad = (field: string, code: string, message: string): ErrorDetail[] => [
    { path: `einvoice.${field}`, code, message },
  ];
  switch (einvoice.type) {
    case 'B2B':
      return isValidTaxId(einvoice.tax_id)
        ? []
        : bad('tax_id', 'invalid_tax_id', 'tax_id must be 8 digits with a valid check digit');
    case 'MOBILE_BARCODE':
      return MOBILE_BARCODE.test(einvoice.carrier)
        ? []
        : bad('carrier', 'invalid_mobile_barcode', 'a mobile barcode is "/" followed by 7 of 0-9 A-Z . + -');
    case 'CITIZEN_CERTIFICATE':
      return CITIZEN_CERTIFICATE.test(einvoice.carrier)
        ? []
        : bad('carrier', 'invalid_citizen_certificate', 'a citizen certificate is 2 uppercase letters and 14 digits');
    case 'MEMBER':
      return [];
    case 'DONATION':
      return DONATION_CODE.test(einvoice.donation_code)
        ? []
        : bad('donation_code', 'invalid_donation_code', 'a donation code is 3-7 digits');
    default: {
      const _exhaustive: never = einvoice;
      return [];
    }
  }
}
