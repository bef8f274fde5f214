import { type SqlExecutor, handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { type SubscriptionCommand, subscriptionAggregate } from './decide';
import { type ClockScope, type DueSubscription, findEndedCanceledPeriods, findEndedTrials } from './queries';
import { projectSubscriptions } from './read-model';
import { subscriptionStream } from './subscription';

/** One kind of work that falls due at a time: what finds it, and the command that does it. */
interface DueWork {
  what: string;
  find: (sql: SqlExecutor, schema: string, by: Date, clock: ClockScope, limit?: number) => Promise<DueSubscription[]>;
  command: (subscriptionId: string, now: Date) => SubscriptionCommand;
}

/** Every kind of time-driven change of a subscription. */
export const DUE_WORK: readonly DueWork[] = [
  {
    what: 'ending a trial',
    find: findEndedTrials,
    command: (subscriptionId, now) => ({ type: 'EndTrial', data: { subscriptionId, now } }),
  },
  {
    what: 'ending a canceled period',
    find: findEndedCanceledPeriods,
    command: (subscriptionId, now) => ({ type: 'EndCanceledPeriod', data: { subscriptionId, now } }),
  },
];

/**
 * Runs one kind of work on one due subscription, at `at`. Safe to run concurrently and again:
 * each decider ignores a subscription that is no longer due. True when it changed something.
 */
export async function runDueItem(context: ServiceContext, work: DueWork, item: DueSubscription, at: Date) {
  const { store } = context;
  const { schema } = store.tables;
  const { events } = await handleCommand(
    store,
    subscriptionStream(item.id),
    subscriptionAggregate,
    work.command(item.id, at),
    {
      organization: item.organization,
      environment: item.environment,
      occurredAt: at,
      project: (tx, e) => projectSubscriptions(tx, schema, e),
    },
  );
  return events.length > 0;
}

/**
 * The real-time sweep: everything due by the service clock on subscriptions that are on no
 * test clock. A failure is logged and left to the next sweep. Returns the ids it changed.
 */
export async function runDueWork(context: ServiceContext): Promise<string[]> {
  const { store, now, logger } = context;
  const changed: string[] = [];
  for (const work of DUE_WORK) {
    for (const item of await work.find(store.database, store.tables.schema, now(), null)) {
      try {
        if (await runDueItem(context, work, item, now())) changed.push(item.id);
      } catch (err) {
        logger.error({ err, id: item.id }, `${work.what} failed; the next sweep retries`);
      }
    }
  }
  return changed;
}
