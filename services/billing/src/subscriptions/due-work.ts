import { type SqlExecutor, handleCommand } from '@billing/eventstore';
import { type ServiceContext, positiveNumberSetting } from '@billing/runtime';
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
 * How many subscriptions the due work of one sweep or one test-clock advance handles at once
 * (`BILLING_DUE_WORK_CONCURRENCY`, default 16). One subscription's items still run one after
 * the other, in the order given.
 */
export const DEFAULT_DUE_WORK_CONCURRENCY = 16;

export function dueWorkConcurrency(context: ServiceContext): number {
  return Math.floor(
    positiveNumberSetting(context.config, 'BILLING_DUE_WORK_CONCURRENCY', DEFAULT_DUE_WORK_CONCURRENCY),
  );
}

/**
 * Runs `run` for every item, up to `concurrency` subscriptions at a time; the items of one
 * subscription in their order, one after the other. Settles every started item; returns the
 * failures (each with its item).
 */
export async function forEachSubscription<T extends { item: DueSubscription }>(
  items: readonly T[],
  concurrency: number,
  run: (entry: T) => Promise<void>,
): Promise<Array<{ entry: T; error: unknown }>> {
  const bySubscription = new Map<string, T[]>();
  for (const entry of items) {
    const queue = bySubscription.get(entry.item.id);
    if (queue) queue.push(entry);
    else bySubscription.set(entry.item.id, [entry]);
  }
  const queues = [...bySubscription.values()];
  const failures: Array<{ entry: T; error: unknown }> = [];
  let next = 0;
  const worker = async () => {
    while (next < queues.length) {
      const queue = queues[next++]!;
      for (const entry of queue) {
        try {
          await run(entry);
        } catch (error) {
          failures.push({ entry, error });
          break; // the rest of this subscription's items wait for the next run
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queues.length) }, worker));
  return failures;
}

/**
 * The real-time sweep: everything due by the service clock on subscriptions that are on no
 * test clock, kind by kind, up to `BILLING_DUE_WORK_CONCURRENCY` subscriptions at a time. A
 * failure is logged and left to the next sweep. Returns the ids it changed.
 */
export async function runDueWork(context: ServiceContext): Promise<string[]> {
  const { store, now, logger } = context;
  const changed: string[] = [];
  const concurrency = dueWorkConcurrency(context);
  for (const work of DUE_WORK) {
    const items = await work.find(store.database, store.tables.schema, now(), null);
    const failures = await forEachSubscription(
      items.map((item) => ({ item })),
      concurrency,
      async ({ item }) => {
        if (await work.run(context, item, now())) changed.push(item.id);
      },
    );
    for (const { entry, error } of failures) {
      logger.error({ err: error, id: entry.item.id }, `${work.what} failed; the next sweep retries`);
    }
  }
  return changed;
}
