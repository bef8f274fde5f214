import { createHash } from 'node:crypto';

/**
 * The renewal invoice of a subscription's period has one id, derived from the subscription and
 * the period start, so that two engines, or one after a crash, open the same invoice, never two.
 */
export function renewalInvoiceId(subscriptionId: string, periodStart: string): string {
  return derivedInvoiceId(`${subscriptionId}|${periodStart}`);
}

/**
 * The final invoice of a subscription that ended at its period's end (the usage of its last
 * period, in arrears): one per subscription, as a subscription ends once.
 */
export function finalInvoiceId(subscriptionId: string): string {
  return derivedInvoiceId(`${subscriptionId}|final`);
}

function derivedInvoiceId(seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let id = '';
  for (let i = 0; i < 24; i++) id += alphabet[digest[i]! % 62];
  return `in_${id}`;
}
