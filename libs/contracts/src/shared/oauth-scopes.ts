/** The spec's OAuth 2.0 scopes, exactly: what an app may ask of an organization (docs/oauth.md). */
export const OAUTH_SCOPES = [
  'openid',
  'products:read',
  'orders:read',
  'subscriptions:read',
  'customers:read',
  'analytics:read',
] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

export const isOAuthScope = (value: string): value is OAuthScope => (OAUTH_SCOPES as readonly string[]).includes(value);

/** What each scope lets an app do, as the API reference says it. */
export const OAUTH_SCOPE_DESCRIPTIONS: Record<OAuthScope, string> = {
  openid: 'An ID token naming the dashboard user who connected the app',
  'products:read': 'Read products: GET /products, /products/{id}, /products/by-slug/{slug}',
  'orders:read': 'Read orders: GET /orders, /orders/{id}',
  'subscriptions:read': 'Read subscriptions: GET /subscriptions, /subscriptions/{id}',
  'customers:read':
    'Read customers: GET /customers, /customers/{id}, /customers/external/{external_id}, /customers/entitlements',
  'analytics:read': 'Read metrics: GET /analytics/metrics',
};
