import { randomUUID } from 'node:crypto';
import type { CallerIdentity, Product } from '@billing/contracts';
import { type ServiceContext, topicOf } from '@billing/runtime';

/** A reference to a product as a request gives it. */
export type ProductRef = { product_id?: string; product_slug?: string };

/** The catalog's answer to a product lookup: status and body, as `InternalClient.get` gives them. */
export type CatalogAnswer = { status: number; body: Product };

/**
 * Longest time a product read from the catalog is served from memory when no change of it
 * arrives (the consumer is stalled, or Kafka is down): docs/decisions/0015-checkout-catalog-reads.md.
 */
export const DEFAULT_PRODUCT_CACHE_TTL_MS = 10_000;

const productIdOfStream = (stream: string) => (stream.startsWith('product-') ? stream.slice('product-'.length) : null);

/**
 * Active products as the catalog last answered, per tenant and reference, dropped as soon as
 * the catalog's log (`catalog.events`) shows any change of them, and after `ttlMs` in any case.
 * Only active products are kept: a 404, or an archived product, is asked again every time, so a
 * product created or restored is sold at once.
 */
export class ProductCache {
  private readonly entries = new Map<string, { product: Product; until: number }>();
  /** Cache keys per product id, to drop a product under its id and its slugs at once. */
  private readonly keysOfProduct = new Map<string, Set<string>>();
  /** Bumped on every change seen: an answer asked for before a change is not kept. */
  private changes = 0;
  /**
   * Lookups on their way to the catalog, per key: concurrent misses of one product (a cold start
   * under load) share one call. Cleared by any change, so a lookup that starts after a change
   * never gets an answer asked for before it.
   */
  private readonly asking = new Map<string, Promise<CatalogAnswer>>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async lookUp(caller: CallerIdentity, ref: ProductRef, ask: () => Promise<CatalogAnswer>): Promise<CatalogAnswer> {
    const key = cacheKey(caller, ref);
    const cached = this.entries.get(key);
    if (cached && cached.until > this.now()) return { status: 200, body: cached.product };
    if (cached) this.drop(key, cached.product.id);
    const pending = this.asking.get(key);
    if (pending) return pending;
    const asked = this.ask(key, ask);
    this.asking.set(key, asked);
    try {
      return await asked;
    } finally {
      if (this.asking.get(key) === asked) this.asking.delete(key);
    }
  }

  /** Any event of a product's stream: its next lookup asks the catalog. */
  forget(productId: string): void {
    this.changes++;
    this.asking.clear();
    for (const key of this.keysOfProduct.get(productId) ?? []) this.entries.delete(key);
    this.keysOfProduct.delete(productId);
  }

  private async ask(key: string, ask: () => Promise<CatalogAnswer>): Promise<CatalogAnswer> {
    const changesBefore = this.changes;
    const answer = await ask();
    if (answer.status === 200 && answer.body.active && this.changes === changesBefore) this.keep(key, answer.body);
    return answer;
  }

  /** An expired entry, so that products no longer asked for do not stay in memory. */
  private drop(key: string, productId: string): void {
    this.entries.delete(key);
    const keys = this.keysOfProduct.get(productId);
    keys?.delete(key);
    if (keys?.size === 0) this.keysOfProduct.delete(productId);
  }

  private keep(key: string, product: Product): void {
    this.entries.set(key, { product, until: this.now() + this.ttlMs });
    const keys = this.keysOfProduct.get(product.id) ?? new Set<string>();
    keys.add(key);
    this.keysOfProduct.set(product.id, keys);
  }
}

const cacheKey = (caller: CallerIdentity, ref: ProductRef) =>
  `${caller.organization}:${caller.environment}:${ref.product_id ? `id:${ref.product_id}` : `slug:${ref.product_slug}`}`;

/**
 * Drops changed products from the cache as the catalog's events arrive. Every checkout process
 * needs every change, so each has a consumer group of its own (Kafka forgets an empty group's
 * offsets after its retention).
 */
export async function startProductCacheInvalidation(
  context: ServiceContext,
  cache: ProductCache,
): Promise<() => Promise<void>> {
  const groupId = `${context.store.tables.schema.replaceAll('"', '')}-product-cache-${randomUUID()}`;
  const subscription = await context.infrastructure.bus.subscribe({
    groupId,
    topics: [topicOf('catalog')],
    handler: async (message) => {
      const productId = productIdOfStream(message.value.stream);
      if (productId) cache.forget(productId);
    },
  });
  return () => subscription.stop();
}
