import {
  type Environment,
  LIVE_SUBSCRIPTION_STATUSES,
  type ProductInterval,
  type Subscription,
  conflict,
  livemodeOf,
  notFound,
} from '@billing/contracts';
import type { RecordedEvent } from '@billing/eventstore';
import { periodEnd, trialEnd } from '../calendar/period';
import {
  type SubscriptionEvent,
  type SubscriptionState,
  asSubscriptionEvent,
  evolve,
  initialState,
} from './subscription';

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
};

/** A paid SUBSCRIPTION-mode checkout starts the subscription. */
export type StartSubscription = {
  type: 'StartSubscription';
  data: Who & { customerId: string; plan: PlanFacts; checkoutSessionId: string | null; orderId: string | null };
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

export type SubscriptionCommand = StartSubscription | RecordDuplicatePayment | EndTrial;

export function decide(command: SubscriptionCommand, state: SubscriptionState): SubscriptionEvent[] {
  switch (command.type) {
    case 'StartSubscription':
      return start(command, state);
    case 'RecordDuplicatePayment':
      return duplicate(command, state);
    case 'EndTrial':
      return endTrial(command, state);
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
  const trial = plan.trial_days !== null && plan.trial_days > 0 ? trialEnd(now, plan.trial_days) : null;
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
    current_period_end: periodEnd(now, plan.interval, plan.interval_count).toISOString(),
    trial_end: trial ? trial.toISOString() : null,
    cancel_at_period_end: false,
    canceled_at: null,
    checkout_session_id: data.checkoutSessionId,
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
  ];
}

function duplicate({ data }: RecordDuplicatePayment, state: SubscriptionState): SubscriptionEvent[] {
  if (state.status === 'Empty' || state.organization !== data.organization || state.environment !== data.environment) {
    throw notFound(`No such subscription: ${data.subscriptionId}`);
  }
  const { subscription } = state;
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

export const subscriptionDecider = { initialState, evolve, decide };

export const subscriptionAggregate = {
  initialState,
  evolve: (state: SubscriptionState, event: RecordedEvent) => evolve(state, asSubscriptionEvent(event)),
  decide,
};
