import type { ServiceContext } from '@billing/runtime';
import { DUE_WORK, dueWorkConcurrency, runDueEntries } from './due-work';
import type { DueSubscription } from '../subscriptions/queries';
import { testClockAggregate } from '../test-clocks/aggregate';
import { findAdvancingClocks } from '../test-clocks/read-model';

type ClockRef = { id: string; organization: string; environment: 'SANDBOX' | 'PRODUCTION' };

/**
 * Runs what falls due on a clock up to its advance's target, in the order it falls due, each at
 * its own due time (so events carry the clock's time), then marks the clock ready at the target.
 * What falls due at one instant runs together (`runDueEntries`: renewals in batches, the rest up
 * to `BILLING_DUE_WORK_CONCURRENCY` subscriptions at a time, each subscription's items in the
 * order of `DUE_WORK`); the next instant starts when it is done. A failing item stops the run (after the items already
 * started); the clock stays `advancing` and the sweep (or the next start) runs it again.
 */
export async function runClock(context: ServiceContext, clock: ClockRef): Promise<void> {
  const { store } = context;
  const target = await targetOf(context, clock);
  if (!target) return;
  const concurrency = dueWorkConcurrency(context);
  const done = new Set<string>();
  for (;;) {
    const due = await dueAtEarliest(context, clock.id, target);
    if (due.length === 0) break;
    for (const { work, item } of due) {
      const key = `${work.what}:${item.id}:${new Date(item.due_at).toISOString()}`;
      if (done.has(key)) throw new Error(`${work.what} of ${item.id} stays due on ${clock.id}`);
      done.add(key);
    }
    const entries = due.map(({ work, item }) => ({ work, item, at: new Date(item.due_at) }));
    const { failures } = await runDueEntries(context, entries, concurrency);
    if (failures.length > 0) throw failures[0]!.error;
  }
  const finish = { type: 'FinishAdvance' as const, data: { clockId: clock.id, targetTime: target } };
  await testClockAggregate.handle(store, clock.id, finish, {
    organization: clock.organization,
    environment: clock.environment,
    occurredAt: target,
  });
}

/** The advance's target time, or null when the clock is not advancing. */
async function targetOf(context: ServiceContext, clock: ClockRef): Promise<Date | null> {
  const state = testClockAggregate.fold(await context.store.readStream(testClockAggregate.stream(clock.id)));
  return state.status === 'Existing' && state.targetTime && !state.deleted ? new Date(state.targetTime) : null;
}

/** How many items of one kind one step of an advance takes at most. */
const STEP_LIMIT = 500;

/**
 * Everything due on the clock at the earliest instant anything is due (up to `STEP_LIMIT` of
 * each kind), in the order of `DUE_WORK`.
 */
async function dueAtEarliest(context: ServiceContext, clockId: string, target: Date) {
  const { store } = context;
  const found: Array<{ work: (typeof DUE_WORK)[number]; item: DueSubscription }> = [];
  for (const work of DUE_WORK) {
    for (const item of await work.find(store.database, store.tables.schema, target, clockId, STEP_LIMIT)) {
      found.push({ work, item });
    }
  }
  const earliest = Math.min(...found.map(({ item }) => new Date(item.due_at).getTime()));
  return found.filter(({ item }) => new Date(item.due_at).getTime() === earliest);
}

/** Advances this service is running, by clock id: awaited on shutdown, and never run twice at once here. */
const runs = new WeakMap<ServiceContext, Map<string, Promise<void>>>();

function runsOf(context: ServiceContext): Map<string, Promise<void>> {
  let inProcess = runs.get(context);
  if (!inProcess) runs.set(context, (inProcess = new Map()));
  return inProcess;
}

/**
 * Runs the clock's advance in the background, or joins the run this process has under way. A
 * failure is logged; the clock stays `advancing` for the sweep to run again.
 */
export function startClockRun(context: ServiceContext, clock: ClockRef): Promise<void> {
  const inProcess = runsOf(context);
  const current = inProcess.get(clock.id);
  if (current) return current;
  const run = runClock(context, clock)
    .catch((err) => context.logger.error({ err, clock: clock.id }, 'advancing a test clock failed; the sweep retries'))
    .finally(() => inProcess.delete(clock.id));
  inProcess.set(clock.id, run);
  return run;
}

export async function drainClockRuns(context: ServiceContext): Promise<void> {
  await Promise.allSettled([...runsOf(context).values()]);
}

/**
 * Runs again, one after another, the clocks left `advancing` by a restart, a crash or a failed
 * item: at start-up (so a restart during an advance does not leave the clock waiting for the
 * sweep) and on every sweep.
 */
export async function resumeAdvancingClocks(context: ServiceContext): Promise<void> {
  const { store } = context;
  for (const clock of await findAdvancingClocks(store.database, store.tables.schema)) {
    await startClockRun(context, clock);
  }
}
