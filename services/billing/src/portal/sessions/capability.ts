import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The portal page's URL is `{PORTAL_URL}/<session id>/<access token>` and each of its forms
 * carries a CSRF token. Both are HMAC-SHA256 of the session id under the internal secret, with
 * a purpose label each, so nothing secret is stored in events or read models (billing's events
 * travel on Kafka), the URL can be given again by `GET /v1/portal/sessions/{id}`, and the session
 * id alone (in logs, lists or webhooks) opens nothing. Rotating INTERNAL_SECRET ends every open
 * portal page, which lives an hour at most.
 */
function tokenOf(secret: string, purpose: 'portal-access' | 'portal-csrf', sessionId: string): string {
  return createHmac('sha256', secret).update(`${purpose}:${sessionId}`).digest('base64url');
}

export const accessTokenOf = (secret: string, sessionId: string) => tokenOf(secret, 'portal-access', sessionId);
export const csrfTokenOf = (secret: string, sessionId: string) => tokenOf(secret, 'portal-csrf', sessionId);

/** Constant-time comparison of a token the browser sent with the one expected. */
export function sameToken(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Where billing's portal pages are, as the customer's browser reaches them (through the gateway). */
export const DEFAULT_PORTAL_URL = 'http://127.0.0.1:8080/portal';

export function portalPageUrl(portalUrl: string, secret: string, sessionId: string): string {
  return `${portalUrl.replace(/\/+$/, '')}/${sessionId}/${accessTokenOf(secret, sessionId)}`;
}
