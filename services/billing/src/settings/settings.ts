import {
  type BillingSettings,
  type Environment,
  type UpdateBillingSettingsBody,
  defaultBillingSettings,
} from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export type { BillingSettings } from '@billing/contracts';

/**
 * An organization's billing settings in one environment: one event-sourced aggregate per
 * organization and environment (docs/billing-settings.md). Absent until first changed; it then
 * reads as the defaults.
 */
export const billingSettingsId = (organization: string, environment: Environment) => `${organization}-${environment}`;

/** `billing_settings-<organization>-<environment>`, of the id `billingSettingsId` gives. */
export const billingSettingsStream = (id: string) => `billing_settings-${id}`;

/** The settings after a change, whole. */
export type BillingSettingsUpdated = {
  type: 'BillingSettingsUpdated';
  data: { organization: string; environment: Environment; object: BillingSettings };
};
export type BillingSettingsEvent = BillingSettingsUpdated;

export const billingSettingsEvents = streamEvents<BillingSettingsEvent>({ BillingSettingsUpdated: true });

export type BillingSettingsState = { status: 'Defaults' } | { status: 'Changed'; settings: BillingSettings };

export const initialState = (): BillingSettingsState => ({ status: 'Defaults' });

export function evolve(_state: BillingSettingsState, event: BillingSettingsEvent): BillingSettingsState {
  return { status: 'Changed', settings: event.data.object };
}

/** Applies a partial change; the body was validated (`UpdateBillingSettingsBody`). */
export type UpdateBillingSettings = {
  type: 'UpdateBillingSettings';
  data: { organization: string; environment: Environment; changes: UpdateBillingSettingsBody; now: Date };
};

/** The settings the state stands for; a field added since the last change reads as its default. */
export function settingsOf(
  state: BillingSettingsState,
  organization: string,
  environment: Environment,
): BillingSettings {
  const defaults = defaultBillingSettings(organization, environment);
  return state.status === 'Changed' ? { ...defaults, ...state.settings } : defaults;
}

/** A change that changes nothing records nothing (and keeps `updated_at`). */
export function decide(command: UpdateBillingSettings, state: BillingSettingsState): BillingSettingsEvent[] {
  const { organization, environment, changes, now } = command.data;
  const current = settingsOf(state, organization, environment);
  const next: BillingSettings = {
    ...current,
    dunning: { ...current.dunning, ...changes.dunning },
    proration: { ...current.proration, ...changes.proration },
    // null turns it off; absent keeps it.
    credits_low_balance_threshold:
      changes.credits_low_balance_threshold === undefined
        ? current.credits_low_balance_threshold
        : changes.credits_low_balance_threshold,
    credits_overdraft_limit: changes.credits_overdraft_limit ?? current.credits_overdraft_limit,
  };
  const compared = (s: BillingSettings) =>
    JSON.stringify([s.dunning, s.proration, s.credits_low_balance_threshold, s.credits_overdraft_limit]);
  const same = compared(next) === compared(current);
  if (same) return [];
  return [
    {
      type: 'BillingSettingsUpdated',
      data: { organization, environment, object: { ...next, updated_at: now.toISOString() } },
    },
  ];
}
