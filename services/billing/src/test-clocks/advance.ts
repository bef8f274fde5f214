import { handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { DUE_WORK } from '../subscriptions/due-work';
import type { DueSubscription } from '../subscriptions/queries';
import { testClockAggregate, testClockStream } from './clock';
import { findAdvancingClocks, projectTestClocks } from './read-model';

type ClockRef = { id: string; organization: string; environment: 'SANDBOX' | 'PRODUCTION' };

/**
 * Runs what falls due on a clock up to its advance's target, one item at a time in the order
 * it falls due, each at its own due time (so events carry the clock's time), then marks the
 * clock ready at the target. A failing item stops the run; the clock stays `advancing` and the
 * sweep runs it again.
 */
export async function runClock(context: ServiceContext, clock: ClockRef): Promise<void> {
  const { store } = context;
  const { schema } = store.tables;
  const target = await targetOf(context, clock);
  if (!target) return;
  const done = new Set<string>();
  for (;;) {
    const next = await earliestDue(context, clock.id, target);
    if (!next) break;
    const key = `${next.work.what}:${next.item.id}:${new Date(next.item.due_at).toISOString()}`;
    if (done.has(key)) throw new Error(`${next.work.what} of ${next.item.id} stays due on ${clock.id}`);
    done.add(key);
    await next.work.run(context, next.item, new Date(next.item.due_at));
  }
  const finish = { type: 'FinishAdvance' as const, data: { clockId: clock.id, targetTime: target } };
  await handleCommand(store, testClockStream(clock.id), testClockAggregate, finish, {
    organization: clock.organization,
    environment: clock.environment,
    occurredAt: target,
    project: (tx, e) => projectTestClocks(tx, schema, e),
  });
}

/** The advance's target time, or null when the clock is not advancing. */
async function targetOf(context: ServiceContext, clock: ClockRef): Promise<Date | null> {
  const events = await context.store.readStream(testClockStream(clock.id));
  const state = events.reduce(testClockAggregate.evolve, testClockAggregate.initialState());
  return state.status === 'Existing' && state.targetTime && !state.deleted ? new Date(state.targetTime) : null;
}

async function earliestDue(context: ServiceContext, clockId: string, target: Date) {
  const { store } = context;
  let earliest: { work: (typeof DUE_WORK)[number]; item: DueSubscription } | null = null;
  for (const work of DUE_WORK) {
    const [item] = await work.find(store.database, store.tables.schema, target, clockId, 1);
    if (item && (!earliest || new Date(item.due_at) < new Date(earliest.item.due_at))) earliest = { work, item };
  }
  return earliest;
}

/** After a crash (or a failed item), clocks left `advancing` are run again by the sweep. */
export async function resumeAdvancingClocks(context: ServiceContext): Promise<void> {
  const { store, logger } = context;
  for (const clock of await findAdvancingClocks(store.database, store.tables.schema)) {
    await runClock(context, clock).catch((err) =>
      logger.error({ err, clock: clock.id }, 'advancing a test clock failed'),
    );
  }
}
