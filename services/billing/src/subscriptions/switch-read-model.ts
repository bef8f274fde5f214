import type { SubscriptionSchedule, SubscriptionSwitchStartedData } from '@billing/contracts';
import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';

export const schedulesTable = (schema: string) => `${schema}.subscription_schedules`;
/** One row per subscription whose immediate switch is charging (`SubscriptionSwitchStarted` until it ends). */
export const switchesTable = (schema: string) => `${schema}.subscription_switches`;

export async function migrateSwitchingReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${schedulesTable(schema)} (
      id text PRIMARY KEY,
      subscription_id text NOT NULL,
      organization text NOT NULL,
      environment text NOT NULL,
      status text NOT NULL,
      effective_date timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      document jsonb NOT NULL
    );
    -- The order schedules were made in (a test clock's time can make two at one instant).
    ALTER TABLE ${schedulesTable(schema)} ADD COLUMN IF NOT EXISTS seq bigserial;
    CREATE INDEX IF NOT EXISTS subscription_schedules_by_subscription ON ${schedulesTable(schema)} (subscription_id, created_at DESC);
    CREATE INDEX IF NOT EXISTS subscription_schedules_pending ON ${schedulesTable(schema)} (effective_date) WHERE status = 'pending';
    CREATE TABLE IF NOT EXISTS ${switchesTable(schema)} (
      subscription_id text PRIMARY KEY,
      switch_id text NOT NULL,
      document jsonb NOT NULL
    );
  `);
}

/** Applies switching's events (on subscription streams) in the append's transaction. */
export async function projectSwitching(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  for (const event of events) {
    switch (event.type) {
      case 'SubscriptionScheduleCreated':
      case 'SubscriptionScheduleCanceled':
      case 'SubscriptionScheduleCompleted': {
        const schedule = (event.data as { object: SubscriptionSchedule }).object;
        await sql.query(
          `INSERT INTO ${schedulesTable(schema)}
             (id, subscription_id, organization, environment, status, effective_date, created_at, document)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, document = EXCLUDED.document`,
          [
            schedule.id,
            schedule.subscription_id,
            event.organization,
            event.environment,
            schedule.status,
            schedule.effective_date,
            schedule.created_at,
            JSON.stringify(schedule),
          ],
        );
        break;
      }
      case 'SubscriptionSwitchStarted': {
        const data = event.data as SubscriptionSwitchStartedData;
        await sql.query(
          `INSERT INTO ${switchesTable(schema)} (subscription_id, switch_id, document) VALUES ($1, $2, $3)
           ON CONFLICT (subscription_id) DO UPDATE SET switch_id = EXCLUDED.switch_id, document = EXCLUDED.document`,
          [data.subscription_id, data.switch_id, JSON.stringify(data)],
        );
        break;
      }
      case 'SubscriptionSwitchEnded': {
        const data = event.data as { subscription_id: string; switch_id: string };
        await sql.query(`DELETE FROM ${switchesTable(schema)} WHERE subscription_id = $1 AND switch_id = $2`, [
          data.subscription_id,
          data.switch_id,
        ]);
        break;
      }
    }
  }
}

/** The subscription's pending schedule, else its latest one. */
export async function findSchedule(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  subscriptionId: string,
): Promise<SubscriptionSchedule | undefined> {
  const { rows } = await sql.query<{ document: SubscriptionSchedule }>(
    `SELECT document FROM ${schedulesTable(schema)}
     WHERE subscription_id = $1 AND organization = $2 AND environment = $3
     ORDER BY (status = 'pending') DESC, seq DESC LIMIT 1`,
    [subscriptionId, tenant.organization, tenant.environment],
  );
  return rows[0]?.document;
}

/**
 * Whether an immediate switch of the subscription is charging. Renewals ask it in the
 * transaction that opens their invoice, after locking the subscription's row, as the switch
 * locks it to start (`engine/switching/commands.ts`): one of the two goes first, the other sees it.
 */
export async function switchUnderWay(sql: SqlExecutor, schema: string, subscriptionId: string): Promise<boolean> {
  const { rows } = await sql.query(`SELECT 1 FROM ${switchesTable(schema)} WHERE subscription_id = $1`, [
    subscriptionId,
  ]);
  return rows.length > 0;
}
