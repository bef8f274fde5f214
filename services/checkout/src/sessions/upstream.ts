import {
  ApiError,
  conflict,
  type CallerIdentity,
  type Product,
  type ReservedRedemption,
  type ResolvedCustomer,
  notFound,
  validationError,
} from '@billing/contracts';
import type { InternalClient } from '@billing/runtime';
import type { ProductCache, ProductRef } from './product-cache';

/**
 * The product as the catalog has it (from `products`, which drops a product as soon as the
 * catalog's log shows it changed). Absent, archived or another organization's (the catalog
 * confines reads to the caller) are all 404. The catalog's by-id read takes a Secret Key only,
 * so checkout asks with the caller's tenancy and keyKind `secret`.
 */
export async function lookUpProduct(
  catalog: InternalClient,
  products: ProductCache,
  caller: CallerIdentity,
  ref: ProductRef,
): Promise<Product> {
  const path = ref.product_id
    ? `/v1/products/${encodeURIComponent(ref.product_id)}`
    : `/v1/products/by-slug/${encodeURIComponent(ref.product_slug ?? '')}`;
  const { status, body } = await products.lookUp(caller, ref, () =>
    catalog.get<Product>(path, { ...caller, keyKind: 'secret' }),
  );
  const name = ref.product_id ?? ref.product_slug;
  if (status === 404 || (status === 200 && !body.active)) throw notFound(`No such product: ${name}`);
  if (status !== 200) throw new ApiError(503, 'service_unavailable', `catalog answered ${status}`);
  return body;
}

/** Publishable Keys see one code for every refusal but "already used", as validation does. */
const maskedForPublishable = (code: string) => (code === 'PROMO_CODE_ALREADY_USED' ? code : 'PROMO_CODE_INVALID');

/**
 * Validates and holds the promotion code for the session. A refusal is 422
 * `validation_error` with `details: [{ path: 'promotion_code', code: <PROMO_...>, message }]`.
 */
export async function reservePromotion(
  promotions: InternalClient,
  caller: CallerIdentity,
  request: {
    code: string;
    amount: number;
    product_id: string;
    checkout_session_id: string;
    customer_id?: string;
    external_id?: string;
    email?: string;
  },
): Promise<ReservedRedemption> {
  const { status, body } = await promotions.post<ReservedRedemption & { error?: { code: string; message: string } }>(
    '/internal/promotion-codes/reserve',
    request,
    { ...caller, keyKind: 'secret' },
  );
  if (status === 200 || status === 201) return body;
  const error = body?.error;
  if ((status === 409 || status === 422) && error?.code?.startsWith('PROMO_')) {
    const code = caller.keyKind === 'publishable' ? maskedForPublishable(error.code) : error.code;
    const message = code === error.code ? error.message : 'This promotion code is not valid';
    throw validationError([{ path: 'promotion_code', code, message }], 'The promotion code cannot be applied');
  }
  throw new ApiError(503, 'service_unavailable', `promotions answered ${status}`);
}

/** Best effort: promotions also releases on `CheckoutSessionExpired`. */
export async function releasePromotion(promotions: InternalClient, caller: CallerIdentity, redemptionId: string) {
  await promotions.post(`/internal/redemptions/${encodeURIComponent(redemptionId)}/release`, {}, caller);
}

/** What checkout asks billing about the buyer (`POST /internal/customers/resolve`). */
export type BuyerQuery = {
  customer_id?: string;
  external_id?: string;
  email?: string;
  name?: string;
  create?: boolean;
  product_id?: string;
  test_clock?: string;
};

const NOBODY: ResolvedCustomer = { customer: null, live_subscription: null };

/**
 * The buyer as billing knows them (docs/customer-identity.md), and their live subscription to
 * `product_id` when asked. Billing down or failing is `503 service_unavailable`.
 */
export async function resolveBuyer(
  billing: InternalClient,
  caller: CallerIdentity,
  query: BuyerQuery,
): Promise<ResolvedCustomer> {
  const named = query.customer_id ?? query.external_id ?? query.email;
  if (named === undefined) return NOBODY;
  const { status, body } = await billing.post<ResolvedCustomer>('/internal/customers/resolve', query, {
    ...caller,
    keyKind: 'secret',
  });
  if (status !== 200) throw new ApiError(503, 'service_unavailable', `billing answered ${status}`);
  return body;
}

/**
 * The spec's duplicate check: a customer who already has an ACTIVE, TRIAL or PAST_DUE
 * subscription to the product gets `409 conflict` with the existing subscription.
 */
export function refuseLiveSubscription(buyer: ResolvedCustomer): void {
  const existing = buyer.live_subscription;
  if (!existing) return;
  throw conflict('This customer already has a subscription to this product', [
    { existing_subscription_id: existing.id, status: existing.status },
  ]);
}

/**
 * At payment the buyer's redemption is assigned to their customer, and the per-customer limit
 * is checked again on the promotion code's stream: of two open sessions of one customer, only
 * as many as the limit allows can pay with the code. A refusal is 422 like at creation.
 */
export async function assignRedemption(
  promotions: InternalClient,
  caller: CallerIdentity,
  redemptionId: string,
  customer: NonNullable<ResolvedCustomer['customer']>,
): Promise<void> {
  const { status, body } = await promotions.post<{ error?: { code: string; message: string } }>(
    `/internal/redemptions/${encodeURIComponent(redemptionId)}/assign`,
    { customer_id: customer.id, external_id: customer.external_id ?? undefined, email: customer.email },
    { ...caller, keyKind: 'secret' },
  );
  if (status === 200) return;
  const error = body?.error;
  if ((status === 409 || status === 422) && error?.code?.startsWith('PROMO_')) {
    const message = `${error.message}. Nothing was charged.`;
    throw validationError([{ path: 'promotion_code', code: error.code, message }], message);
  }
  throw new ApiError(503, 'service_unavailable', `promotions answered ${status}`);
}
