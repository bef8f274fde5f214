import { type Coupon as CouponResource, livemodeOf, unknownCursor } from '@billing/contracts';
import { type SqlExecutor, cursorAfter, cursorPage } from '@billing/eventstore';
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
  const after = await cursorAfter(
    page.starting_after,
    (id) => findCoupon(sql, schema, tenant, id),
    (id) => unknownCursor(id, 'coupon'),
  );
  const { documents, hasMore } = await cursorPage<Coupon>(sql, couponsTable(schema), {
    where: { organization: tenant.organization, environment: tenant.environment },
    after,
    limit: page.limit,
  });
  return { coupons: documents, hasMore };
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
