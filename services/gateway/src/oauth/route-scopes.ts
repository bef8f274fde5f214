import type { OAuthScope } from '@billing/contracts';

/** The reads an app's token may make, each with the scope it needs (docs/oauth.md). */
export const SCOPED_READS: ReadonlyArray<{ path: string; scope: OAuthScope }> = [
  { path: '/v1/products', scope: 'products:read' },
  { path: '/v1/products/by-slug/:slug', scope: 'products:read' },
  { path: '/v1/products/:id', scope: 'products:read' },
  { path: '/v1/subscriptions', scope: 'subscriptions:read' },
  { path: '/v1/subscriptions/:id', scope: 'subscriptions:read' },
  { path: '/v1/customers', scope: 'customers:read' },
  { path: '/v1/customers/external/:external_id', scope: 'customers:read' },
  { path: '/v1/customers/entitlements', scope: 'customers:read' },
  { path: '/v1/customers/:id', scope: 'customers:read' },
  { path: '/v1/orders', scope: 'orders:read' },
  { path: '/v1/orders/:id', scope: 'orders:read' },
  { path: '/v1/analytics/metrics', scope: 'analytics:read' },
];

/** A route pattern as a regular expression: each `:name` one path segment. */
const patternOf = (path: string) => new RegExp(`^${path.replace(/:\w+/g, '[^/]+')}/?$`);

const MATCHERS = SCOPED_READS.map(({ path, scope }) => ({ pattern: patternOf(path), scope }));

/**
 * The scope a token needs for this request, or undefined when no token may make it (every write,
 * every other read). A literal path (by-slug, external) is tried before the `:id` that would
 * also match it, as the route table does.
 */
export function scopeRequiredFor(method: string, path: string): OAuthScope | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  return MATCHERS.find(({ pattern }) => pattern.test(path))?.scope;
}
