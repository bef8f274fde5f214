/**
 * The e-invoice provider port: what billing asks of ECPay's e-invoice API or Amego's, and what
 * it hears back. Amounts are integer TWD. A provider's adapter maps these to its own fields and
 * never decides money: the caller passes the B2B split (`splitTax` in ../tax.ts).
 */

/** Where the invoice goes (載具, donation or a company); `member` is the provider's own member carrier. */
export type EinvoiceBuyer =
  | { kind: 'member' }
  | { kind: 'mobile_barcode'; carrier: string }
  | { kind: 'citizen_certificate'; carrier: string }
  | { kind: 'donation'; donationCode: string }
  | { kind: 'company'; taxId: string; companyName: string };

/** 課稅別: taxed at 5 %, zero-rated, exempt. */
export type EinvoiceTaxType = 'taxed' | 'zero_rated' | 'exempt';

export type EinvoiceItem = {
  description: string;
  quantity: number;
  /** Unit price, tax included. */
  unitPrice: number;
  /** quantity x unitPrice, tax included. */
  amount: number;
};

export type IssueRequest = {
  /** The provider's merchant order number (ECPay RelateNumber, Amego OrderId): the idempotency key, at most 30 of A-Za-z0-9. */
  merchantOrderNo: string;
  buyer: EinvoiceBuyer;
  /** The buyer's email (member carrier notices) and name; null when not known. */
  contact: { email: string | null; name: string | null };
  taxType: EinvoiceTaxType;
  items: EinvoiceItem[];
  /** The whole, tax included (the sum of the items). */
  total: number;
  /** For a company buyer: total = salesAmount + taxAmount. For others salesAmount = total, taxAmount = 0. */
  salesAmount: number;
  taxAmount: number;
};

/** An invoice the provider holds: its number (2 letters + 8 digits), random code (4 digits) and date. */
export type IssuedEinvoice = { invoiceNumber: string; randomCode: string; issuedAt: Date };

export type IssueOutcome =
  ({ status: 'issued' } & IssuedEinvoice) | { status: 'refused'; code: string; message: string };

export type VoidRequest = { invoiceNumber: string; issuedAt: Date; reason: string };
export type VoidOutcome = { status: 'voided' } | { status: 'refused'; code: string; message: string };

export type AllowanceRequest = {
  invoiceNumber: string;
  issuedAt: Date;
  /** The platform's key of this allowance (the refund's), at most 30 of A-Za-z0-9, for providers that take one. */
  allowanceKey: string;
  /** The allowance numbers already recorded on this invoice: a lookup without a key tells a new one from them. */
  knownAllowanceNumbers: string[];
  buyer: EinvoiceBuyer;
  contact: { email: string | null; name: string | null };
  taxType: EinvoiceTaxType;
  items: EinvoiceItem[];
  /** Tax included. */
  total: number;
  salesAmount: number;
  taxAmount: number;
};
export type AllowanceOutcome =
  { status: 'issued'; allowanceNumber: string } | { status: 'refused'; code: string; message: string };

/** What the provider knows of a merchant order number: nothing (null), or its invoice and whether it was voided. */
export type QueriedEinvoice = IssuedEinvoice & { voided: boolean };

/**
 * No answer that can be trusted (network, timeout, HTTP status, a MAC or cipher that does not
 * check): the provider may have acted. The caller asks `query` before issuing again; never
 * read as refused.
 */
export class EinvoiceUnanswered extends Error {}

export interface EinvoiceProvider {
  readonly name: 'ecpay' | 'amego';
  issue(request: IssueRequest, now: Date): Promise<IssueOutcome>;
  query(merchantOrderNo: string, now: Date): Promise<QueriedEinvoice | null>;
  void(request: VoidRequest, now: Date): Promise<VoidOutcome>;
  allowance(request: AllowanceRequest, now: Date): Promise<AllowanceOutcome>;
  /**
   * The allowance the provider already holds for `request` (its `allowanceKey`), for a caller
   * whose `allowance` went unanswered, before it asks again; absent where the provider offers no
   * such lookup.
   */
  findAllowance?(request: AllowanceRequest, now: Date): Promise<{ allowanceNumber: string } | null>;
}
