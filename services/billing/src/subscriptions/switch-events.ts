import type {
  SubscriptionSchedule,
  SubscriptionScheduleEventData,
  SubscriptionSwitchEndedData,
  SubscriptionSwitchStartedData,
} from '@billing/contracts';

// Plan switching's events on the subscription's stream (`subscription-<id>`): the one pending
// schedule and the immediate switch in progress live with the subscription, so that its stream
// version orders switches, schedules and renewals.

export type SubscriptionSwitchStarted = { type: 'SubscriptionSwitchStarted'; data: SubscriptionSwitchStartedData };
export type SubscriptionSwitchEnded = { type: 'SubscriptionSwitchEnded'; data: SubscriptionSwitchEndedData };
export type SubscriptionScheduleCreated = { type: 'SubscriptionScheduleCreated'; data: SubscriptionScheduleEventData };
export type SubscriptionScheduleCanceled = {
  type: 'SubscriptionScheduleCanceled';
  data: SubscriptionScheduleEventData;
};
export type SubscriptionScheduleCompleted = {
  type: 'SubscriptionScheduleCompleted';
  data: SubscriptionScheduleEventData;
};
export type SwitchingEvent =
  | SubscriptionSwitchStarted
  | SubscriptionSwitchEnded
  | SubscriptionScheduleCreated
  | SubscriptionScheduleCanceled
  | SubscriptionScheduleCompleted;

/** What a subscription's state holds for switching (absent on subscriptions that never switched). */
export type SwitchingState = {
  /** The pending schedule, or null. */
  schedule?: SubscriptionSchedule | null;
  /** The immediate switch whose charge is under way, or null. */
  switching?: SubscriptionSwitchStartedData | null;
};

export function evolveSwitching(state: SwitchingState, event: SwitchingEvent): SwitchingState {
  switch (event.type) {
    case 'SubscriptionSwitchStarted':
      return { ...state, switching: event.data };
    case 'SubscriptionSwitchEnded':
      return { ...state, switching: null };
    case 'SubscriptionScheduleCreated':
      return { ...state, schedule: event.data.object };
    case 'SubscriptionScheduleCanceled':
    case 'SubscriptionScheduleCompleted':
      return { ...state, schedule: null };
  }
}
