import type { Environment, PaymentProcessorSettings } from '@billing/contracts';
import { type EventStore, defineAggregate } from '@billing/eventstore';
import {
  decide,
  evolve,
  initialState,
  processorSettingsEvents,
  processorSettingsId,
  processorSettingsOf,
  processorSettingsStream,
} from './processor-settings';

/** An organization's payment processor in one environment. No read model: the stream is read. */
export const processorSettingsAggregate = defineAggregate({
  stream: processorSettingsStream,
  events: processorSettingsEvents,
  initialState,
  evolve,
  decide,
});

/** The settings in force, and the credentials sealed as they were stored (null for the simulator). */
export type StoredProcessor = { settings: PaymentProcessorSettings; sealedCredentials: string | null };

export async function storedProcessor(
  store: Pick<EventStore, 'readStream'>,
  organization: string,
  environment: Environment,
): Promise<StoredProcessor> {
  const id = processorSettingsId(organization, environment);
  const state = processorSettingsAggregate.fold(await store.readStream(processorSettingsAggregate.stream(id)));
  return {
    settings: processorSettingsOf(state, organization, environment),
    sealedCredentials: state.status === 'Configured' ? state.sealedCredentials : null,
  };
}

/** The processor settings a session's payment goes by; undefined when nothing is charged. */
export async function processorSettingsFor(
  store: Pick<EventStore, 'readStream'>,
  session: { organization: string; environment: Environment; requires_payment_method: boolean },
): Promise<StoredProcessor | undefined> {
  if (!session.requires_payment_method) return undefined;
  return storedProcessor(store, session.organization, session.environment);
}
