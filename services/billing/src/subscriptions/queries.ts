import { LIVE_SUBSCRIPTION_STATUSES, Subscription, inSchemaOrder, notFound, unknownCursor } from '@billing/contracts';
import { type SqlExecutor, createdBetween, cursorAfter, keysetPage } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { subscriptionsTable } from './read-model';
import { schedulesTable } from './switch-read-model';
import type { Tenant } from '@billing/service';

export async function findSubscription(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  id: string,
): Promise<Subscription | undefined> {
  const { rows } = await sql.query<{ document: Subscription }>(
    `SELECT document FROM ${subscriptionsTable(schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0]?.document;
}

/** The subscription as the API answers it (fields in schema order); `404` when the tenant has no such subscription. */
export async function currentSubscription(context: ServiceContext, tenant: Tenant, id: string): Promise<Subscription> {
  const subscription = await findSubscription(context.store.database, context.store.tables.schema, tenant, id);
  if (!subscription) throw notFound(`No such subscription: ${id}`);
  return inSchemaOrder(Subscription, subscription);
}

/** Newest first (`created_at` desc, then `id` desc), cursor-paged by the last id seen. */
export async function listSubscriptions(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  page: {
    limit: number;
    starting_after?: string;
    customer_id?: string;
    status?: Subscription['status'];
    /** The dashboard's range: created at or after `from`, before `to` (ISO instants). */
    from?: string;
    to?: string;
  },
): Promise<{ subscriptions: Subscription[]; hasMore: boolean }> {
  const after = await cursorAfter(
    page.starting_after,
    (id) => findSubscription(sql, schema, tenant, id),
    (id) => unknownCursor(id, 'subscription'),
  );
  const { rows, hasMore } = await keysetPage<{ document: Subscription }>(sql, {
    from: subscriptionsTable(schema),
    select: 'document',
    where: {
      organization: tenant.organization,
      environment: tenant.environment,
      customer_id: page.customer_id,
      status: page.status,
    },
    filters: createdBetween(undefined, page),
    after,
    limit: page.limit,
  });
  return { subscriptions: rows.map((row) => inSchemaOrder(Subscription, row.document)), hasMore };
}

/** The customer's ACTIVE, TRIAL and PAST_DUE subscriptions, newest first, optionally to one product. */
export async function liveSubscriptions(
  sql: SqlExecutor,
  schema: string,
  customerId: string,
  productId?: string,
): Promise<Subscription[]> {
  const { rows } = await sql.query<{ document: Subscription }>(
    `SELECT document FROM ${subscriptionsTable(schema)}
     WHERE customer_id = $1 AND status = ANY($2::text[]) AND ($3::text IS NULL OR product_id = $3::text)
     ORDER BY created_at DESC, id DESC`,
    [customerId, LIVE_SUBSCRIPTION_STATUSES, productId ?? null],
  );
  return rows.map((r) => r.document);
}

/** A subscription that falls due, and when (by its clock). */
export type DueSubscription = { id: string; organization: string; environment: Tenant['environment']; due_at: Date };

/**
 * Which subscriptions' time a sweep reads: those on real time (`null`), or those on one Sandbox
 * test clock.
 */
export type ClockScope = string | null;

/**
 * Finds subscriptions due by `now` on a clock: those matching `where`, due at `dueAt` (a
 * document field, an SQL expression, or `{ column }` of the table), the earliest first.
 */
function dueFinder(where: string, dueAt: string | { column: string }) {
  return async (sql: SqlExecutor, schema: string, now: Date, clock: ClockScope = null, limit = 500) => {
    const due =
      typeof dueAt === 'object'
        ? dueAt.column
        : /^[a-z_]+$/.test(dueAt)
          ? `(document->>'${dueAt}')::timestamptz`
          : `(${dueAt})`;
    const { rows } = await sql.query<DueSubscription>(
      `SELECT id, organization, environment, ${due} AS due_at FROM ${subscriptionsTable(schema)}
       WHERE ${where} AND ${due} <= $1 AND test_clock_id IS NOT DISTINCT FROM $2
       ORDER BY ${due} LIMIT $3`,
      [now.toISOString(), clock, limit],
    );
    return rows;
  };
}

/**
 * TRIAL subscriptions whose `trial_end` has come, when the trial ran inside a paid first
 * period; a trial that is the first period ends with its renewal instead (engine/renewals/).
 */
export const findEndedTrials = dueFinder(
  `status = 'TRIAL' AND (document->>'trial_end')::timestamptz < (document->>'current_period_end')::timestamptz`,
  'trial_end',
);

/** Subscriptions canceled at period end whose `current_period_end` has come. */
export const findEndedCanceledPeriods = dueFinder(
  `status <> 'CANCELED' AND (document->>'cancel_at_period_end')::boolean`,
  'current_period_end',
);

/**
 * ACTIVE and TRIAL subscriptions, not canceling, whose period has ended: due to renew. A range of
 * the `subscriptions_due_renewal` index (`period_end`), however many subscriptions there are.
 */
export const findDueRenewals = dueFinder(
  `status IN ('ACTIVE', 'TRIAL') AND NOT (document->>'cancel_at_period_end')::boolean`,
  { column: 'period_end' },
);

/**
 * TRIAL subscriptions whose trial ends within 3 days (`TRIAL_WILL_END_NOTICE_MS`) and whose
 * `subscription.trial_will_end` was not sent for this `trial_end`: due 3 days before it (or at
 * creation, for a subscription made before short trials were told at once).
 */
export const findTrialsEndingSoon = dueFinder(
  `status = 'TRIAL' AND document->>'trial_end' IS NOT NULL
   AND trial_will_end_sent_for IS DISTINCT FROM (document->>'trial_end')::timestamptz`,
  `GREATEST((document->>'trial_end')::timestamptz - interval '3 days', created_at)`,
);

/**
 * ACTIVE yearly subscriptions, not canceling, whose period ends within 7 days
 * (`RENEWAL_UPCOMING_NOTICE_MS`) and whose `subscription.renewal_upcoming` was not sent for this
 * period: due 7 days before its end. A range of the `subscriptions_yearly_renewal` index.
 */
export async function findRenewalsUpcoming(
  sql: SqlExecutor,
  schema: string,
  now: Date,
  clock: ClockScope = null,
  limit = 500,
): Promise<DueSubscription[]> {
  const { rows } = await sql.query<DueSubscription>(
    `SELECT id, organization, environment, period_end - interval '7 days' AS due_at FROM ${subscriptionsTable(schema)}
     WHERE status = 'ACTIVE' AND document->>'interval' = 'year' AND period_end <= $1::timestamptz + interval '7 days'
       AND NOT (document->>'cancel_at_period_end')::boolean
       AND renewal_upcoming_sent_for IS DISTINCT FROM period_end
       AND test_clock_id IS NOT DISTINCT FROM $2
     ORDER BY period_end LIMIT $3`,
    [now.toISOString(), clock, limit],
  );
  return rows;
}

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
