import type { SqlExecutor } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { ClockScope, DueSubscription } from '../subscriptions/queries';
import { subscriptionsTable } from '../subscriptions/read-model';
import { onSubscription } from './perform';
import { schedulesTable } from './read-model';

/** Subscriptions whose pending schedule's effective date has come by `now` on a clock, the earliest first. */
export async function findDueSchedules(
  sql: SqlExecutor,
  schema: string,
  now: Date,
  clock: ClockScope = null,
  limit = 500,
): Promise<DueSubscription[]> {
  const { rows } = await sql.query<DueSubscription>(
    `SELECT s.id, s.organization, s.environment, sc.effective_date AS due_at
     FROM ${schedulesTable(schema)} sc JOIN ${subscriptionsTable(schema)} s ON s.id = sc.subscription_id
     WHERE sc.status = 'pending' AND sc.effective_date <= $1 AND s.test_clock_id IS NOT DISTINCT FROM $2
     ORDER BY sc.effective_date LIMIT $3`,
    [now.toISOString(), clock, limit],
  );
  return rows;
}

/**
 * Applies the subscription's pending schedule (the plan changes, periods of the new plan count
 * from the effective date), before the renewal due at the same instant, which then bills the
 * new plan. A subscription canceled or canceling meanwhile has its schedule canceled instead.
 */
export async function applyDueSchedule(context: ServiceContext, item: DueSubscription, at: Date): Promise<boolean> {
  const { events } = await onSubscription(
    context,
    { organization: item.organization, environment: item.environment },
    { type: 'ApplySchedule', data: { subscriptionId: item.id, now: at } },
  );
  return events.length > 0;
}
