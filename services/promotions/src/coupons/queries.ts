import { type Coupon as CouponResource, livemodeOf, unknownCursor } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { Coupon } from './coupon';
import { couponsTable } from './read-model';
import type { Tenant } from '@billing/service';

export async function findCoupon(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  id: string,
): Promise<Coupon | undefined> {
  const { rows } = await sql.query<{ document: Coupon }>(
    `SELECT document FROM ${couponsTable(schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0]?.document;
}

/** Newest first (`created_at` desc, then `id` desc), cursor-paged by the last id seen. */
export async function listCoupons(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  page: { limit: number; starting_after?: string },
): Promise<{ coupons: Coupon[]; hasMore: boolean }> {
  let cursor: { created_at: string; id: string } | null = null;
  if (page.starting_after) {
    const after = await findCoupon(sql, schema, tenant, page.starting_after);
    if (!after) throw unknownCursor(page.starting_after, 'coupon');
    cursor = { created_at: after.created_at, id: after.id };
  }
  const { rows } = await sql.query<{ document: Coupon }>(
    `SELECT document FROM ${couponsTable(schema)}
     WHERE organization = $1 AND environment = $2
       AND ($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::text))
     ORDER BY created_at DESC, id DESC LIMIT $5`,
    [tenant.organization, tenant.environment, cursor?.created_at ?? null, cursor?.id ?? null, page.limit + 1],
  );
  return { coupons: rows.slice(0, page.limit).map((r) => r.document), hasMore: rows.length > page.limit };
}

export function toCouponResource(c: Coupon): CouponResource {
  return {
    object: 'coupon',
    id: c.id,
    name: c.name,
    discount_type: c.discount_type,
    discount_amount: c.discount_amount,
    duration: c.duration,
    duration_in_months: c.duration_in_months,
    applies_to_all_products: c.applies_to_all_products,
    product_ids: c.product_ids,
    bonus_trial_days: c.bonus_trial_days,
    bonus_months: c.bonus_months,
    active: c.active,
    metadata: c.metadata,
    created_at: c.created_at,
    updated_at: c.updated_at,
    livemode: livemodeOf(c.environment),
  };
}
