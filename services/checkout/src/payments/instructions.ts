import type { PaymentInstructions } from '@billing/contracts';

/** An ATM account or a convenience-store code, as a processor's post names it. */
export type IssuedCode =
  | { kind: 'atm_issued'; amount: number; bankCode: string; account: string; expiresAt: Date }
  | { kind: 'cvs_issued'; amount: number; paymentNo: string; expiresAt: Date };

/** How to pay an issued code, as the session, the page and `checkout.async_payment_pending` show it. */
export function instructionsOf(issued: IssuedCode): PaymentInstructions {
  const common = { amount: issued.amount, expires_at: issued.expiresAt.toISOString() };
  return issued.kind === 'atm_issued'
    ? { type: 'atm', bank_code: issued.bankCode, account: issued.account, payment_code: null, ...common }
    : { type: 'cvs', bank_code: null, account: null, payment_code: issued.paymentNo, ...common };
}
