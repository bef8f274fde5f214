import type { Environment, Subscription } from '@billing/contracts';
import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import { recordMetricsChanges } from '@billing/runtime';
import { subscriptionMetricsChange } from './metrics';
import { projectSwitching } from './switch-read-model';
import { subscriptionEvents } from './subscription';

export const subscriptionsTable = (schema: string) => `${schema}.subscriptions`;

export async function migrateSubscriptionsReadModel(store: EventStore): Promise<void> {
  const table = subscriptionsTable(store.tables.schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${table} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      customer_id text NOT NULL,
      product_id text NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      stream_version integer NOT NULL,
      document jsonb NOT NULL
    );
    CREATE INDEX IF NOT EXISTS subscriptions_newest_first ON ${table} (organization, environment, created_at DESC, id DESC);
    -- The dashboard's list by status: a page is a range of it, however many subscriptions of other statuses.
    CREATE INDEX IF NOT EXISTS subscriptions_by_status ON ${table} (organization, environment, status, created_at DESC, id DESC);
    CREATE INDEX IF NOT EXISTS subscriptions_customer ON ${table} (customer_id, product_id);
    CREATE INDEX IF NOT EXISTS subscriptions_in_trial ON ${table} (id) WHERE status = 'TRIAL';
    -- Sandbox test clocks: subscriptions on one live on its time, not the service clock's.
    ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS test_clock_id text;
    CREATE INDEX IF NOT EXISTS subscriptions_test_clock ON ${table} (test_clock_id) WHERE test_clock_id IS NOT NULL;
    CREATE INDEX IF NOT EXISTS subscriptions_canceling ON ${table} (id)
      WHERE status <> 'CANCELED' AND (document->>'cancel_at_period_end')::boolean;
    -- The trial_end that subscription.trial_will_end was sent for.
    ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS trial_will_end_sent_for timestamptz;
    -- current_period_end as a column, so that the due renewals are an index range: the text in the
    -- document cannot be indexed as a time (its cast depends on the session's time zone).
    ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS period_end timestamptz;
    UPDATE ${table} SET period_end = (document->>'current_period_end')::timestamptz
      WHERE period_end IS NULL AND document->>'current_period_end' IS NOT NULL;
    CREATE INDEX IF NOT EXISTS subscriptions_due_renewal ON ${table} (period_end) WHERE status IN ('ACTIVE', 'TRIAL');
    -- The period end that subscription.renewal_upcoming was sent for; yearly ones found by their period's end.
    ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS renewal_upcoming_sent_for timestamptz;
    CREATE INDEX IF NOT EXISTS subscriptions_yearly_renewal ON ${table} (period_end)
      WHERE status = 'ACTIVE' AND document->>'interval' = 'year';
  `);
}

/** Applies subscription events in the append's transaction; replays are skipped by stream version. */
export async function projectSubscriptions(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const table = subscriptionsTable(schema);
  for (const recorded of events) {
    const event = subscriptionEvents.of(recorded);
    if (!event) continue;
    switch (event.type) {
      case 'SubscriptionActivated': {
        const s = event.data.object;
        const inserted = await sql.query(
          `INSERT INTO ${table} (id, organization, environment, customer_id, product_id, status, created_at, stream_version,
             document, test_clock_id, period_end)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (id) DO NOTHING RETURNING id`,
          [
            s.id,
            event.data.organization,
            event.data.environment,
            s.customer_id,
            s.product.id,
            s.status,
            s.created_at,
            recorded.stream_version,
            JSON.stringify(s),
            s.test_clock ?? null,
            s.current_period_end,
          ],
        );
        if (inserted.rows.length > 0) {
          await recordMetricsChanges(sql, schema, event.data, subscriptionMetricsChange(null, s));
        }
        break;
      }
      case 'SubscriptionUpdated':
      case 'SubscriptionCanceled':
      case 'SubscriptionRenewed':
      case 'SubscriptionPastDue': {
        const s = event.data.object;
        // The row as it was (the join reads the version before the update), for the metrics' change.
        const updated = await sql.query<{ organization: string; environment: Environment; before: Subscription }>(
          `UPDATE ${table} SET status = $2, product_id = $3, document = $4, stream_version = $5, period_end = $6
           FROM ${table} AS previous
           WHERE ${table}.id = $1 AND previous.id = $1 AND ${table}.stream_version < $5
           RETURNING previous.organization, previous.environment, previous.document AS before`,
          [s.id, s.status, s.product.id, JSON.stringify(s), recorded.stream_version, s.current_period_end],
        );
        const row = updated.rows[0];
        if (row) await recordMetricsChanges(sql, schema, row, subscriptionMetricsChange(row.before, s));
        break;
      }
      case 'SubscriptionTrialWillEnd':
        await sql.query(
          `UPDATE ${table} SET trial_will_end_sent_for = $2, stream_version = $3 WHERE id = $1 AND stream_version < $3`,
          [event.data.subscription_id, event.data.trial_end, recorded.stream_version],
        );
        break;
      case 'SubscriptionRenewalUpcoming':
        await sql.query(
          `UPDATE ${table} SET renewal_upcoming_sent_for = $2, stream_version = $3 WHERE id = $1 AND stream_version < $3`,
          [event.data.subscription_id, event.data.renews_at, recorded.stream_version],
        );
        break;
      case 'DuplicateSubscriptionPaid':
        break;
    }
  }
  // Schedules and switches under way (switch-read-model.ts), from the same streams.
  await projectSwitching(sql, schema, events);
}
