import type {
  DuplicateSubscriptionPaidData,
  Environment,
  Subscription,
  SubscriptionActivatedData,
  SubscriptionCanceledData,
  SubscriptionPastDueData,
  SubscriptionRenewedData,
  SubscriptionRenewalUpcomingData,
  SubscriptionTrialWillEndData,
  SubscriptionUpdatedData,
} from '@billing/contracts';
import type { SwitchingEvent, SwitchingState } from './switch-events';
import { evolveSwitching } from './switch-events';
import { streamEvents } from '@billing/eventstore';

export const subscriptionStream = (subscriptionId: string) => `subscription-${subscriptionId}`;

export type SubscriptionActivated = { type: 'SubscriptionActivated'; data: SubscriptionActivatedData };
export type SubscriptionUpdated = { type: 'SubscriptionUpdated'; data: SubscriptionUpdatedData };
export type SubscriptionCanceled = { type: 'SubscriptionCanceled'; data: SubscriptionCanceledData };
export type SubscriptionRenewed = { type: 'SubscriptionRenewed'; data: SubscriptionRenewedData };
export type SubscriptionPastDue = { type: 'SubscriptionPastDue'; data: SubscriptionPastDueData };
export type SubscriptionTrialWillEnd = { type: 'SubscriptionTrialWillEnd'; data: SubscriptionTrialWillEndData };
export type SubscriptionRenewalUpcoming = {
  type: 'SubscriptionRenewalUpcoming';
  data: SubscriptionRenewalUpcomingData;
};
export type DuplicateSubscriptionPaid = { type: 'DuplicateSubscriptionPaid'; data: DuplicateSubscriptionPaidData };
export type SubscriptionEvent =
  | SubscriptionActivated
  | SubscriptionUpdated
  | SubscriptionCanceled
  | SubscriptionRenewed
  | SubscriptionPastDue
  | SubscriptionTrialWillEnd
  | SubscriptionRenewalUpcoming
  | DuplicateSubscriptionPaid
  | SwitchingEvent;

/** The events of a subscription's stream, plan switching's included (switch-events.ts). */
export const subscriptionEvents = streamEvents<SubscriptionEvent>({
  SubscriptionActivated: true,
  SubscriptionUpdated: true,
  SubscriptionCanceled: true,
  SubscriptionRenewed: true,
  SubscriptionPastDue: true,
  SubscriptionTrialWillEnd: true,
  SubscriptionRenewalUpcoming: true,
  DuplicateSubscriptionPaid: true,
  SubscriptionSwitchStarted: true,
  SubscriptionSwitchEnded: true,
  SubscriptionScheduleCreated: true,
  SubscriptionScheduleCanceled: true,
  SubscriptionScheduleCompleted: true,
});

export type SubscriptionState =
  | { status: 'Empty' }
  | ({
      status: 'Existing';
      organization: string;
      environment: Environment;
      subscription: Subscription;
      /** The `trial_end` that `subscription.trial_will_end` was sent for (once per trial). */
      trialWillEndSentFor?: string;
      /** The period end that `subscription.renewal_upcoming` was sent for (once per period). */
      renewalUpcomingSentFor?: string;
    } & SwitchingState);

/**
 * Version of this module's `evolve` and state shape for snapshots (docs/decisions/0010-snapshots.md):
 * bump it whenever either changes, so snapshots folded by the old `evolve` are ignored. The state
 * must stay plain JSON (strings, finite numbers, booleans, null, arrays, plain objects).
 * Shared by every decider of the subscription stream (`decide.ts`, `switch-decide.ts`): they fold with this `evolve`.
 */
export const SUBSCRIPTION_SNAPSHOT_VERSION = 1;

export const initialState = (): SubscriptionState => ({ status: 'Empty' });

export function evolve(state: SubscriptionState, event: SubscriptionEvent): SubscriptionState {
  switch (event.type) {
    case 'SubscriptionActivated': {
      const { organization, environment, object } = event.data;
      return { status: 'Existing', organization, environment, subscription: object };
    }
    case 'SubscriptionUpdated':
    case 'SubscriptionCanceled':
    case 'SubscriptionRenewed':
    case 'SubscriptionPastDue':
      if (state.status === 'Empty') return state;
      return { ...state, subscription: event.data.object };
    case 'SubscriptionTrialWillEnd':
      if (state.status === 'Empty') return state;
      return { ...state, trialWillEndSentFor: event.data.trial_end };
    case 'SubscriptionRenewalUpcoming':
      if (state.status === 'Empty') return state;
      return { ...state, renewalUpcomingSentFor: event.data.renews_at };
    case 'DuplicateSubscriptionPaid':
      // A record for checkout's refund; the subscription itself is unchanged.
      return state;
    case 'SubscriptionSwitchStarted':
    case 'SubscriptionSwitchEnded':
    case 'SubscriptionScheduleCreated':
    case 'SubscriptionScheduleCanceled':
    case 'SubscriptionScheduleCompleted':
      // Plan switching (switch-events.ts): the pending schedule and the switch in progress.
      return state.status === 'Empty' ? state : { ...state, ...evolveSwitching(state, event) };
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}
