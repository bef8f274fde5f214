import { handleCommand } from '@billing/eventstore';
import { type ServiceContext, positiveNumberSetting, startPeriodic } from '@billing/runtime';
import { subscriptionAggregate } from './decide';
import { findEndedTrials } from './queries';
import { projectSubscriptions } from './read-model';
import { subscriptionStream } from './subscription';

export const DEFAULT_TRIAL_SWEEP_INTERVAL_MS = 30_000;

/**
 * Moves every TRIAL subscription past `trial_end` (by the service clock) to ACTIVE, appending
 * `SubscriptionUpdated` (public `subscription.updated`). Safe to run concurrently and again:
 * the decider ignores a subscription no longer in TRIAL. Returns the ids it changed.
 */
export async function endDueTrials(context: ServiceContext): Promise<string[]> {
  const { store, now, logger } = context;
  const { schema } = store.tables;
  const ended: string[] = [];
  for (const { id, organization, environment } of await findEndedTrials(store.database, schema, now())) {
    const at = now();
    try {
      const { events } = await handleCommand(
        store,
        subscriptionStream(id),
        subscriptionAggregate,
        { type: 'EndTrial', data: { subscriptionId: id, now: at } },
        { organization, environment, occurredAt: at, project: (tx, e) => projectSubscriptions(tx, schema, e) },
      );
      if (events.length > 0) ended.push(id);
    } catch (err) {
      logger.error({ err, id }, 'ending a trial failed; the next sweep retries');
    }
  }
  return ended;
}

/** The background sweep: every `BILLING_TRIAL_SWEEP_INTERVAL_MS` (default 30 s). */
export function startTrialSweep(context: ServiceContext): () => Promise<void> {
  const intervalMs = positiveNumberSetting(
    context.config,
    'BILLING_TRIAL_SWEEP_INTERVAL_MS',
    DEFAULT_TRIAL_SWEEP_INTERVAL_MS,
  );
  return startPeriodic(() => endDueTrials(context), intervalMs);
}
