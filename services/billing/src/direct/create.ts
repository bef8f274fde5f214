import {
  type CreateSubscriptionBody,
  type Customer,
  type Environment,
  type IncompleteSubscription,
  type SavedPaymentMethod,
  type Subscription,
  ApiError,
  DIRECT_SUBSCRIPTION_METADATA_KEY,
  badRequest,
  conflict,
  livemodeOf,
  newId,
  notFound,
  type ChargeTrade,
} from '@billing/contracts';
import { paidTrade } from '../invoices/invoice';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { findBuyer } from '../customers/resolve';
import { checkoutClient } from '../dependencies';
import { chargeSavedCard, chargesRecorded, paymentPending, savedCardOf } from '../charges/charge';
import { invoiceAggregate } from '../invoices/aggregate';
import { nextInvoiceNumber } from '../invoices/read-model';
import { invoiceChargeKey } from '../invoices/payment';
import { renewalInvoiceId } from '../invoices/ids';
import { subscriptionAggregate } from '../subscriptions/aggregate';
import { currentSubscription, findSubscription, liveSubscriptions } from '../subscriptions/queries';
import { subscriptionPlanOf } from '../engine/catalog';
import { timeOn } from '../test-clocks/read-model';
import { type IncompleteRecord, claimCreation, findIncomplete, recordIncomplete, releaseCreation } from './read-model';

// `POST /v1/subscriptions` and `POST /v1/subscriptions/{id}/complete` (docs/plan-switching.md,
// "Creating a subscription directly"), after Stripe's `payment_behavior: default_incomplete`.

type Plan = Awaited<ReturnType<typeof subscriptionPlanOf>>;
type Created = { status: 201; body: Subscription | IncompleteSubscription };

/**
 * Charges the customer's saved card for the first period (nothing for a trial) and answers the
 * subscription; or, when the buyer is needed (no customer or no saved card, a promotion code,
 * a declined card), opens a checkout session for it and answers it `INCOMPLETE` with the hosted
 * page's `url` and `client_secret`. The paid session starts the subscription with the id
 * answered here.
 */
export async function createSubscription(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  body: CreateSubscriptionBody,
): Promise<Created> {
  const tenant: Tenant = { organization, environment };
  const { store } = context;
  const customer = await findBuyer(store.database, store.tables.schema, tenant, {
    customer_id: body.customer_id,
    external_id: body.external_customer_id,
    email: body.customer_email,
  });
  if (!customer && !body.customer_email) throw notFound('No such customer');
  const plan = await subscriptionPlanOf(context, tenant, body.product_id, 'product_id');
  if (customer) await refuseLiveSubscription(context, customer.id, plan.id);
  const subscriptionId = newId('subscription');
  const card = customer ? await savedCardOf(context, customer.id) : null;
  const trialDays = body.trial_days ?? plan.trial_days ?? 0;
  if (customer && card && !body.promotion_code) {
    const outcome = await startPaid(context, tenant, { customer, card, plan, subscriptionId, trialDays });
    if (outcome.status === 'started') return { status: 201, body: outcome.subscription };
    return {
      status: 201,
      body: await startIncomplete(context, tenant, body, customer, plan, subscriptionId, outcome.failure),
    };
  }
  return {
    status: 201,
    body: await startIncomplete(context, tenant, body, customer ?? null, plan, subscriptionId, null),
  };
}

/**
 * `POST /v1/subscriptions/{id}/complete`, idempotent: a subscription that exists is answered as
 * it is; an INCOMPLETE one whose hosted page was paid is answered once billing has started it;
 * one whose customer has a saved card by now is charged (once: the first period's invoice id
 * derives from the subscription) and started. Otherwise `402` naming the hosted page, or
 * `409` when the page expired unpaid.
 */
export async function completeSubscription(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  subscriptionId: string,
): Promise<Subscription> {
  const tenant: Tenant = { organization, environment };
  const { store } = context;
  const found = await findSubscription(store.database, store.tables.schema, tenant, subscriptionId);
  if (found) return currentSubscription(context, tenant, subscriptionId);
  const incomplete = await findIncomplete(store.database, store.tables.schema, tenant, subscriptionId);
  if (!incomplete) throw notFound(`No such subscription: ${subscriptionId}`);
  const session = await readSession(context, tenant, incomplete.checkout_session_id);
  if (session.status === 'COMPLETE') return awaitStarted(context, tenant, subscriptionId);
  if (session.status === 'EXPIRED') {
    throw conflict(`The hosted page of ${subscriptionId} expired unpaid: create the subscription again`);
  }
  const customer = await findBuyer(store.database, store.tables.schema, tenant, {
    customer_id: incomplete.customer_id ?? undefined,
    email: incomplete.customer_email,
  });
  const card = customer ? await savedCardOf(context, customer.id) : null;
  if (customer && card && !incomplete.promotion_code) {
    await refuseLiveSubscription(context, customer.id, incomplete.product.id);
    const plan = { ...incomplete.plan };
    const outcome = await startPaid(context, tenant, {
      customer,
      card,
      plan,
      subscriptionId,
      trialDays: incomplete.trial_days,
    });
    if (outcome.status === 'started') return outcome.subscription;
    throw unpaid(incomplete, outcome.failure);
  }
  throw unpaid(incomplete, null);
}

function unpaid(incomplete: IncompleteRecord, failure: { code: string; message: string } | null): ApiError {
  const why = failure ? `the saved card was declined (${failure.message})` : 'it is not paid yet';
  return new ApiError(
    402,
    'payment_required',
    `Subscription ${incomplete.id} is INCOMPLETE: ${why}; pay on its hosted page`,
    [{ url: incomplete.url, client_secret: incomplete.client_secret, ...(failure ? { code: failure.code } : {}) }],
  );
}

async function refuseLiveSubscription(context: ServiceContext, customerId: string, productId: string) {
  const { store } = context;
  const existing = (await liveSubscriptions(store.database, store.tables.schema, customerId, productId))[0];
  if (existing) {
    throw conflict('This customer already has a subscription to this product', [
      { existing_subscription_id: existing.id, status: existing.status },
    ]);
  }
}

/**
 * Charges the first period on the saved card (nothing in a trial), keyed by the period's
 * invoice (derived from the subscription, so asking again never charges twice), then starts
 * the subscription and records the paid invoice in one transaction. A claim on the customer
 * and product keeps two creations at once from both charging.
 */
async function startPaid(
  context: ServiceContext,
  tenant: Tenant,
  input: { customer: Customer; card: SavedPaymentMethod; plan: Plan; subscriptionId: string; trialDays: number },
): Promise<
  { status: 'started'; subscription: Subscription } | { status: 'declined'; failure: { code: string; message: string } }
> {
  const { store } = context;
  const { schema } = store.tables;
  const { customer, card, plan, subscriptionId, trialDays } = input;
  if (!(await claimCreation(store.database, schema, tenant, customer.id, plan.id, subscriptionId))) {
    throw conflict('A subscription of this customer to this product is being created', [
      { blocking_reason: 'creating' },
    ]);
  }
  let keepClaim = false;
  try {
    const now = await clockOfCustomer(context, tenant, customer);
    const invoiceId = renewalInvoiceId(subscriptionId, 'first-period');
    const amount = trialDays > 0 ? 0 : plan.price;
    let charge: ChargeTrade | undefined;
    if (amount > 0) {
      const outcome = await chargeSavedCard(context, tenant, {
        card,
        amount,
        key: invoiceChargeKey(invoiceId, 1),
        pending: {
          purpose: 'first_period',
          subject: subscriptionId,
          attempt: 1,
          detail: { customer_id: customer.id, plan } satisfies FirstPeriodDetail,
        },
      });
      if (outcome.status === 'unknown' || outcome.status === 'pending') {
        // The claim stays until the reconciler completes or gives up the charge: no second creation charges.
        // (A transfer the customer makes is not known to be paid either: it is never read as paid.)
        keepClaim = true;
        throw paymentPending(
          `The first charge of ${subscriptionId} got no answer from the processor; it is being confirmed, and nothing more will be charged`,
          [{ subscription_id: subscriptionId }],
        );
      }
      if (outcome.status === 'declined') {
        await chargesRecorded(context, [invoiceChargeKey(invoiceId, 1)]);
        return { status: 'declined', failure: { code: outcome.code, message: outcome.message } };
      }
      charge = paidTrade(outcome);
    }
    await recordFirstPeriod(context, tenant, {
      customer,
      plan,
      subscriptionId,
      trialDays,
      amount,
      invoiceId,
      charge,
      now,
    });
    await chargesRecorded(context, [invoiceChargeKey(invoiceId, 1)]);
    return { status: 'started', subscription: await currentSubscription(context, tenant, subscriptionId) };
  } finally {
    if (!keepClaim) await releaseCreation(store.database, schema, customer.id, plan.id, subscriptionId);
  }
}

/** What the reconciler needs to record a first period whose charge answered late. */
export type FirstPeriodDetail = { customer_id: string; plan: Plan };

/**
 * The reconciler learned that the first charge of the directly created `subscriptionId`
 * succeeded after its answer was lost: the subscription starts as the request meant, dated when
 * the reconciler records it (the customer's clock), and the creation claim is released. Once.
 */
export async function recordLateFirstCharge(
  context: ServiceContext,
  tenant: Tenant,
  subscriptionId: string,
  amount: number,
  detail: FirstPeriodDetail,
  charge: ChargeTrade | undefined,
): Promise<void> {
  const { store } = context;
  const { schema } = store.tables;
  if (await findSubscription(store.database, schema, tenant, subscriptionId)) return;
  const customer = await findBuyer(store.database, schema, tenant, { customer_id: detail.customer_id });
  if (!customer) throw new Error(`the customer of ${subscriptionId} is gone`);
  const now = await clockOfCustomer(context, tenant, customer);
  const invoiceId = renewalInvoiceId(subscriptionId, 'first-period');
  await recordFirstPeriod(context, tenant, {
    customer,
    plan: detail.plan,
    subscriptionId,
    trialDays: 0,
    amount,
    invoiceId,
    charge,
    now,
  });
  await releaseCreation(store.database, schema, customer.id, detail.plan.id, subscriptionId);
}

/** A first charge that was never made (or declined) after all: the creation claim is released. */
export async function releaseLateFirstCharge(
  context: ServiceContext,
  detail: FirstPeriodDetail,
  subscriptionId: string,
) {
  const { store } = context;
  await releaseCreation(store.database, store.tables.schema, detail.customer_id, detail.plan.id, subscriptionId);
}

/**
 * Starts the subscription and records its paid first-period invoice (`invoiceId`, `amount`) in
 * one transaction. Also the reconciler's, for a first charge whose answer came late.
 */
export async function recordFirstPeriod(
  context: ServiceContext,
  tenant: Tenant,
  input: {
    customer: Customer;
    plan: Plan;
    subscriptionId: string;
    trialDays: number;
    amount: number;
    invoiceId: string;
    /** Who charged the first period and under what trade (none: nothing charged, or not named). */
    charge?: ChargeTrade;
    now: Date;
  },
): Promise<void> {
  const { store } = context;
  const { schema } = store.tables;
  const { customer, plan, subscriptionId, trialDays, amount, invoiceId, now } = input;
  await store.transaction(async (tx) => {
    const { state } = await subscriptionAggregate.handleInTransaction(
      tx,
      store,
      subscriptionId,
      {
        type: 'StartSubscription',
        data: {
          subscriptionId,
          ...tenant,
          now,
          customerId: customer.id,
          plan: { ...plan },
          checkoutSessionId: null,
          orderId: null,
          testClock: customer.test_clock ?? null,
          trialDays,
          coupon: null,
        },
      },
      { ...tenant, occurredAt: now },
    );
    if (state.status === 'Empty') throw new Error(`subscription ${subscriptionId} not started`);
    const { subscription } = state;
    const every = plan.interval_count === 1 ? plan.interval : `${plan.interval_count} ${plan.interval}s`;
    const period = { start: subscription.current_period_start, end: subscription.current_period_end };
    await invoiceAggregate.handleInTransaction(
      tx,
      store,
      invoiceId,
      {
        type: 'RecordPaidInvoice',
        data: {
          invoiceId,
          number: await nextInvoiceNumber(tx, schema, tenant),
          ...tenant,
          customerId: customer.id,
          subscriptionId,
          orderId: null,
          checkoutSessionId: null,
          lines: [
            {
              description:
                trialDays > 0 ? `${plan.name} (${trialDays}-day free trial)` : `${plan.name} (every ${every})`,
              amount,
              period,
              kind: 'subscription',
            },
          ],
          amountDiscount: 0,
          amountTotal: amount,
          periodStart: period.start,
          periodEnd: period.end,
          paidAt: now.toISOString(),
          charge: input.charge,
          now,
        },
      },
      { ...tenant, occurredAt: now },
    );
  });
}

/** Opens the checkout session the buyer pays on, naming the subscription id, and keeps the INCOMPLETE subscription. */
async function startIncomplete(
  context: ServiceContext,
  tenant: Tenant,
  body: CreateSubscriptionBody,
  customer: Customer | null,
  plan: Plan,
  subscriptionId: string,
  failure: { code: string; message: string } | null,
): Promise<IncompleteSubscription> {
  if (!body.success_url || !body.cancel_url) {
    throw badRequest(
      'success_url and cancel_url are required when the buyer must pay on the hosted page (no saved card, a promotion code, or a declined card)',
      [{ path: body.success_url ? 'cancel_url' : 'success_url', code: 'required', message: 'required here' }],
    );
  }
  const checkout = checkoutClient(context);
  if (!checkout) throw new ApiError(503, 'service_unavailable', 'checkout is not configured');
  const email = customer?.email ?? body.customer_email!;
  const { status, body: session } = await checkout.post<{
    id: string;
    url: string;
    client_secret: string;
    expires_at: string;
    error?: { code: string; message: string; details?: unknown[] };
  }>(
    '/v1/checkout/sessions',
    {
      product_id: plan.id,
      success_url: body.success_url,
      cancel_url: body.cancel_url,
      mode: 'SUBSCRIPTION',
      customer_email: email,
      ...(customer?.external_id
        ? {}
        : body.external_customer_id
          ? { external_customer_id: body.external_customer_id }
          : {}),
      ...(body.promotion_code ? { promotion_code: body.promotion_code } : {}),
      ...(customer?.test_clock ? { test_clock: customer.test_clock } : {}),
      metadata: { [DIRECT_SUBSCRIPTION_METADATA_KEY]: subscriptionId },
    },
    { ...tenant, keyKind: 'secret', keyId: 'billing' },
  );
  if (status !== 201) {
    if (session.error && status < 500) {
      throw new ApiError(status, session.error.code as never, session.error.message, session.error.details);
    }
    throw new ApiError(503, 'service_unavailable', `checkout answered ${status}`);
  }
  const at = (await clockOfCustomer(context, tenant, customer)).toISOString();
  const incomplete: IncompleteSubscription = {
    object: 'subscription',
    id: subscriptionId,
    status: 'INCOMPLETE',
    customer_id: customer?.id ?? null,
    customer_email: email,
    product: { id: plan.id, name: plan.name, slug: plan.slug },
    price: plan.price,
    currency: 'TWD',
    interval: plan.interval,
    interval_count: plan.interval_count,
    checkout_session_id: session.id,
    url: session.url,
    client_secret: session.client_secret,
    expires_at: session.expires_at,
    last_payment_error: failure,
    created_at: at,
    livemode: livemodeOf(tenant.environment),
  };
  const { trial_days: _planTrial, ...facts } = plan;
  await recordIncomplete(context.store.database, context.store.tables.schema, tenant, {
    ...incomplete,
    plan: { ...facts, trial_days: plan.trial_days },
    trial_days: body.trial_days ?? plan.trial_days ?? 0,
    promotion_code: body.promotion_code ?? null,
  });
  return incomplete;
}

async function readSession(context: ServiceContext, tenant: Tenant, sessionId: string) {
  const checkout = checkoutClient(context);
  if (!checkout) throw new ApiError(503, 'service_unavailable', 'checkout is not configured');
  const { status, body } = await checkout.get<{ status: 'OPEN' | 'COMPLETE' | 'EXPIRED' }>(
    `/v1/checkout/sessions/${encodeURIComponent(sessionId)}`,
    { ...tenant, keyKind: 'secret', keyId: 'billing' },
  );
  if (status !== 200) throw new ApiError(503, 'service_unavailable', `checkout answered ${status}`);
  return body;
}

/** The paid session's `checkout.completed` starts it (asynchronously): wait a moment for it. */
async function awaitStarted(context: ServiceContext, tenant: Tenant, subscriptionId: string): Promise<Subscription> {
  const { store } = context;
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (await findSubscription(store.database, store.tables.schema, tenant, subscriptionId)) {
      return currentSubscription(context, tenant, subscriptionId);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw conflict(`Subscription ${subscriptionId} was paid and is being started: ask again in a moment`);
}

function clockOfCustomer(context: ServiceContext, tenant: Tenant, customer: Customer | null): Promise<Date> {
  const { store } = context;
  return timeOn(store.database, store.tables.schema, tenant, customer?.test_clock, context.now);
}
