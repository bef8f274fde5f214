import {
  type CouponDiscount,
  type Environment,
  LIVE_SUBSCRIPTION_STATUSES,
  type MeteredPrice,
  type ProductCredits,
  type ProductInterval,
  type Subscription,
  conflict,
  livemodeOf,
  notFound,
} from '@billing/contracts';
import { nextPeriodEnd, periodEnd, trialEnd } from '../calendar/period';
import { allowanceField } from './allowance';
import { meteredPricesField } from './metered';
import type { SubscriptionEvent, SubscriptionState } from './subscription';

type Who = { subscriptionId: string; organization: string; environment: Environment; now: Date };

/** The subscription plan as the checkout sold it. */
export type PlanFacts = {
  id: string;
  name: string;
  slug: string | null;
  price: number;
  interval: ProductInterval;
  interval_count: number;
  trial_days: number | null;
  /** The credit allowance each paid period grants; absent on plans sold before allowances. */
  credits?: ProductCredits | null;
  /** The usage each renewal invoice bills; absent on plans sold before metered prices. */
  metered_prices?: MeteredPrice[] | null;
};

/** A paid SUBSCRIPTION-mode checkout starts the subscription. */
export type StartSubscription = {
  type: 'StartSubscription';
  data: Who & {
    customerId: string;
    plan: PlanFacts;
    checkoutSessionId: string | null;
    orderId: string | null;
    /** Sandbox: the test clock it lives on; `now` is then the clock's time. */
    testClock?: string | null;
    /**
     * Free days before the first charge, as checkout sold them (plan and code): the trial is
     * then the first period, and nothing was paid. Absent for checkouts made before trials
     * charged nothing: their trial runs inside the paid first period.
     */
    trialDays?: number;
    /** The coupon of the code redeemed at checkout. */
    coupon?: CouponDiscount | null;
  };
};

/**
 * A SUBSCRIPTION-mode checkout was paid although this live subscription to the product
 * existed: no second subscription; the event tells checkout to refund the order.
 */
export type RecordDuplicatePayment = {
  type: 'RecordDuplicatePayment';
  data: Who & {
    checkoutSessionId: string;
    orderId: string;
    customerId: string;
    productId: string;
    amountTotal: number;
  };
};

/** `trial_end` has come: the TRIAL subscription goes on as ACTIVE. */
export type EndTrial = { type: 'EndTrial'; data: { subscriptionId: string; now: Date } };

/**
 * Sends `subscription.trial_will_end` when the trial ends within `TRIAL_WILL_END_NOTICE_MS`,
 * once per trial (due work claims it by appending at the stream's version).
 */
export type TellTrialWillEnd = { type: 'TellTrialWillEnd'; data: { subscriptionId: string; now: Date } };

/** Sends `subscription.renewal_upcoming` 7 days before a yearly period ends, once per period. */
export type TellRenewalUpcoming = { type: 'TellRenewalUpcoming'; data: { subscriptionId: string; now: Date } };

/** The merchant cancels: at the end of the paid period (default), or now. */
export type CancelSubscription = { type: 'CancelSubscription'; data: Who & { atPeriodEnd: boolean } };

/** The merchant undoes a pending end-of-period cancellation. */
export type ResumeSubscription = { type: 'ResumeSubscription'; data: Who };

/** `current_period_end` has come for a subscription canceled at period end: it ends. */
export type EndCanceledPeriod = { type: 'EndCanceledPeriod'; data: { subscriptionId: string; now: Date } };

/** The renewal invoice of the period that starts at `periodStart` was paid: the period advances. */
export type RenewPaid = {
  type: 'RenewPaid';
  data: { subscriptionId: string; periodStart: string; invoiceId: string; now: Date };
};

/** A renewal charge failed: the subscription is PAST_DUE while dunning retries. */
export type MarkPastDue = { type: 'MarkPastDue'; data: { subscriptionId: string; invoiceId: string; now: Date } };

/** The last retry failed: the subscription ends. */
export type CancelForNonPayment = { type: 'CancelForNonPayment'; data: { subscriptionId: string; now: Date } };

export type SubscriptionCommand =
  | StartSubscription
  | RecordDuplicatePayment
  | EndTrial
  | TellTrialWillEnd
  | TellRenewalUpcoming
  | CancelSubscription
  | ResumeSubscription
  | EndCanceledPeriod
  | RenewPaid
  | MarkPastDue
  | CancelForNonPayment;

export function decide(command: SubscriptionCommand, state: SubscriptionState): SubscriptionEvent[] {
  switch (command.type) {
    case 'StartSubscription':
      return start(command, state);
    case 'RecordDuplicatePayment':
      return duplicate(command, state);
    case 'EndTrial':
      return endTrial(command, state);
    case 'TellTrialWillEnd':
      if (state.status === 'Empty') return [];
      return trialWillEnd(state.subscription, state.trialWillEndSentFor, command.data.now);
    case 'TellRenewalUpcoming':
      if (state.status === 'Empty') return [];
      return renewalUpcoming(state.subscription, state.renewalUpcomingSentFor, command.data.now);
    case 'CancelSubscription':
      return cancel(command, state);
    case 'ResumeSubscription':
      return resume(command, state);
    case 'EndCanceledPeriod':
      return endCanceledPeriod(command, state);
    case 'RenewPaid':
      return renewPaid(command, state);
    case 'MarkPastDue':
      return markPastDue(command, state);
    case 'CancelForNonPayment': {
      if (state.status === 'Empty' || state.subscription.status === 'CANCELED') return [];
      return [canceled(state.subscription, command.data.now.toISOString(), 'payment_failed')];
    }
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

/**
 * TRIAL with `trial_end` when the plan has trial days, otherwise ACTIVE. The first period
 * starts now and ends one plan interval later (calendar rule in `calendar/period.ts`),
 * whether or not a trial runs; the trial end is its own field.
 */
function start({ data }: StartSubscription, state: SubscriptionState): SubscriptionEvent[] {
  if (state.status !== 'Empty') throw conflict(`Subscription ${data.subscriptionId} already exists`);
  const { plan, now } = data;
  const at = now.toISOString();
  const { trial, periodEndsAt, anchor } = firstPeriod(data);
  const subscription: Subscription = {
    object: 'subscription',
    id: data.subscriptionId,
    customer_id: data.customerId,
    product: { id: plan.id, name: plan.name, slug: plan.slug },
    status: trial ? 'TRIAL' : 'ACTIVE',
    price: plan.price,
    currency: 'TWD',
    interval: plan.interval,
    interval_count: plan.interval_count,
    current_period_start: at,
    current_period_end: periodEndsAt.toISOString(),
    trial_end: trial ? trial.toISOString() : null,
    cancel_at_period_end: false,
    canceled_at: null,
    checkout_session_id: data.checkoutSessionId,
    test_clock: data.testClock ?? null,
    billing_cycle_anchor: anchor.toISOString(),
    discount: data.coupon ? { ...data.coupon, starts_at: anchor.toISOString() } : null,
    ...allowanceField(plan.credits),
    ...meteredPricesField(plan.metered_prices),
    created_at: at,
    updated_at: at,
    livemode: livemodeOf(data.environment),
  };
  return [
    {
      type: 'SubscriptionActivated',
      data: {
        subscription_id: data.subscriptionId,
        organization: data.organization,
        environment: data.environment,
        checkout_session_id: data.checkoutSessionId,
        order_id: data.orderId,
        object: subscription,
      },
    },
    // A trial shorter than the notice is told at once, as Stripe does.
    ...trialWillEnd(subscription, undefined, now),
  ];
}

/** Stripe's notice: 3 days before `trial_end`. */
export const TRIAL_WILL_END_NOTICE_MS = 3 * 24 * 3600 * 1000;

/**
 * `subscription.trial_will_end` for a TRIAL subscription whose trial ends within the notice,
 * before it ends, unless it was sent for this `trial_end` already.
 */
function trialWillEnd(subscription: Subscription, sentFor: string | undefined, now: Date): SubscriptionEvent[] {
  const { trial_end: end } = subscription;
  if (subscription.status !== 'TRIAL' || !end || sentFor === end) return [];
  const endsAt = Date.parse(end);
  if (now.getTime() < endsAt - TRIAL_WILL_END_NOTICE_MS || now.getTime() >= endsAt) return [];
  return [
    {
      type: 'SubscriptionTrialWillEnd',
      data: { subscription_id: subscription.id, trial_end: end, object: subscription },
    },
  ];
}

/** An upcoming yearly renewal is told 7 days before it (Stripe's default notice for yearly plans). */
export const RENEWAL_UPCOMING_NOTICE_MS = 7 * 24 * 3600 * 1000;

/**
 * `subscription.renewal_upcoming` for an ACTIVE yearly subscription that will renew (not
 * canceling) within the notice, before the period ends, unless it was sent for this period.
 */
function renewalUpcoming(subscription: Subscription, sentFor: string | undefined, now: Date): SubscriptionEvent[] {
  const end = subscription.current_period_end;
  if (subscription.status !== 'ACTIVE' || subscription.interval !== 'year' || subscription.cancel_at_period_end)
    return [];
  if (sentFor === end) return [];
  const endsAt = Date.parse(end);
  if (now.getTime() < endsAt - RENEWAL_UPCOMING_NOTICE_MS || now.getTime() >= endsAt) return [];
  return [
    {
      type: 'SubscriptionRenewalUpcoming',
      data: { subscription_id: subscription.id, renews_at: end, object: subscription },
    },
  ];
}

/**
 * A free trial sold at checkout is the first period: it ends at `trial_end`, and paid periods
 * are counted from there. Without one, the first (paid) period starts now. An older checkout's
 * trial (no `trialDays`) ran inside the paid first period.
 */
function firstPeriod({ plan, now, trialDays }: StartSubscription['data']) {
  if (trialDays !== undefined) {
    const trial = trialDays > 0 ? trialEnd(now, trialDays) : null;
    const anchor = trial ?? now;
    return { trial, anchor, periodEndsAt: trial ?? periodEnd(now, plan.interval, plan.interval_count) };
  }
  const trial = plan.trial_days !== null && plan.trial_days > 0 ? trialEnd(now, plan.trial_days) : null;
  return { trial, anchor: now, periodEndsAt: periodEnd(now, plan.interval, plan.interval_count) };
}

/** Another organization's or environment's subscription is absent to the caller. */
function existing(state: SubscriptionState, who: Who): Subscription {
  if (state.status === 'Empty' || state.organization !== who.organization || state.environment !== who.environment) {
    throw notFound(`No such subscription: ${who.subscriptionId}`);
  }
  return state.subscription;
}

function duplicate({ data }: RecordDuplicatePayment, state: SubscriptionState): SubscriptionEvent[] {
  const subscription = existing(state, data);
  if (!LIVE_SUBSCRIPTION_STATUSES.includes(subscription.status)) {
    throw conflict(`Subscription ${subscription.id} is ${subscription.status}, not live`);
  }
  return [
    {
      type: 'DuplicateSubscriptionPaid',
      data: {
        checkout_session_id: data.checkoutSessionId,
        order_id: data.orderId,
        customer_id: data.customerId,
        product_id: data.productId,
        amount_total: data.amountTotal,
        existing_subscription_id: subscription.id,
        status: subscription.status,
        detected_at: data.now.toISOString(),
      },
    },
  ];
}

/**
 * The first period was paid at checkout, so the end of the trial charges nothing: the status
 * becomes ACTIVE and the period stays. Not in TRIAL, or before `trial_end`: nothing to do.
 */
function endTrial({ data }: EndTrial, state: SubscriptionState): SubscriptionEvent[] {
  if (state.status === 'Empty') throw notFound(`No such subscription: ${data.subscriptionId}`);
  const { subscription } = state;
  if (subscription.status !== 'TRIAL' || !subscription.trial_end) return [];
  // A trial that is the first period ends with its renewal, which charges the first invoice.
  if (Date.parse(subscription.trial_end) >= Date.parse(subscription.current_period_end)) return [];
  if (data.now.getTime() < Date.parse(subscription.trial_end)) return [];
  return [
    {
      type: 'SubscriptionUpdated',
      data: {
        subscription_id: subscription.id,
        object: { ...subscription, status: 'ACTIVE', updated_at: data.now.toISOString() },
      },
    },
  ];
}

/**
 * At period end: `cancel_at_period_end` is set and the subscription keeps its access until
 * `current_period_end`. Now: CANCELED at once, nothing refunded. Asking again for what is
 * already so changes nothing; a CANCELED subscription is `409`.
 */
function cancel({ data }: CancelSubscription, state: SubscriptionState): SubscriptionEvent[] {
  const subscription = existing(state, data);
  if (subscription.status === 'CANCELED') throw conflict(`Subscription ${subscription.id} is canceled already`);
  const at = data.now.toISOString();
  if (!data.atPeriodEnd) return [canceled(subscription, at, 'requested')];
  if (subscription.cancel_at_period_end) return [];
  // As Stripe: `canceled_at` is when the cancellation was asked for, even one at period end.
  return [updated({ ...subscription, cancel_at_period_end: true, canceled_at: at, updated_at: at })];
}

function resume({ data }: ResumeSubscription, state: SubscriptionState): SubscriptionEvent[] {
  const subscription = existing(state, data);
  if (subscription.status === 'CANCELED') throw conflict(`Subscription ${subscription.id} is canceled already`);
  if (!subscription.cancel_at_period_end) return [];
  return [
    updated({ ...subscription, cancel_at_period_end: false, canceled_at: null, updated_at: data.now.toISOString() }),
  ];
}

/** Idempotent: not canceling, canceled already, or before `current_period_end`: nothing to do. */
function endCanceledPeriod({ data }: EndCanceledPeriod, state: SubscriptionState): SubscriptionEvent[] {
  if (state.status === 'Empty') return [];
  const { subscription } = state;
  if (subscription.status === 'CANCELED' || !subscription.cancel_at_period_end) return [];
  if (data.now.getTime() < Date.parse(subscription.current_period_end)) return [];
  return [canceled(subscription, subscription.current_period_end, 'period_end', subscription.canceled_at)];
}

/**
 * Enters the next period, ACTIVE (a trial or PAST_DUE ends with the payment). Only the period
 * the invoice was for moves: a renewal recorded already changes nothing.
 */
function renewPaid({ data }: RenewPaid, state: SubscriptionState): SubscriptionEvent[] {
  if (state.status === 'Empty') return [];
  const { subscription } = state;
  if (subscription.status === 'CANCELED' || subscription.current_period_end !== data.periodStart) return [];
  const object: Subscription = {
    ...subscription,
    status: 'ACTIVE',
    current_period_start: data.periodStart,
    current_period_end: nextPeriodEndOf(subscription),
    // The invoice of this renewal billed the usage up to the new period's start.
    ...(subscription.usage_since != null && { usage_since: null }),
    updated_at: data.now.toISOString(),
  };
  return [
    { type: 'SubscriptionRenewed', data: { subscription_id: subscription.id, invoice_id: data.invoiceId, object } },
  ];
}

function markPastDue({ data }: MarkPastDue, state: SubscriptionState): SubscriptionEvent[] {
  if (state.status === 'Empty') return [];
  const { subscription } = state;
  if (subscription.status === 'PAST_DUE' || subscription.status === 'CANCELED') return [];
  const object: Subscription = { ...subscription, status: 'PAST_DUE', updated_at: data.now.toISOString() };
  return [
    { type: 'SubscriptionPastDue', data: { subscription_id: subscription.id, invoice_id: data.invoiceId, object } },
  ];
}

/** Counted from the anchor (the first period's start), as `calendar/period.ts` says: 31 Jan, 28 Feb, 31 Mar. */
export function nextPeriodEndOf(subscription: Subscription): string {
  const { billing_cycle_anchor, created_at, interval, interval_count, current_period_end } = subscription;
  const anchor = new Date(billing_cycle_anchor ?? created_at);
  return nextPeriodEnd(anchor, interval, interval_count, new Date(current_period_end)).toISOString();
}

const updated = (subscription: Subscription): SubscriptionEvent => ({
  type: 'SubscriptionUpdated',
  data: { subscription_id: subscription.id, object: subscription },
});

function canceled(
  subscription: Subscription,
  at: string,
  reason: 'requested' | 'period_end' | 'payment_failed',
  askedAt: string | null = at,
): SubscriptionEvent {
  const object: Subscription = {
    ...subscription,
    status: 'CANCELED',
    cancel_at_period_end: false,
    canceled_at: askedAt ?? at,
    updated_at: at,
  };
  return { type: 'SubscriptionCanceled', data: { subscription_id: subscription.id, reason, object } };
}
