import type { IncompleteSubscription, ScheduledPlan } from '@billing/contracts';
import type { EventStore, SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { pendingChargesTable } from '../charges/pending';

// What direct creation keeps (docs/plan-switching.md, "Creating a subscription directly"): the
// INCOMPLETE subscriptions waiting for their hosted page, and short claims that keep two
// creations of one customer's subscription to one product from both charging.

const incompleteTable = (schema: string) => `${schema}.incomplete_subscriptions`;
const creationsTable = (schema: string) => `${schema}.subscription_creations`;
/** A claim older than this was left by a crash: it no longer blocks. */
const CLAIM_TTL_SECONDS = 60;

export type IncompleteRecord = IncompleteSubscription & {
  plan: ScheduledPlan & { trial_days: number | null };
  trial_days: number;
  promotion_code: string | null;
};

export async function migrateDirectCreationReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${incompleteTable(schema)} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      checkout_session_id text NOT NULL,
      document jsonb NOT NULL
    );
    CREATE TABLE IF NOT EXISTS ${creationsTable(schema)} (
      customer_id text NOT NULL,
      product_id text NOT NULL,
      subscription_id text NOT NULL,
      claimed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (customer_id, product_id)
    );
  `);
}

export async function recordIncomplete(sql: SqlExecutor, schema: string, tenant: Tenant, record: IncompleteRecord) {
  await sql.query(
    `INSERT INTO ${incompleteTable(schema)} (id, organization, environment, checkout_session_id, document)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`,
    [record.id, tenant.organization, tenant.environment, record.checkout_session_id, JSON.stringify(record)],
  );
}

export async function findIncomplete(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  id: string,
): Promise<IncompleteRecord | undefined> {
  const { rows } = await sql.query<{ document: IncompleteRecord }>(
    `SELECT document FROM ${incompleteTable(schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, tenant.organization, tenant.environment],
  );
  return rows[0]?.document;
}

/**
 * Claims the creation of the customer's subscription to the product for `subscriptionId`
 * (the same id may claim again: a retried `complete`); false while another holds it.
 */
export async function claimCreation(
  sql: SqlExecutor,
  schema: string,
  _tenant: Tenant,
  customerId: string,
  productId: string,
  subscriptionId: string,
): Promise<boolean> {
  const { rows } = await sql.query<{ subscription_id: string }>(
    `INSERT INTO ${creationsTable(schema)} (customer_id, product_id, subscription_id) VALUES ($1, $2, $3)
     ON CONFLICT (customer_id, product_id) DO UPDATE SET subscription_id = EXCLUDED.subscription_id, claimed_at = now()
       WHERE ${creationsTable(schema)}.subscription_id = EXCLUDED.subscription_id
          OR (${creationsTable(schema)}.claimed_at < now() - interval '${CLAIM_TTL_SECONDS} seconds'
              -- a claim whose first charge has no known outcome holds until the reconciler ends it
              AND NOT EXISTS (SELECT 1 FROM ${pendingChargesTable(schema)} p
                               WHERE p.subject = ${creationsTable(schema)}.subscription_id))
     RETURNING subscription_id`,
    [customerId, productId, subscriptionId],
  );
  return rows.length > 0;
}

export async function releaseCreation(
  sql: SqlExecutor,
  schema: string,
  customerId: string,
  productId: string,
  subscriptionId: string,
) {
  await sql.query(
    `DELETE FROM ${creationsTable(schema)} WHERE customer_id = $1 AND product_id = $2 AND subscription_id = $3`,
    [customerId, productId, subscriptionId],
  );
}
