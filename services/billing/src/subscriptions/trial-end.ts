import { handleCommand } from '@billing/eventstore';
import { type ServiceContext, positiveNumberSetting, startPeriodic } from '@billing/runtime';
import { type SubscriptionCommand, subscriptionAggregate } from './decide';
import { findEndedCanceledPeriods, findEndedTrials } from './queries';
import { projectSubscriptions } from './read-model';
import { subscriptionStream } from './subscription';

export const DEFAULT_TRIAL_SWEEP_INTERVAL_MS = 30_000;

type Due = { id: string; organization: string; environment: 'SANDBOX' | 'PRODUCTION' };

/**
 * Runs a time-driven command on every due subscription (by the service clock). Safe to run
 * concurrently and again: each decider ignores a subscription that is no longer due. Returns
 * the ids it changed; a failure is logged and left to the next sweep.
 */
async function runDue(
  context: ServiceContext,
  due: Due[],
  command: (id: string, now: Date) => SubscriptionCommand,
  what: string,
): Promise<string[]> {
  const { store, now, logger } = context;
  const { schema } = store.tables;
  const changed: string[] = [];
  for (const { id, organization, environment } of due) {
    const at = now();
    try {
      const { events } = await handleCommand(store, subscriptionStream(id), subscriptionAggregate, command(id, at), {
        organization,
        environment,
        occurredAt: at,
        project: (tx, e) => projectSubscriptions(tx, schema, e),
      });
      if (events.length > 0) changed.push(id);
    } catch (err) {
      logger.error({ err, id }, `${what} failed; the next sweep retries`);
    }
  }
  return changed;
}

/** TRIAL subscriptions past `trial_end` go on as ACTIVE (`subscription.updated`). */
export async function endDueTrials(context: ServiceContext): Promise<string[]> {
  const due = await findEndedTrials(context.store.database, context.store.tables.schema, context.now());
  return runDue(
    context,
    due,
    (subscriptionId, now) => ({ type: 'EndTrial', data: { subscriptionId, now } }),
    'ending a trial',
  );
}

/** Subscriptions canceled at period end become CANCELED at `current_period_end` (`subscription.canceled`). */
export async function endCanceledPeriods(context: ServiceContext): Promise<string[]> {
  const due = await findEndedCanceledPeriods(context.store.database, context.store.tables.schema, context.now());
  return runDue(
    context,
    due,
    (subscriptionId, now) => ({ type: 'EndCanceledPeriod', data: { subscriptionId, now } }),
    'ending a canceled period',
  );
}

/** The background sweep of time-driven changes: every `BILLING_TRIAL_SWEEP_INTERVAL_MS` (default 30 s). */
export function startTrialSweep(context: ServiceContext): () => Promise<void> {
  const intervalMs = positiveNumberSetting(
    context.config,
    'BILLING_TRIAL_SWEEP_INTERVAL_MS',
    DEFAULT_TRIAL_SWEEP_INTERVAL_MS,
  );
  return startPeriodic(async () => {
    await endDueTrials(context);
    await endCanceledPeriods(context);
  }, intervalMs);
}
