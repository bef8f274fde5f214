import {
  type CallerIdentity,
  CreateCheckoutSessionBody,
  type ErrorDetail,
  badRequest,
  detailsFromZodIssues,
  newId,
  randomBase62,
  validationError,
  normalizeCheckoutSessionBody,
} from '@billing/contracts';
import type { Product, ReservedRedemption } from '@billing/contracts';
import { type EventStoreTransaction, type RecordedEvent, handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../dependencies';
import { einvoiceViolations } from './einvoice';
import { sessionAggregate, sessionProjector } from './routes';
import { modeFor, redirectUrlViolation } from './rules';
import { type CheckoutSessionCreatedData, type Session, sessionStream } from './session';
import { lookUpProduct, refuseDuplicateSubscription, releasePromotion, reservePromotion } from './upstream';

export const SESSION_LIFETIME_MS = 30 * 60_000;

/**
 * The request as checkout takes it: camelCase moved to snake_case, metadata refused for a
 * Publishable Key (400), then every field rule at once (422).
 */
export function parseCreateRequest(raw: unknown, caller: CallerIdentity): CreateCheckoutSessionBody {
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
  if (caller.keyKind === 'publishable' && typeof body === 'object' && body !== null && 'metadata' in body) {
    throw badRequest('metadata can only be set with a Secret Key');
  }
  const parsed = CreateCheckoutSessionBody.safeParse(body);
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
export function checkedMode(request: CreateCheckoutSessionBody, product: Product) {
  const mode = modeFor(product.type, request.mode);
  if (typeof mode !== 'string') throw validationError([mode]);
  if (mode === 'SETUP' && request.promotion_code !== undefined) {
    throw validationError([
      {
        path: 'promotion_code',
        code: 'not_allowed',
        message: 'SETUP mode charges nothing; a promotion code does not apply',
      },
    ]);
  }
  return mode;
}

export interface NewSession {
  sessionId: string;
  caller: CallerIdentity;
  request: CreateCheckoutSessionBody;
  product: Product;
  mode: ReturnType<typeof checkedMode>;
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
  redemption,
  now,
}: NewSession): CheckoutSessionCreatedData {
  const isSetup = mode === 'SETUP';
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
    },
    success_url: request.success_url,
    cancel_url: request.cancel_url,
    customer_email: request.customer_email ?? null,
    customer_name: request.customer_name ?? null,
    external_customer_id: request.external_customer_id ?? null,
    collect_payment_method: request.collect_payment_method,
    requires_payment_method: requiresPaymentMethod,
    metadata: request.metadata ?? null,
    einvoice: request.einvoice ?? null,
    promotion_code: request.promotion_code ?? null,
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
  request: CreateCheckoutSessionBody,
  options: CreateSessionOptions = {},
): Promise<Session> {
  const { store, now } = context;
  const deps = dependenciesOf(context);
  const sessionProject = sessionProjector(store.tables.schema);
  const product = await lookUpProduct(deps.catalog(), caller, request);
  const mode = checkedMode(request, product);
  await refuseDuplicateSubscription(
    deps.billing,
    caller,
    { mode, customer_email: request.customer_email, product_id: product.id },
    (err) => context.logger.warn({ err }, 'billing did not answer the duplicate check; it checks again after payment'),
  );
  const sessionId = newId('checkoutSession');
  const redemption = request.promotion_code
    ? await reservePromotion(deps.promotions(), caller, {
        code: request.promotion_code,
        amount: product.price,
        product_id: product.id,
        external_id: request.external_customer_id,
        checkout_session_id: sessionId,
      })
    : null;
  const at = now();
  const data = sessionCreatedData({ sessionId, caller, request, product, mode, redemption, now: at });
  const project = async (tx: EventStoreTransaction, events: RecordedEvent[]) => {
    await sessionProject(tx, events);
    await options.alsoProject?.(tx, sessionId);
  };
  try {
    const { state } = await handleCommand(
      store,
      sessionStream(sessionId),
      sessionAggregate,
      { type: 'CreateSession', data },
      { organization: caller.organization, environment: caller.environment, occurredAt: at, project },
    );
    if (state.status === 'Empty') throw new Error('session not created');
    return state.session;
  } catch (error) {
    if (redemption) await releasePromotion(deps.promotions(), caller, redemption.redemption_id).catch(() => {});
    throw error;
  }
}
