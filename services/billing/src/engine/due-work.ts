import type { SqlExecutor } from '@billing/eventstore';
import { type ServiceContext, positiveNumberSetting } from '@billing/runtime';
import { findDueFinalInvoices, findDueRetries } from '../invoices/read-model';
import { chargeFinalInvoice, endCanceledPeriod } from './renewals/final-invoice';
import { RENEWAL_BATCH_SIZE, renewDue, renewDueBatch } from './renewals/renew';
import { applyDueSchedule } from './switching/schedules';
import { subscriptionAggregate } from '../subscriptions/aggregate';
import type { SubscriptionCommand } from '../subscriptions/decide';
import {
  type ClockScope,
  type DueSubscription,
  findDueRenewals,
  findDueSchedules,
  findEndedCanceledPeriods,
  findEndedTrials,
  findRenewalsUpcoming,
  findTrialsEndingSoon,
} from '../subscriptions/queries';

/**
 * One kind of work that falls due at a time: what finds it, and what does it at `at`. Safe to
 * run concurrently and again: nothing is done for a subscription that is no longer due. `run`
 * answers whether it changed something.
 */
export interface DueWork {
  what: string;
  find: (sql: SqlExecutor, schema: string, by: Date, clock: ClockScope, limit?: number) => Promise<DueSubscription[]>;
  run: (context: ServiceContext, item: DueSubscription, at: Date) => Promise<boolean>;
  /**
   * The same for many subscriptions due at `at` at once, faster; what it hands back is then
   * run one by one. Returns the ids it changed.
   */
  runBatch?: (
    context: ServiceContext,
    items: DueSubscription[],
    at: Date,
  ) => Promise<{ renewed: string[]; leftover: DueSubscription[] }>;
  batchSize?: number;
}

/** A due change that is one command on the subscription. */
const command =
  (make: (subscriptionId: string, now: Date) => SubscriptionCommand) =>
  async (context: ServiceContext, item: DueSubscription, at: Date): Promise<boolean> => {
    const { store } = context;
    const { events } = await subscriptionAggregate.handle(store, item.id, make(item.id, at), {
      organization: item.organization,
      environment: item.environment,
      occurredAt: at,
    });
    return events.length > 0;
  };

/** Every kind of time-driven change of a subscription, in the order they are tried at one instant. */
export const DUE_WORK: readonly DueWork[] = [
  {
    what: 'telling a trial will end',
    find: findTrialsEndingSoon,
    run: command((subscriptionId, now) => ({ type: 'TellTrialWillEnd', data: { subscriptionId, now } })),
  },
  {
    what: 'telling a yearly renewal is upcoming',
    find: findRenewalsUpcoming,
    run: command((subscriptionId, now) => ({ type: 'TellRenewalUpcoming', data: { subscriptionId, now } })),
  },
  {
    what: 'ending a trial',
    find: findEndedTrials,
    run: command((subscriptionId, now) => ({ type: 'EndTrial', data: { subscriptionId, now } })),
  },
  // Its last period's usage is opened as a final invoice before it ends (final-invoice.ts).
  { what: 'ending a canceled period', find: findEndedCanceledPeriods, run: endCanceledPeriod },
  // A plan switch scheduled for the period's end, before the renewal that bills the new plan.
  { what: 'applying a scheduled switch', find: findDueSchedules, run: applyDueSchedule },
  { what: 'renewing', find: findDueRenewals, run: renewDue, runBatch: renewDueBatch, batchSize: RENEWAL_BATCH_SIZE },
  { what: 'retrying a failed renewal', find: findDueRetries, run: renewDue },
  { what: 'charging a final invoice', find: findDueFinalInvoices, run: chargeFinalInvoice },
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

/** One item of due work: what to do, for which subscription, at what time. */
export type DueEntry = { work: DueWork; item: DueSubscription; at: Date };

/** How many batches of one kind run at once (one can charge while another writes). */
const BATCHES_AT_ONCE = 2;

/**
 * Runs due work: a subscription with a single item, of a kind that has `runBatch`, in batches
 * of its kind and time; then the rest, and what the batches handed back, with `run`, up to
 * `concurrency` subscriptions at a time, one subscription's items in their order. Returns the
 * ids changed and the failures.
 */
export async function runDueEntries(context: ServiceContext, entries: DueEntry[], concurrency: number) {
  const changed: string[] = [];
  const itemsOf = new Map<string, number>();
  for (const { item } of entries) itemsOf.set(item.id, (itemsOf.get(item.id) ?? 0) + 1);
  const byKindAndTime = new Map<string, DueEntry[]>();
  const single: DueEntry[] = [];
  for (const entry of entries) {
    if (!entry.work.runBatch || itemsOf.get(entry.item.id) !== 1) {
      single.push(entry);
      continue;
    }
    const key = `${entry.work.what}|${entry.at.getTime()}`;
    const group = byKindAndTime.get(key);
    if (group) group.push(entry);
    else byKindAndTime.set(key, [entry]);
  }
  const queue = [...byKindAndTime.values()].flatMap((group) => {
    const size = group[0]!.work.batchSize ?? 100;
    return Array.from({ length: Math.ceil(group.length / size) }, (_, i) => group.slice(i * size, (i + 1) * size));
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(BATCHES_AT_ONCE, queue.length) }, async () => {
      while (next < queue.length) {
        const batch = queue[next++]!;
        const { work, at } = batch[0]!;
        try {
          const { renewed, leftover } = await work.runBatch!(
            context,
            batch.map((e) => e.item),
            at,
          );
          changed.push(...renewed);
          single.push(...leftover.map((item) => ({ work, item, at })));
        } catch (error) {
          context.logger.warn({ err: error }, `${work.what} in a batch failed; one by one instead`);
          single.push(...batch);
        }
      }
    }),
  );
  const failures = await forEachSubscription(single, concurrency, async ({ work, item, at }) => {
    if (await work.run(context, item, at)) changed.push(item.id);
  });
  return { changed, failures };
}

/**
 * The real-time sweep: everything due by the service clock on subscriptions that are on no
 * test clock, kind by kind (renewals in batches), up to `BILLING_DUE_WORK_CONCURRENCY`
 * subscriptions at a time. A failure is logged and left to the next sweep. Returns the ids it
 * changed.
 */
export async function runDueWork(context: ServiceContext): Promise<string[]> {
  const { store, now, logger } = context;
  const changed: string[] = [];
  const concurrency = dueWorkConcurrency(context);
  for (const work of DUE_WORK) {
    const at = now();
    const items = await work.find(store.database, store.tables.schema, at, null);
    const done = await runDueEntries(
      context,
      items.map((item) => ({ work, item, at })),
      concurrency,
    );
    changed.push(...done.changed);
    for (const { entry, error } of done.failures) {
      logger.error({ err: error, id: entry.item.id }, `${work.what} failed; the next sweep retries`);
    }
  }
  return changed;
}
