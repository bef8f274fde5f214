import type { KeyKind } from '@billing/contracts';

export type UpstreamName = 'catalog' | 'checkout' | 'billing' | 'promotions' | 'notifications';

/** One row of the spec's key-access table: which keys may call a route, and who serves it. */
export interface PublicRoute {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Express path under /v1, forwarded unchanged. */
  path: string;
  upstream: UpstreamName;
  keys: readonly KeyKind[];
}

const BOTH = ['secret', 'publishable'] as const;
const SECRET = ['secret'] as const;

/**
 * Every public route the gateway forwards. Products are Secret-Key reads, except that the
 * spec's machine-readable description also lists the Publishable Key for the list and the
 * by-slug read, which a storefront needs.
 */
export const PUBLIC_ROUTES: readonly PublicRoute[] = [
  { method: 'get', path: '/v1/products', upstream: 'catalog', keys: BOTH },
  { method: 'get', path: '/v1/products/by-slug/:slug', upstream: 'catalog', keys: BOTH },
  { method: 'get', path: '/v1/products/:id', upstream: 'catalog', keys: SECRET },
];
