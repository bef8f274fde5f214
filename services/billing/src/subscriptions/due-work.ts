import { type SqlExecutor, handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { findDueRetries } from '../invoices/read-model';
import { renewDue } from '../renewals/renew';
import { type SubscriptionCommand, subscriptionAggregate } from './decide';
import {
  type ClockScope,
  type DueSubscription,
  findDueRenewals,
  findEndedCanceledPeriods,
  findEndedTrials,
} from './queries';
import { projectSubscriptions } from './read-model';
import { subscriptionStream } from './subscription';

/**
 * One kind of work that falls due at a time: what finds it, and what does it at `at`. Safe to
 * run concurrently and again: nothing is done for a subscription that is no longer due. `run`
 * answers whether it changed something.
 */
interface DueWork {
  what: string;
  find: (sql: SqlExecutor, schema: string, by: Date, clock: ClockScope, limit?: number) => Promise<DueSubscription[]>;
  run: (context: ServiceContext, item: DueSubscription, at: Date) => Promise<boolean>;
}

/** A due change that is one command on the subscription. */
const command =
  (make: (subscriptionId: string, now: Date) => SubscriptionCommand) =>
  async (context: ServiceContext, item: DueSubscription, at: Date): Promise<boolean> => {
    const { store } = context;
    const { events } = await handleCommand(
      store,
      subscriptionStream(item.id),
      subscriptionAggregate,
      make(item.id, at),
      {
        organization: item.organization,
        environment: item.environment,
        occurredAt: at,
        project: (tx, e) => projectSubscriptions(tx, store.tables.schema, e),
      },
    );
    return events.length > 0;
  };

/** Every kind of time-driven change of a subscription, in the order they are tried at one instant. */
export const DUE_WORK: readonly DueWork[] = [
  {
    what: 'ending a trial',
    find: findEndedTrials,
    run: command((subscriptionId, now) => ({ type: 'EndTrial', data: { subscriptionId, now } })),
  },
  {
    what: 'ending a canceled period',
    find: findEndedCanceledPeriods,
    run: command((subscriptionId, now) => ({ type: 'EndCanceledPeriod', data: { subscriptionId, now } })),
  },
  { what: 'renewing', find: findDueRenewals, run: renewDue },
  { what: 'retrying a failed renewal', find: findDueRetries, run: renewDue },
];

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
        if (await work.run(context, item, now())) changed.push(item.id);
      } catch (err) {
        logger.error({ err, id: item.id }, `${work.what} failed; the next sweep retries`);
      }
    }
  }
  return changed;
}
