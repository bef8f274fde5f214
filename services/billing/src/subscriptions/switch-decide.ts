import {
  type Environment,
  type ScheduledPlan,
  type Subscription,
  type SubscriptionSchedule,
  type SubscriptionSwitchStartedData,
  ApiError,
  conflict,
  livemodeOf,
  notFound,
} from '@billing/contracts';
import { periodEnd } from '../calendar/period';
import { allowanceField } from './allowance';
import { meteredPricesField, usageSinceAcrossNewPeriod } from './metered';
import type { SubscriptionEvent, SubscriptionState } from './subscription';
import type { SwitchType } from '../proration/classify';

// Switching's commands on the subscription's stream, decided on its history, so that two
// switches, a switch and a schedule, or a switch and a renewal are ordered by its version.

type Who = { subscriptionId: string; organization: string; environment: Environment; now: Date };

/** An immediate switch that charges: holds the subscription while its card is charged. */
export type StartSwitch = {
  type: 'StartSwitch';
  data: Who & {
    switchId: string;
    invoiceId: string;
    target: ScheduledPlan;
    amount: number;
    /** The period the preview was computed for: a renewal since then is a conflict. */
    periodStart: string;
    /** What recording the switch needs (kept with the hold for `settleHeldSwitch`). */
    recording: NonNullable<SubscriptionSwitchStartedData['recording']>;
    /** Real time, not the subscription's clock: how long the hold has lasted is measured from it. */
    heldAt: Date;
  };
};

/**
 * Changes the plan now: `newPeriod` starts a period of the new plan at `now` (a prorated
 * switch); otherwise the period goes on (crossgrade, trial, deferred, `none`). With
 * `switchId`, it ends the switch that `StartSwitch` began.
 */
export type SwitchPlanNow = {
  type: 'SwitchPlanNow';
  data: Who & { switchId: string | null; target: ScheduledPlan; newPeriod: boolean; periodStart: string };
};

/** The charge of a started switch was declined: the subscription is as it was. */
export type FailSwitch = {
  type: 'FailSwitch';
  data: Who & { switchId: string; failure: { code: string; message: string } };
};

/** A switch at the end of the period: the subscription's one pending schedule. */
export type ScheduleSwitch = {
  type: 'ScheduleSwitch';
  data: Who & { scheduleId: string; target: ScheduledPlan; switchType: SwitchType; periodStart: string };
};

export type CancelSchedule = { type: 'CancelSchedule'; data: Who };

/** The schedule's effective date has come: the plan changes, the renewal that follows bills it. */
export type ApplySchedule = { type: 'ApplySchedule'; data: { subscriptionId: string; now: Date } };

export type SwitchingCommand =
  StartSwitch | SwitchPlanNow | FailSwitch | ScheduleSwitch | CancelSchedule | ApplySchedule;

type Existing = Extract<SubscriptionState, { status: 'Existing' }>;

export function decideSwitching(command: SwitchingCommand, state: SubscriptionState): SubscriptionEvent[] {
  switch (command.type) {
    case 'StartSwitch': {
      const { data } = command;
      const current = switchable(state, data);
      return [
        {
          type: 'SubscriptionSwitchStarted',
          data: {
            subscription_id: current.subscription.id,
            switch_id: data.switchId,
            invoice_id: data.invoiceId,
            target_plan: data.target,
            amount: data.amount,
            recording: data.recording,
            started_at: data.now.toISOString(),
            held_at: data.heldAt.toISOString(),
          },
        },
      ];
    }
    case 'SwitchPlanNow': {
      const { data } = command;
      const current = data.switchId ? held(state, data, data.switchId) : switchable(state, data);
      const at = data.now.toISOString();
      const next = withPlan(current.subscription, data.target, at);
      if (data.newPeriod) {
        Object.assign(next, usageSinceAcrossNewPeriod(current.subscription));
        next.current_period_start = at;
        next.current_period_end = periodEnd(data.now, data.target.interval, data.target.interval_count).toISOString();
        next.billing_cycle_anchor = at;
      }
      const updated = updatedWithPrevious(current.subscription, next);
      // A new period that starts at the instant the old one did is a new period all the same: said
      // so, for its allowance (allowance.ts), by the start it replaces.
      if (data.newPeriod && updated.type === 'SubscriptionUpdated' && updated.data.previous_attributes) {
        updated.data.previous_attributes.current_period_start ??= current.subscription.current_period_start;
      }
      const events: SubscriptionEvent[] = [updated];
      if (data.switchId) events.push(ended(current.subscription.id, data.switchId, 'switched', null, at));
      return events;
    }
    case 'FailSwitch': {
      const { data } = command;
      const current = existing(state, data);
      if (current.switching?.switch_id !== data.switchId) return [];
      return [ended(current.subscription.id, data.switchId, 'declined', data.failure, data.now.toISOString())];
    }
    case 'ScheduleSwitch': {
      const { data } = command;
      const current = switchable(state, data);
      const at = data.now.toISOString();
      const { subscription } = current;
      const schedule: SubscriptionSchedule = {
        object: 'subscription_schedule',
        id: data.scheduleId,
        subscription_id: subscription.id,
        customer_id: subscription.customer_id,
        switch_type: data.switchType,
        current_product_id: subscription.product.id,
        target_product_id: data.target.id,
        target_plan: data.target,
        effective_date: subscription.current_period_end,
        status: 'pending',
        canceled_at: null,
        completed_at: null,
        created_at: at,
        updated_at: at,
        livemode: livemodeOf(current.environment),
      };
      return [scheduleEvent('SubscriptionScheduleCreated', current, schedule)];
    }
    case 'CancelSchedule': {
      const { data } = command;
      const current = existing(state, data);
      if (!current.schedule) throw notFound(`Subscription ${data.subscriptionId} has no pending schedule`);
      return [canceledSchedule(current, data.now.toISOString())];
    }
    case 'ApplySchedule': {
      if (state.status === 'Empty' || !state.schedule) return [];
      const { subscription, schedule } = state;
      const at = command.data.now.toISOString();
      if (command.data.now.getTime() < Date.parse(schedule.effective_date)) return [];
      const live = subscription.status === 'ACTIVE' || subscription.status === 'TRIAL';
      if (!live || subscription.cancel_at_period_end || subscription.current_period_end !== schedule.effective_date) {
        return [canceledSchedule(state, at)];
      }
      const next = withPlan(subscription, schedule.target_plan, at);
      // Periods of the new plan are counted from the schedule's effective date.
      next.billing_cycle_anchor = schedule.effective_date;
      const completed: SubscriptionSchedule = { ...schedule, status: 'completed', completed_at: at, updated_at: at };
      return [
        updatedWithPrevious(subscription, next),
        scheduleEvent('SubscriptionScheduleCompleted', state, completed),
      ];
    }
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

/** Another organization's or environment's subscription is absent to the caller. */
function existing(state: SubscriptionState, who: Who): Existing {
  if (state.status === 'Empty' || state.organization !== who.organization || state.environment !== who.environment) {
    throw notFound(`No such subscription: ${who.subscriptionId}`);
  }
  return state;
}

/**
 * Why the subscription cannot switch now, as the preview's `blocking_reason`, or null: only a
 * live (ACTIVE or TRIAL) subscription that is not canceling, has no pending schedule and no
 * switch under way.
 */
export function blockingReasonOf(state: Existing): string | null {
  const { subscription } = state;
  if (subscription.status === 'PAST_DUE') return 'past_due';
  if (subscription.status === 'CANCELED') return 'canceled';
  if (subscription.cancel_at_period_end) return 'cancel_at_period_end';
  if (state.schedule) return 'pending_schedule';
  if (state.switching) return 'switch_in_progress';
  return null;
}

const BLOCKING_MESSAGES: Record<string, string> = {
  past_due: 'is PAST_DUE: its open invoice must be paid before it can switch',
  canceled: 'is canceled',
  cancel_at_period_end: 'is canceling at the end of its period: resume it before switching',
  pending_schedule: 'has a pending schedule: cancel it before switching again',
  switch_in_progress: 'is switching already',
};

/** The live subscription for the period the caller computed, or `409 conflict` saying why not. */
function switchable(state: SubscriptionState, who: Who & { periodStart: string }): Existing {
  const current = existing(state, who);
  const reason = blockingReasonOf(current);
  if (reason) {
    const details: Record<string, unknown>[] = [{ blocking_reason: reason }];
    if (reason === 'pending_schedule') details[0]!.schedule_id = current.schedule!.id;
    if (reason === 'switch_in_progress') details[0]!.switch_id = current.switching!.switch_id;
    const named = reason === 'pending_schedule' ? ` (${current.schedule!.id})` : '';
    throw conflict(`Subscription ${who.subscriptionId} ${BLOCKING_MESSAGES[reason]}${named}`, details);
  }
  const { subscription } = current;
  if (
    subscription.current_period_start !== who.periodStart ||
    who.now.getTime() >= Date.parse(subscription.current_period_end)
  ) {
    throw conflict(`Subscription ${who.subscriptionId} is renewing: preview the switch again`, [
      { blocking_reason: 'renewing' },
    ]);
  }
  return current;
}

function held(state: SubscriptionState, who: Who, switchId: string): Existing {
  const current = existing(state, who);
  if (current.switching?.switch_id !== switchId) {
    throw new ApiError(409, 'conflict', `Switch ${switchId} of ${who.subscriptionId} is not under way`);
  }
  return current;
}

function withPlan(subscription: Subscription, target: ScheduledPlan, at: string): Subscription {
  return {
    ...subscription,
    product: { id: target.id, name: target.name, slug: target.slug },
    price: target.price,
    interval: target.interval,
    interval_count: target.interval_count,
    // The new plan's allowance is granted from the next period that starts (docs/credits.md).
    ...allowanceField(target.credits, subscription.credit_allowance),
    // Usage is billed at the prices in force when its renewal invoice opens (docs/usage.md).
    ...meteredPricesField(target.metered_prices, subscription.metered_prices),
    updated_at: at,
  };
}

/** `subscription.updated` with `previous_attributes`: the changed fields as they were. */
function updatedWithPrevious(before: Subscription, after: Subscription): SubscriptionEvent {
  const previous: Record<string, unknown> = {};
  for (const key of Object.keys(after) as Array<keyof Subscription>) {
    if (key === 'updated_at') continue;
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) previous[key] = before[key];
  }
  return {
    type: 'SubscriptionUpdated',
    data: { subscription_id: after.id, object: after, previous_attributes: previous },
  };
}

function ended(
  subscriptionId: string,
  switchId: string,
  outcome: 'switched' | 'declined',
  failure: { code: string; message: string } | null,
  at: string,
): SubscriptionEvent {
  return {
    type: 'SubscriptionSwitchEnded',
    data: { subscription_id: subscriptionId, switch_id: switchId, outcome, failure, ended_at: at },
  };
}

function scheduleEvent(
  type: 'SubscriptionScheduleCreated' | 'SubscriptionScheduleCanceled' | 'SubscriptionScheduleCompleted',
  state: Existing,
  schedule: SubscriptionSchedule,
): SubscriptionEvent {
  return {
    type,
    data: {
      subscription_id: schedule.subscription_id,
      organization: state.organization,
      environment: state.environment,
      object: schedule,
    },
  } as SubscriptionEvent;
}

function canceledSchedule(state: Existing, at: string): SubscriptionEvent {
  const schedule = state.schedule!;
  return scheduleEvent('SubscriptionScheduleCanceled', state, {
    ...schedule,
    status: 'canceled',
    canceled_at: at,
    updated_at: at,
  });
}
