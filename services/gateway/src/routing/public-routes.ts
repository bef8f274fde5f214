import type { KeyKind } from '@billing/contracts';

export type UpstreamName = 'catalog' | 'checkout' | 'billing' | 'promotions' | 'notifications';

/** One row of the spec's key-access table: which keys may call a route, and who serves it. */
export interface PublicRoute {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Express path under /v1, forwarded unchanged. */
  path: string;
  upstream: UpstreamName;
  keys: readonly KeyKind[];
  /**
   * The body names its own idempotency key, which makes the request apply once per key for
   * ever: the gateway keeps an `Idempotency-Key` answer only when the caller sends the header
   * (docs/decisions/0031-body-keyed-posts-keep-given-idempotency-keys.md).
   */
  bodyKeyed?: true;
}

const BOTH = ['secret', 'publishable'] as const;
const SECRET = ['secret'] as const;

/**
 * Hosted pages, for buyers' browsers: no API key. The unguessable session id is the capability
 * of a checkout page; a payment link (`/pay/<url_id>`) is public by design.
 */
export const HOSTED_PAGE_PATHS = [
  '/checkout/:session_id',
  '/checkout/:session_id/pay',
  // The promotion code form of a session that allows one: limited per address as a payment is.
  '/checkout/:session_id/promotion-code',
  // The processor's server-to-server posts about the session's trade (ECPay's PaymentInfoURL and
  // ReturnURL): each is checked by the processor's MAC with the organization's keys.
  '/checkout/:session_id/ecpay/:notification',
  // PAYUNi's card result after 3-D Secure, to NotifyURL (server to server) and to ReturnURL
  // (through the buyer's browser): each checked by its HashInfo and GCM tag with the organization's keys.
  '/checkout/:session_id/payuni/:notification',
  // The page of a renewal invoice paid by transfer through ECPay (its unguessable token is the
  // capability), and ECPay's posts about its trade, checked by CheckMacValue as above.
  '/checkout/invoice-payments/:page_token',
  '/checkout/invoice-payments/:page_token/ecpay/:notification',
  '/pay/:url_id',
  '/pay/:url_id/thanks',
  '/pay/:url_id/canceled',
  // The sandbox payment provider's card form for embedded checkouts: its script, and the card it
  // collects for a card-form token (the token, given only to the checkout's creator, is the capability).
  '/sandbox/card-form.js',
  '/sandbox/card-form/:sdk_token',
  // The embedded checkout's page that the SDK's checkout.js and widget.js open in an iframe.
  '/embed/checkout',
] as const;

/** The embedded checkout's coupon calls, which the recur-tw SDK's coupon box makes without a key. */
export const KEYLESS_COUPON_PATH = '/v1/checkouts/:id/coupon';

/** Publishable-Key entitlement checks are limited per client IP on top of the per-key limit. */
export const ENTITLEMENTS_PATH = '/v1/customers/entitlements';

/**
 * The customer portal's pages, served by billing: `/portal/<session id>/<access token>` and
 * the pages and form posts under it. The token in the URL is the capability (docs/customer-portal.md).
 */
export const PORTAL_PAGE_PATHS = ['/portal/:session_id/:token', '/portal/:session_id/:token/*rest'] as const;

/** Routes under it answer in the portal sessions' codes, with `error.type` (spec: Errors). */
export const PORTAL_API_PATH = '/v1/portal';

/** Validation has limits of its own on top of the general per-key one. */
export const VALIDATE_PROMOTION_CODE_PATH = '/v1/promotion-codes/validate';

/**
 * Every public route the gateway forwards. Products are Secret-Key reads, except that the
 * spec's machine-readable description also lists the Publishable Key for the list and the
 * by-slug read, which a storefront needs.
 */
export const PUBLIC_ROUTES: readonly PublicRoute[] = [
  { method: 'get', path: '/v1/products', upstream: 'catalog', keys: BOTH },
  { method: 'get', path: '/v1/products/by-slug/:slug', upstream: 'catalog', keys: BOTH },
  { method: 'get', path: '/v1/products/:id', upstream: 'catalog', keys: SECRET },

  // The spec lists the Secret Key for reading a session, and one reference also the Publishable one.
  { method: 'post', path: '/v1/checkout/sessions', upstream: 'checkout', keys: BOTH },
  { method: 'get', path: '/v1/checkout/sessions/:id', upstream: 'checkout', keys: BOTH },

  // Embedded checkouts (docs/embedded-checkout.md): a Publishable Key reads and pays with the client_secret.
  { method: 'post', path: '/v1/checkouts', upstream: 'checkout', keys: BOTH },
  { method: 'get', path: '/v1/checkouts/:id', upstream: 'checkout', keys: BOTH },
  { method: 'get', path: '/v1/checkouts/:id/status', upstream: 'checkout', keys: BOTH },
  { method: 'post', path: '/v1/checkouts/:id/pay', upstream: 'checkout', keys: BOTH },
  { method: 'post', path: '/v1/checkouts/:id/coupon', upstream: 'checkout', keys: BOTH },
  { method: 'delete', path: '/v1/checkouts/:id/coupon', upstream: 'checkout', keys: BOTH },

  { method: 'post', path: '/v1/payment-links', upstream: 'checkout', keys: SECRET },
  { method: 'get', path: '/v1/payment-links', upstream: 'checkout', keys: SECRET },
  { method: 'get', path: '/v1/payment-links/:id', upstream: 'checkout', keys: SECRET },
  { method: 'patch', path: '/v1/payment-links/:id', upstream: 'checkout', keys: SECRET },
  { method: 'delete', path: '/v1/payment-links/:id', upstream: 'checkout', keys: SECRET },

  // Refunds live with the processor and the charges (docs/decisions/0009-refunds.md).
  { method: 'post', path: '/v1/refunds', upstream: 'checkout', keys: SECRET },
  { method: 'get', path: '/v1/refunds', upstream: 'checkout', keys: SECRET },
  { method: 'get', path: '/v1/refunds/:id', upstream: 'checkout', keys: SECRET },
  // Paid checkouts' orders, with their refunds (docs/orders.md).
  { method: 'get', path: '/v1/orders', upstream: 'checkout', keys: SECRET },
  { method: 'get', path: '/v1/orders/:id', upstream: 'checkout', keys: SECRET },

  // Entitlements and the external-id forms before `/v1/customers/:id`, which would take them for ids.
  { method: 'get', path: '/v1/customers', upstream: 'billing', keys: SECRET },
  // A front end's paywall check: Publishable Keys by customer_id or external_id only (billing refuses email).
  { method: 'get', path: '/v1/customers/entitlements', upstream: 'billing', keys: BOTH },
  { method: 'get', path: '/v1/customers/external/:external_id', upstream: 'billing', keys: SECRET },
  { method: 'patch', path: '/v1/customers/external/:external_id', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/customers/:id', upstream: 'billing', keys: SECRET },
  { method: 'patch', path: '/v1/customers/:id', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/subscriptions', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/subscriptions/:id', upstream: 'billing', keys: SECRET },
  // Created without a hosted page (docs/plan-switching.md); Idempotency-Key as every POST.
  { method: 'post', path: '/v1/subscriptions', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/subscriptions/:id/complete', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/subscriptions/:id/cancel', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/subscriptions/:id/resume', upstream: 'billing', keys: SECRET },
  // Plan switching (docs/plan-switching.md).
  { method: 'get', path: '/v1/subscriptions/:id/switch-preview', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/subscriptions/:id/switch', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/subscriptions/:id/schedule', upstream: 'billing', keys: SECRET },
  { method: 'delete', path: '/v1/subscriptions/:id/schedule', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/customers/:id/balance', upstream: 'billing', keys: SECRET },
  // A customer's credits (docs/credits.md).
  { method: 'get', path: '/v1/customers/:id/credits', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/customers/:id/credits/ledger', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/customers/:id/credits/grants', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/customers/:id/credits/spend', upstream: 'billing', keys: SECRET, bodyKeyed: true },
  { method: 'post', path: '/v1/customers/:id/credits/adjustments', upstream: 'billing', keys: SECRET },
  // Meters and usage (docs/usage.md).
  { method: 'post', path: '/v1/meters', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/meters', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/meters/:id', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/meters/:id', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/meters/:id/deactivate', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/meters/:id/reactivate', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/usage_events', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/customers/:id/usage', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/invoices', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/invoices/:id', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/einvoices', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/einvoices/:id', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/test_clocks', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/test_clocks', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/test_clocks/:id', upstream: 'billing', keys: SECRET },
  { method: 'delete', path: '/v1/test_clocks/:id', upstream: 'billing', keys: SECRET },
  { method: 'post', path: '/v1/test_clocks/:id/advance', upstream: 'billing', keys: SECRET },

  { method: 'post', path: '/v1/coupons', upstream: 'promotions', keys: SECRET },
  { method: 'get', path: '/v1/coupons', upstream: 'promotions', keys: SECRET },
  { method: 'get', path: '/v1/coupons/:id', upstream: 'promotions', keys: SECRET },
  { method: 'patch', path: '/v1/coupons/:id', upstream: 'promotions', keys: SECRET },

  { method: 'post', path: '/v1/promotion-codes/validate', upstream: 'promotions', keys: BOTH },
  { method: 'post', path: '/v1/promotion-codes', upstream: 'promotions', keys: SECRET },
  { method: 'get', path: '/v1/promotion-codes', upstream: 'promotions', keys: SECRET },
  { method: 'get', path: '/v1/promotion-codes/:id', upstream: 'promotions', keys: SECRET },
  { method: 'patch', path: '/v1/promotion-codes/:id', upstream: 'promotions', keys: SECRET },
  { method: 'delete', path: '/v1/promotion-codes/:id', upstream: 'promotions', keys: SECRET },
  { method: 'get', path: '/v1/promotion-codes/:id/redemptions', upstream: 'promotions', keys: SECRET },

  // Portal sessions answer in their own codes with error.type (spec; docs/customer-portal.md).
  { method: 'post', path: '/v1/portal/sessions', upstream: 'billing', keys: SECRET },
  { method: 'get', path: '/v1/portal/sessions/:id', upstream: 'billing', keys: SECRET },

  // Read-only: endpoints are managed through the admin API (the merchant dashboard).
  { method: 'get', path: '/v1/webhooks', upstream: 'notifications', keys: SECRET },
  { method: 'get', path: '/v1/webhooks/:id', upstream: 'notifications', keys: SECRET },
];
