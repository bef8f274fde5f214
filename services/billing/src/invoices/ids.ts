import { createHash } from 'node:crypto';

/**
 * The renewal invoice of a subscription's period has one id, derived from the subscription and
 * the period start, so that two engines, or one after a crash, open the same invoice, never two.
 */
export function renewalInvoiceId(subscriptionId: string, periodStart: string): string {
  const digest = createHash('sha256').update(`${subscriptionId}|${periodStart}`).digest();
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let id = '';
  for (let i = 0; i < 24; i++) id += alphabet[digest[i]! % 62];
  return `in_${id}`;
}
