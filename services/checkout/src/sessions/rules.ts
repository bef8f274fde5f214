import type { CheckoutMode, Environment, ErrorDetail, ProductType } from '@billing/contracts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * success_url and cancel_url are HTTPS. Sandbox also takes http://localhost and
 * http://127.0.0.1 on any port, for local development. `{CHECKOUT_SESSION_ID}` may appear
 * anywhere; it is replaced when the buyer is sent back.
 */
export function redirectUrlViolation(
  path: string,
  value: string | undefined,
  environment: Environment,
): ErrorDetail | null {
  if (value === undefined) return null;
  let url: URL;
  try {
    url = new URL(value.replaceAll('{CHECKOUT_SESSION_ID}', 'cs_placeholder'));
  } catch {
    return { path, code: 'invalid_url', message: `${path} must be an absolute URL` };
  }
  if (url.protocol === 'https:' && url.hostname !== '') return null;
  if (environment === 'SANDBOX' && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  const allowed = environment === 'SANDBOX' ? 'HTTPS (or http://localhost, http://127.0.0.1 in Sandbox)' : 'HTTPS';
  return { path, code: 'invalid_url', message: `${path} must be ${allowed}` };
}

/**
 * The mode a product may be sold in. Subscriptions: SUBSCRIPTION (default) or SETUP (save a
 * card now, billing charges later). Every other type: PAYMENT only.
 */
export function allowedModes(type: ProductType): CheckoutMode[] {
  return type === 'SUBSCRIPTION' ? ['SUBSCRIPTION', 'SETUP'] : ['PAYMENT'];
}

export function modeFor(type: ProductType, requested: CheckoutMode | undefined): CheckoutMode | ErrorDetail {
  const allowed = allowedModes(type);
  if (requested === undefined) return allowed[0]!;
  if (allowed.includes(requested)) return requested;
  return {
    path: 'mode',
    code: 'mode_mismatch',
    message: `a ${type} product is sold in mode ${allowed.join(' or ')}, not ${requested}`,
  };
}

/** The buyer goes back to success_url with the placeholder filled. */
export const successRedirect = (successUrl: string, sessionId: string) =>
  successUrl.replaceAll('{CHECKOUT_SESSION_ID}', sessionId);
