import { type CallerIdentity, emailKey } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import { findCoupon } from '../coupons/queries';
import type { PromotionCodeView } from '../promotion-codes/read-model';
import { countCustomerRedemptions, findPromotionCodeByCode } from '../promotion-codes/queries';
import { customerNames, findProducts, hasCompletedOrders } from '../replicas/read-model';
import type { ValidationInput } from './validate';

export interface ValidationRequest {
  code: string;
  customer_id?: string;
  external_id?: string;
  /** From checkout only: the public validation names customers by id or external id. */
  email?: string;
  product_id?: string;
  amount?: number;
}

/** Reads what `validatePromotionCode` needs from the read models and replicas. */
export async function loadValidationInput(
  sql: SqlExecutor,
  schema: string,
  caller: Pick<CallerIdentity, 'organization' | 'environment' | 'keyKind'>,
  body: ValidationRequest,
  now: Date,
): Promise<{ input: ValidationInput; promotionCode?: PromotionCodeView }> {
  const given = {
    customerId: body.customer_id ?? null,
    externalId: body.external_id ?? null,
    email: body.email === undefined ? null : emailKey(body.email),
  };
  const promotionCode = await findPromotionCodeByCode(sql, schema, caller, body.code);
  const coupon = promotionCode && (await findCoupon(sql, schema, caller, promotionCode.coupon_id));
  const who = promotionCode ? await customerNames(sql, schema, caller, given) : given;
  const request = { ...who, productId: body.product_id ?? null, amount: body.amount };
  const [redemptions, completed, products] = promotionCode
    ? [
        await countCustomerRedemptions(sql, schema, promotionCode.id, who),
        await hasCompletedOrders(sql, schema, caller, who),
        await findProducts(sql, schema, caller, coupon?.product_ids ?? []),
      ]
    : [0, false, []];
  return {
    promotionCode,
    input: {
      now,
      masked: caller.keyKind === 'publishable',
      request,
      promotionCode,
      coupon,
      customer: { redemptions, hasCompletedOrders: completed },
      products,
    },
  };
}
