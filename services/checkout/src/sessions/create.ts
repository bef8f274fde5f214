import {
  ApiError,
  type CallerIdentity,
  CreateCheckoutSessionBody,
  emailKey,
  notFound,
  type ResolvedCustomer,
  type ErrorDetail,
  badRequest,
  detailsFromZodIssues,
  newId,
  randomBase62,
  validationError,
  normalizeCheckoutSessionBody,
  einvoiceViolations,
} from '@billing/contracts';
import type { Product, ReservedRedemption } from '@billing/contracts';
import type { EventStoreTransaction } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { z } from 'zod';
import { dependenciesOf } from '../dependencies';
import { runSessionCommands } from './command';
import { modeFor, redirectUrlViolation } from './rules';
import type { CheckoutSessionCreatedData, Session } from './session';
import { lookUpProduct, refuseLiveSubscription, releasePromotion, reservePromotion, resolveBuyer } from './upstream';

export const SESSION_LIFETIME_MS = 30 * 60_000;

/**
 * The request as checkout takes it: camelCase moved to snake_case, metadata refused for a
 * Publishable Key (400), then every field rule at once (422).
 */
export function parseCreateRequest(raw: unknown, caller: CallerIdentity): CreateCheckoutSessionBody {
  return parseSessionRequest(raw, caller, CreateCheckoutSessionBody) as CreateCheckoutSessionBody;
}

/** `parseCreateRequest` with the schema of the resource created (embedded checkouts have their own). */
export function parseSessionRequest(
  raw: unknown,
  caller: CallerIdentity,
  schema: z.ZodType<SessionRequest, unknown>,
): SessionRequest {
  const { body, conflicts } = normalizeCheckoutSessionBody(raw ?? {});
  if (conflicts.length > 0) {
    throw validationError(
      conflicts.map((path) => ({
        path,
        code: 'conflicting_values',
        message: `${path} and its camelCase name were both given with different values`,
      })),
    );
  }
  if (caller.keyKind === 'publishable' && typeof body === 'object' && body !== null) {
    if ('metadata' in body) throw badRequest('metadata can only be set with a Secret Key');
    if ('customer_id' in body) throw badRequest('customer_id can only be set with a Secret Key');
    if ('test_clock' in body) throw badRequest('test_clock can only be set with a Secret Key');
  }
  if (caller.environment !== 'SANDBOX' && typeof body === 'object' && body !== null && 'test_clock' in body) {
    throw badRequest('Test clocks exist in Sandbox only; use a Sandbox key');
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw validationError(detailsFromZodIssues(parsed.error.issues));
  const request = parsed.data;
  const details: ErrorDetail[] = [
    redirectUrlViolation('success_url', request.success_url, caller.environment),
    redirectUrlViolation('cancel_url', request.cancel_url, caller.environment),
    ...einvoiceViolations(request.einvoice),
  ].filter((detail): detail is ErrorDetail => detail !== null);
  if (details.length > 0) throw validationError(details);
  return request;
}

/** The mode against the product; SETUP charges nothing now, so it takes no promotion code. */
export function checkedMode(request: SessionRequest, product: Product) {
  const mode = modeFor(product.type, request.mode);
  if (typeof mode !== 'string') throw validationError([mode]);
  if (mode !== 'SETUP') return mode;
  const notAllowed = (path: string) => ({
    path,
    code: 'not_allowed',
    message: 'SETUP mode charges nothing; a promotion code does not apply',
  });
  const details = [
    ...(request.promotion_code !== undefined ? [notAllowed('promotion_code')] : []),
    ...(request.allow_promotion_codes === true ? [notAllowed('allow_promotion_codes')] : []),
  ];
  if (details.length > 0) throw validationError(details);
  return mode;
}

/** A hosted session's request, or an embedded checkout's, whose redirect URLs are optional. */
export type SessionRequest = Omit<CreateCheckoutSessionBody, 'success_url' | 'cancel_url' | 'allow_promotion_codes'> & {
  success_url?: string;
  cancel_url?: string;
  ui_mode?: 'hosted' | 'embedded';
  /** Hosted sessions only: embedded checkouts have their own coupon box. */
  allow_promotion_codes?: boolean;
  /** Embedded, from a browser with a Publishable Key: the creating page's origin (`page_origin`). */
  page_origin?: string;
};

export interface NewSession {
  sessionId: string;
  caller: CallerIdentity;
  request: SessionRequest;
  product: Product;
  mode: ReturnType<typeof checkedMode>;
  /** Billing's customer for the buyer's names, when there is one already. */
  customer: ResolvedCustomer['customer'];
  redemption: ReservedRedemption | null;
  now: Date;
}

/** The creation event's data: session, order and intent with their ids, amounts and times. */
export function sessionCreatedData({
  sessionId,
  caller,
  request,
  product,
  mode,
  customer,
  redemption,
  now,
}: NewSession): CheckoutSessionCreatedData {
  const trialDays =
    mode === 'SUBSCRIPTION' ? (product.trial_days ?? 0) + (redemption?.discount.bonus_trial_days ?? 0) : 0;
  // SETUP, and a subscription that starts with a trial, charge nothing today: the card is saved.
  const isSetup = mode === 'SETUP' || trialDays > 0;
  const subtotal = isSetup ? 0 : product.price;
  const total = isSetup ? 0 : (redemption?.amount_after_discount ?? subtotal);
  const intentId = isSetup ? newId('setupIntent') : newId('paymentIntent');
  const createdAt = now.toISOString();
  const requiresPaymentMethod = isSetup || request.collect_payment_method === 'always' || total > 0;
  return {
    session_id: sessionId,
    organization: caller.organization,
    environment: caller.environment,
    mode,
    product: {
      id: product.id,
      name: product.name,
      slug: product.slug,
      type: product.type,
      price: product.price,
      interval: product.interval,
      interval_count: product.interval_count,
      trial_days: product.trial_days,
      ...(product.credits && { credits: product.credits }),
      ...(product.metered_prices?.length && { metered_prices: product.metered_prices }),
    },
    success_url: request.success_url ?? null,
    cancel_url: request.cancel_url ?? null,
    ...(request.ui_mode === 'embedded' && { ui_mode: 'embedded', card_form_token: cardFormToken(sessionId) }),
    ...(request.ui_mode === 'embedded' && request.page_origin && { page_origin: request.page_origin }),
    ...(request.locale && { locale: request.locale }),
    customer_id: customer?.id ?? null,
    test_clock: request.test_clock ?? null,
    trial_days: trialDays,
    coupon: redemption?.coupon ?? null,
    coupon_name: redemption?.coupon_name ?? null,
    allow_promotion_codes: request.allow_promotion_codes === true,
    // A session sold to a named customer is prefilled with their email.
    customer_email: request.customer_email ?? (request.customer_id ? (customer?.email ?? null) : null),
    customer_name: request.customer_name ?? null,
    external_customer_id: request.external_customer_id ?? null,
    collect_payment_method: request.collect_payment_method,
    requires_payment_method: requiresPaymentMethod,
    metadata: request.metadata ?? null,
    einvoice: request.einvoice ?? null,
    promotion_code: request.promotion_code?.trim().toUpperCase() ?? null,
    promotion_code_id: redemption?.promotion_code_id ?? null,
    redemption_id: redemption?.redemption_id ?? null,
    discount: redemption?.discount ?? null,
    order: {
      id: newId('order'),
      status: 'OPEN',
      product_id: product.id,
      amount_subtotal: subtotal,
      discount_amount: subtotal - total,
      amount_total: total,
      currency: 'TWD',
      metadata: request.metadata ?? null,
      created_at: createdAt,
      paid_at: null,
    },
    intent: {
      id: intentId,
      kind: isSetup ? 'setup_intent' : 'payment_intent',
      status: 'requires_payment_method',
      amount: total,
      currency: 'TWD',
      client_secret: `${intentId}_secret_${randomBase62(24)}`,
      payment_method: null,
      last_payment_error: null,
      created_at: createdAt,
      succeeded_at: null,
    },
    created_at: createdAt,
    expires_at: new Date(now.getTime() + SESSION_LIFETIME_MS).toISOString(),
  };
}

export interface CreateSessionOptions {
  /** The payment link that opens the session (its `alsoProject` records the pair). */
  paymentLinkId?: string;
  /** Written in the session's creation transaction, after the session's own read model. */
  alsoProject?: (tx: EventStoreTransaction, sessionId: string) => Promise<void>;
}

/**
 * Creates a session from a parsed request for the caller's organization and environment:
 * product lookup, mode, promotion reservation (released again if the append fails), append.
 * The public route and payment-link visits both create sessions through here.
 */
export async function createSession(
  context: ServiceContext,
  caller: CallerIdentity,
  request: SessionRequest,
  options: CreateSessionOptions = {},
): Promise<Session> {
  const { now } = context;
  const deps = dependenciesOf(context);
  const product = await lookUpProduct(deps.catalog(), deps.products, caller, request);
  const mode = checkedMode(request, product);
  const buyer = await buyerAtCreation(context, caller, request, product.id, mode);
  if (request.test_clock) await requireTestClock(context, caller, request.test_clock);
  const sessionId = newId('checkoutSession');
  const redemption = request.promotion_code
    ? await reservePromotion(deps.promotions(), caller, {
        code: request.promotion_code,
        amount: product.price,
        product_id: product.id,
        checkout_session_id: sessionId,
        customer_id: buyer.customer?.id,
        external_id: request.external_customer_id,
        email: request.customer_email ?? buyer.customer?.email,
      })
    : null;
  const at = now();
  const data = sessionCreatedData({
    sessionId,
    caller,
    request,
    product,
    mode,
    customer: buyer.customer,
    redemption,
    now: at,
  });
  data.payment_link_id = options.paymentLinkId ?? null;
  try {
    // A new id: its stream is empty, so nothing is read before the append.
    const { state } = await runSessionCommands(
      context,
      sessionId,
      { session: null, version: 0 },
      [{ type: 'CreateSession', data }],
      {
        organization: caller.organization,
        environment: caller.environment,
        occurredAt: at,
        alsoProject: options.alsoProject && ((tx) => options.alsoProject!(tx, sessionId)),
      },
    );
    if (state.status === 'Empty') throw new Error('session not created');
    return state.session;
  } catch (error) {
    if (redemption) await releasePromotion(deps.promotions(), caller, redemption.redemption_id).catch(() => {});
    throw error;
  }
}

/**
 * Who the buyer is when the session opens: billing's customer for `customer_id`,
 * `external_customer_id` or `customer_email`, if there is one. A named `customer_id` must exist
 * (404) and agree with `customer_email` (422); in SUBSCRIPTION mode a live subscription to the
 * product is `409 conflict`. When billing cannot answer, the session opens without a customer
 * and payment resolves the buyer (it refuses to charge while billing is down).
 */
async function buyerAtCreation(
  context: ServiceContext,
  caller: CallerIdentity,
  request: SessionRequest,
  productId: string,
  mode: ReturnType<typeof checkedMode>,
): Promise<ResolvedCustomer> {
  const billing = dependenciesOf(context).billing;
  const named = request.customer_id;
  if (!billing) {
    if (named) throw new ApiError(503, 'service_unavailable', 'billing is not configured');
    return { customer: null, live_subscription: null };
  }
  const query = {
    customer_id: named,
    external_id: request.external_customer_id,
    email: request.customer_email,
    product_id: mode === 'SUBSCRIPTION' ? productId : undefined,
  };
  let buyer: ResolvedCustomer;
  try {
    buyer = await resolveBuyer(billing, caller, query);
  } catch (err) {
    if (named) throw err;
    context.logger.warn({ err }, 'billing did not resolve the buyer; payment resolves them again');
    return { customer: null, live_subscription: null };
  }
  if (named && buyer.customer?.id !== named) throw notFound(`No such customer: ${named}`);
  if (named && request.customer_email && emailKey(request.customer_email) !== emailKey(buyer.customer!.email)) {
    throw validationError([
      { path: 'customer_email', code: 'customer_mismatch', message: "customer_email is not the customer's email" },
    ]);
  }
  refuseLiveSubscription(buyer);
  return buyer;
}

/** A Sandbox test clock named at creation must exist in the caller's organization (billing owns clocks). */
async function requireTestClock(context: ServiceContext, caller: CallerIdentity, clockId: string): Promise<void> {
  const billing = dependenciesOf(context).billing;
  if (!billing) throw new ApiError(503, 'service_unavailable', 'billing is not configured');
  const path = `/v1/test_clocks/${encodeURIComponent(clockId)}`;
  const { status } = await billing.get(path, { ...caller, keyKind: 'secret' });
  if (status === 404) throw notFound(`No such test clock: ${clockId}`);
  if (status !== 200) throw new ApiError(503, 'service_unavailable', `billing answered ${status}`);
}

/** An embedded checkout's card-form token names its session, so the card form finds it; the rest is the secret. */
export const cardFormToken = (sessionId: string) => `cft_${sessionId}_${randomBase62(32)}`;
export const sessionOfCardFormToken = (token: string) => /^cft_(cs_[A-Za-z0-9]+)_[A-Za-z0-9]{32}$/.exec(token)?.[1];
