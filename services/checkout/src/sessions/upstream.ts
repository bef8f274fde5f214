import {
  ApiError,
  type CheckoutMode,
  conflict,
  type CallerIdentity,
  type Product,
  type ReservedRedemption,
  notFound,
  validationError,
} from '@billing/contracts';
import type { InternalClient } from '@billing/runtime';

/**
 * The product as the catalog has it now. Absent, archived or another organization's (the
 * catalog confines reads to the caller) are all 404. The catalog's by-id read takes a
 * Secret Key only, so checkout asks with the caller's tenancy and keyKind `secret`.
 */
export async function lookUpProduct(
  catalog: InternalClient,
  caller: CallerIdentity,
  ref: { product_id?: string; product_slug?: string },
): Promise<Product> {
  const path = ref.product_id
    ? `/v1/products/${encodeURIComponent(ref.product_id)}`
    : `/v1/products/by-slug/${encodeURIComponent(ref.product_slug ?? '')}`;
  const { status, body } = await catalog.get<Product>(path, { ...caller, keyKind: 'secret' });
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
  request: { code: string; amount: number; product_id: string; external_id?: string; checkout_session_id: string },
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

type LiveSubscription = { subscription: { id: string; status: string } | null };

/**
 * The spec's duplicate check at creation: a customer (by `customer_email`) who already has an
 * ACTIVE, TRIAL or PAST_DUE subscription to the product gets `409 conflict`. When billing
 * cannot answer, the session is created and billing's check after payment applies (the order
 * is refunded), so a buyer is never charged twice without a record.
 */
export async function refuseDuplicateSubscription(
  billing: InternalClient | null,
  caller: CallerIdentity,
  request: { mode: CheckoutMode; customer_email?: string; product_id: string },
  onUnavailable: (err: unknown) => void,
): Promise<void> {
  if (!billing || request.mode !== 'SUBSCRIPTION' || !request.customer_email) return;
  const query = new URLSearchParams({ email: request.customer_email, product_id: request.product_id });
  let answer: { status: number; body: LiveSubscription };
  try {
    answer = await billing.get<LiveSubscription>(`/internal/subscriptions/live?${query}`, {
      ...caller,
      keyKind: 'secret',
    });
  } catch (err) {
    onUnavailable(err);
    return;
  }
  const existing = answer.status === 200 ? answer.body.subscription : null;
  if (!existing) return;
  throw conflict('This customer already has a subscription to this product', [
    { existing_subscription_id: existing.id, status: existing.status },
  ]);
}
