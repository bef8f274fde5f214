import type { Einvoice as EinvoiceChoice, EinvoiceTaxType } from '@billing/contracts';

/**
 * The money and time rules of e-invoices, each written once.
 *
 * Tax split of a company (B2B) invoice taxed at 5 %: the total is tax included; the untaxed
 * amount is total / 1.05 rounded half up to a whole TWD, and the tax is what is left
 * (total - untaxed), so that the two always add up to what was paid. Zero-rated and exempt
 * sales carry no tax. Consumer (B2C) invoices state the total tax included: sales = total, tax 0.
 * Allowances split the same way for every buyer (`splitAllowance`).
 */
export function splitTax(
  total: number,
  buyer: EinvoiceChoice,
  taxType: EinvoiceTaxType,
): { salesAmount: number; taxAmount: number } {
  return buyer.type === 'B2B' ? splitTaxed(total, taxType) : splitTaxed(total, 'EXEMPT');
}

/**
 * An allowance (折讓) states its untaxed amount and tax for every buyer, consumers included
 * (the MOF's allowance form; Amego's g0401 lines carry their tax): the same rule as a B2B invoice.
 */
export function splitAllowance(total: number, taxType: EinvoiceTaxType) {
  return splitTaxed(total, taxType);
}

function splitTaxed(total: number, taxType: EinvoiceTaxType): { salesAmount: number; taxAmount: number } {
  if (!Number.isSafeInteger(total) || total < 0) throw new Error(`total must be whole TWD, got ${total}`);
  if (taxType !== 'TAXED') return { salesAmount: total, taxAmount: 0 };
  // round_half_up(total * 100 / 105) in integers: floor((2 * total * 100 + 105) / 210).
  const salesAmount = Math.floor((total * 200 + 105) / 210);
  return { salesAmount, taxAmount: total - salesAmount };
}

const HOUR_MS = 3_600_000;

/** B2C data must reach the MOF platform within 48 hours of the sale, B2B within 7 days. */
export function deadlineOf(paidAt: Date, buyer: EinvoiceChoice): Date {
  return new Date(paidAt.getTime() + (buyer.type === 'B2B' ? 7 * 24 : 48) * HOUR_MS);
}

/** The monitor warns once an unissued e-invoice is this close to its deadline: a quarter of the time allowed. */
export function warnAtOf(paidAt: Date, deadline: Date): Date {
  return new Date(deadline.getTime() - (deadline.getTime() - paidAt.getTime()) / 4);
}

/** Retries after a failed attempt: 1 minute, doubled each time, at most an hour apart. */
export function retryDelayMs(attempt: number): number {
  return Math.min(60_000 * 2 ** Math.max(0, attempt - 1), HOUR_MS);
}

/** A claimed attempt whose process died is tried again after this long (longer than a provider's timeout). */
export const ATTEMPT_LEASE_MS = 2 * 60_000;

/**
 * Taiwan files uniform invoices by two-month periods (Jan-Feb, Mar-Apr, ...). An issued invoice
 * is voided (作廢) only within the period it was issued in, by Taipei's calendar; after that a
 * refund is an allowance (折讓). The providers allow voiding a little longer; this keeps to the
 * stricter rule.
 */
export function voidableAt(issuedAt: Date | null, now: Date): boolean {
  if (!issuedAt) return true;
  return filingPeriod(issuedAt) === filingPeriod(now);
}

function filingPeriod(at: Date): string {
  const taipei = new Date(at.getTime() + 8 * HOUR_MS);
  return `${taipei.getUTCFullYear()}-${Math.floor(taipei.getUTCMonth() / 2)}`;
}
