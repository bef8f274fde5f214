/** A card's brand from its first digits (the BIN a processor shows), or `unknown`. */
export function cardBrandOf(firstDigits: string | null): string {
  if (!firstDigits) return 'unknown';
  if (firstDigits.startsWith('4')) return 'visa';
  if (/^5[1-5]/.test(firstDigits)) return 'mastercard';
  if (firstDigits.startsWith('35')) return 'jcb';
  if (/^3[47]/.test(firstDigits)) return 'amex';
  return 'unknown';
}
