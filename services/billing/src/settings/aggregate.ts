import type { Environment } from '@billing/contracts';
import { type EventStore, type SqlExecutor, defineAggregate } from '@billing/eventstore';
import {
  type BillingSettings,
  billingSettingsEvents,
  billingSettingsId,
  billingSettingsStream,
  decide,
  evolve,
  initialState,
  settingsOf,
} from './settings';

/**
 * An organization's billing settings in one environment, on `billing_settings-<organization>-<environment>`:
 * its id is `billingSettingsId(organization, environment)`. No read model: the stream is read.
 */
export const billingSettingsAggregate = defineAggregate({
  stream: billingSettingsStream,
  events: billingSettingsEvents,
  initialState,
  evolve,
  decide,
});

/**
 * The billing settings of an organization in an environment: its last change, or the defaults
 * (retries 3, 5 and 7 days after the first failure, then cancel; upgrades prorated now,
 * downgrades at period end; no low-balance threshold, no overdraft).
 */
export async function billingSettingsOf(
  store: Pick<EventStore, 'readStream'>,
  organization: string,
  environment: Environment,
): Promise<BillingSettings> {
  const id = billingSettingsId(organization, environment);
  const state = billingSettingsAggregate.fold(await store.readStream(billingSettingsAggregate.stream(id)));
  return settingsOf(state, organization, environment);
}

/** `billingSettingsOf`, read through `sql` (an open transaction: PGlite has one connection). */
export async function billingSettingsIn(
  sql: SqlExecutor,
  store: Pick<EventStore, 'readStreams'>,
  organization: string,
  environment: Environment,
): Promise<BillingSettings> {
  const stream = billingSettingsAggregate.stream(billingSettingsId(organization, environment));
  const events = (await store.readStreams([stream], sql)).get(stream) ?? [];
  return settingsOf(billingSettingsAggregate.fold(events), organization, environment);
}
