import {
  type Environment,
  type Product as ProductResource,
  type ProductListItem,
  type ProductType,
  livemodeOf,
  type Tenant,
} from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import { type ProductView, productsTable } from './read-model';

export async function findProductById(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  id: string,
): Promise<ProductView | undefined> {
  const { rows } = await sql.query<{ document: ProductView }>(
    `SELECT document FROM ${productsTable(schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0]?.document;
}

export async function findProductBySlug(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  slug: string,
): Promise<ProductView | undefined> {
  const { rows } = await sql.query<{ document: ProductView }>(
    `SELECT document FROM ${productsTable(schema)} WHERE slug = $1 AND organization = $2 AND environment = $3`,
    [slug, tenant.organization, tenant.environment],
  );
  return rows[0]?.document;
}

/** Admin writes name the organization but not the environment, which the product itself fixes. */
export async function findOrganizationProduct(
  sql: SqlExecutor,
  schema: string,
  organization: string,
  id: string,
): Promise<ProductView | undefined> {
  const { rows } = await sql.query<{ document: ProductView }>(
    `SELECT document FROM ${productsTable(schema)} WHERE id = $1 AND organization = $2`,
    [id, organization],
  );
  return rows[0]?.document;
}

export interface ProductFilter {
  type?: ProductType;
  active: boolean;
}

/** Newest first; products created in the same instant come in descending id order. */
export async function listProducts(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  filter: ProductFilter,
): Promise<ProductView[]> {
  const { rows } = await sql.query<{ document: ProductView }>(
    `SELECT document FROM ${productsTable(schema)}
     WHERE organization = $1 AND environment = $2 AND active = $3 AND ($4::text IS NULL OR type = $4::text)
     ORDER BY created_at DESC, id DESC`,
    [tenant.organization, tenant.environment, filter.active, filter.type ?? null],
  );
  return rows.map((row) => row.document);
}

/** The spec's product, as single-product reads and admin writes return it. */
export function toProductResource(view: ProductView): ProductResource {
  const { livemode, ...item } = toProductListItem(view);
  return { ...item, updated_at: view.updated_at, livemode };
}

/** The spec's list item: every field but `updated_at`. */
export function toProductListItem(view: ProductView): ProductListItem {
  return {
    object: 'product',
    id: view.id,
    name: view.name,
    slug: view.slug,
    description: view.description,
    type: view.type,
    interval: view.interval,
    interval_count: view.interval_count,
    price: view.price,
    currency: view.currency,
    trial_days: view.trial_days,
    display_order: view.display_order,
    metadata: view.metadata,
    credits: creditsOf(view),
    metered_prices: view.metered_prices ?? null,
    active: view.active,
    created_at: view.created_at,
    livemode: livemodeOf(view.environment),
  };
}

/** A plan's allowance always says whether it rolls over (stored without it: false). */
function creditsOf(view: ProductView): ProductListItem['credits'] {
  if (!view.credits) return null;
  return view.type === 'SUBSCRIPTION' ? { ...view.credits, rollover: view.credits.rollover ?? false } : view.credits;
}
