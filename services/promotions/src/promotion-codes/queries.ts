import { type PromotionCode as PromotionCodeResource, type Redemption, livemodeOf } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { CustomerRef } from './decide';
import { type PromotionCodeView, type RedemptionRow, tablesOf } from './read-model';
import type { Tenant } from '@billing/service';

export async function findPromotionCode(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  id: string,
): Promise<PromotionCodeView | undefined> {
  const { rows } = await sql.query<{ document: PromotionCodeView }>(
    `SELECT document FROM ${tablesOf(schema).codes} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0]?.document;
}

/** Codes are stored upper-case; lookups by code are case-insensitive. */
export async function findPromotionCodeByCode(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  code: string,
): Promise<PromotionCodeView | undefined> {
  const { rows } = await sql.query<{ document: PromotionCodeView }>(
    `SELECT document FROM ${tablesOf(schema).codes} WHERE code = $1 AND organization = $2 AND environment = $3`,
    [code.trim().toUpperCase(), tenant.organization, tenant.environment],
  );
  return rows[0]?.document;
}

/** Newest first; `total` counts every code matching the filters. */
export async function listPromotionCodes(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  filter: { coupon_id?: string; active?: 'true' | 'false'; limit: number; offset: number },
): Promise<{ codes: PromotionCodeView[]; total: number }> {
  const where = `organization = $1 AND environment = $2 AND ($3::text IS NULL OR coupon_id = $3::text)
    AND ($4::boolean IS NULL OR active = $4::boolean)`;
  const params = [
    tenant.organization,
    tenant.environment,
    filter.coupon_id ?? null,
    filter.active === undefined ? null : filter.active === 'true',
  ];
  const table = tablesOf(schema).codes;
  const { rows } = await sql.query<{ document: PromotionCodeView }>(
    `SELECT document FROM ${table} WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6`,
    [...params, filter.limit, filter.offset],
  );
  const count = await sql.query<{ total: number }>(
    `SELECT count(*)::integer AS total FROM ${table} WHERE ${where}`,
    params,
  );
  return { codes: rows.map((r) => r.document), total: count.rows[0]?.total ?? 0 };
}

/**
 * Listed redemptions are the spec's ACTIVE and VOIDED ones, newest first; RESERVED (not yet
 * paid) and RELEASED (never paid) ones are internal. The counts ignore the filters.
 */
export async function listRedemptions(
  sql: SqlExecutor,
  schema: string,
  codeId: string,
  filter: { status?: 'ACTIVE' | 'VOIDED'; customerId?: string; limit: number; offset: number },
) {
  const table = tablesOf(schema).redemptions;
  const where = `promotion_code_id = $1 AND status IN ('ACTIVE', 'VOIDED')
    AND ($2::text IS NULL OR status = $2::text) AND ($3::text IS NULL OR customer_id = $3::text)`;
  const params = [codeId, filter.status ?? null, filter.customerId ?? null];
  const { rows } = await sql.query<RedemptionRow>(
    `SELECT * FROM ${table} WHERE ${where} ORDER BY redeemed_at DESC, id DESC LIMIT $4 OFFSET $5`,
    [...params, filter.limit, filter.offset],
  );
  const total = await sql.query<{ total: number }>(
    `SELECT count(*)::integer AS total FROM ${table} WHERE ${where}`,
    params,
  );
  const counts = await sql.query<{ active: number; voided: number }>(
    `SELECT count(*) FILTER (WHERE status = 'ACTIVE')::integer AS active,
            count(*) FILTER (WHERE status = 'VOIDED')::integer AS voided
     FROM ${table} WHERE promotion_code_id = $1`,
    [codeId],
  );
  return {
    redemptions: rows.map(toRedemptionResource),
    total: total.rows[0]?.total ?? 0,
    active_count: counts.rows[0]?.active ?? 0,
    voided_count: counts.rows[0]?.voided ?? 0,
  };
}

export async function findRedemption(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  id: string,
): Promise<RedemptionRow | undefined> {
  const { rows } = await sql.query<RedemptionRow>(
    `SELECT * FROM ${tablesOf(schema).redemptions} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0];
}

/** Redemptions of the customer that count against `max_redemptions_per_customer`. */
export async function countCustomerRedemptions(
  sql: SqlExecutor,
  schema: string,
  codeId: string,
  who: CustomerRef,
): Promise<number> {
  if (who.customerId === null && who.externalId === null && who.email === null) return 0;
  const { rows } = await sql.query<{ n: number }>(
    `SELECT count(*)::integer AS n FROM ${tablesOf(schema).redemptions}
     WHERE promotion_code_id = $1 AND status IN ('RESERVED', 'ACTIVE')
       AND ((customer_id IS NOT NULL AND customer_id = $2::text) OR (external_id IS NOT NULL AND external_id = $3::text)
         OR (email IS NOT NULL AND email = $4::text))`,
    [codeId, who.customerId, who.externalId, who.email],
  );
  return rows[0]?.n ?? 0;
}

export function toRedemptionResource(row: RedemptionRow): Redemption {
  return {
    id: row.id,
    promotion_code_id: row.promotion_code_id,
    customer_id: row.customer_id,
    order_id: row.order_id,
    discount_amount: row.discount_amount,
    status: row.status as 'ACTIVE' | 'VOIDED',
    redeemed_at: new Date(row.redeemed_at ?? row.reserved_at).toISOString(),
  };
}

export function toPromotionCodeResource(v: PromotionCodeView): PromotionCodeResource {
  return {
    object: 'promotion_code',
    id: v.id,
    code: v.code,
    coupon_id: v.coupon_id,
    valid_from: v.valid_from,
    valid_until: v.valid_until,
    max_redemptions: v.max_redemptions,
    max_redemptions_per_customer: v.max_redemptions_per_customer,
    current_redemptions: v.current_redemptions,
    minimum_amount: v.minimum_amount,
    customer_eligibility: v.customer_eligibility,
    restricted_to_customer_id: v.restricted_to_customer_id,
    active: v.active,
    metadata: v.metadata,
    created_at: v.created_at,
    updated_at: v.updated_at,
    livemode: livemodeOf(v.environment),
  };
}
